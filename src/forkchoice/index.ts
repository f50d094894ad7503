export {ForkChoice, type ForkChoiceInit, type OnBlockOpts} from "./forkChoice.ts";
export {
  ForkChoiceError,
  type CheckpointHex,
  type ExecutionValidity,
  type ForkChoiceErrorCode,
  type ForkChoiceOptions,
  type ProtoBlock,
  type ProtoNodeView,
} from "./types.ts";
