/** Roots everywhere in fork choice are lowercase 0x-prefixed hex strings (callers convert). */
export interface CheckpointHex {
  epoch: number;
  root: string;
}

export interface ProtoBlock {
  slot: number;
  blockRoot: string;
  parentRoot: string;
  stateRoot: string;
  /** root of the block at the start of this block's epoch (the epoch boundary block) */
  targetRoot: string;
  /** the block's post-state current_justified_checkpoint */
  justifiedCheckpoint: CheckpointHex;
  /** the block's post-state finalized_checkpoint */
  finalizedCheckpoint: CheckpointHex;
  /** current_justified_checkpoint after process_justification_and_finalization on the post-state (pull-up tip) */
  unrealizedJustifiedCheckpoint: CheckpointHex;
  unrealizedFinalizedCheckpoint: CheckpointHex;
  /** null before the merge */
  executionBlockHash: string | null;
}

export interface ForkChoiceOptions {
  slotsPerEpoch: number;
  secondsPerSlot: number;
  /** spec PROPOSER_SCORE_BOOST, a percentage of one slot's committee weight (40) */
  proposerScoreBoostPercent: number;
}

export type ExecutionValidity = "valid" | "optimistic" | "invalid";

export type ProtoNodeView = ProtoBlock & {weight: number; validity: ExecutionValidity};

export type ForkChoiceErrorCode =
  | "INVALID_ANCHOR"
  | "PARENT_UNKNOWN"
  | "FUTURE_SLOT"
  | "NOT_LATER_THAN_PARENT"
  | "WOULD_REVERT_FINALIZED"
  | "JUSTIFIED_NODE_UNKNOWN"
  | "FINALIZED_NODE_UNKNOWN"
  | "INVALID_DELTAS"
  | "NEGATIVE_WEIGHT";

export class ForkChoiceError extends Error {
  readonly code: ForkChoiceErrorCode;

  constructor(code: ForkChoiceErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "ForkChoiceError";
    this.code = code;
  }
}

export function computeEpochAtSlot(slot: number, slotsPerEpoch: number): number {
  return Math.floor(slot / slotsPerEpoch);
}

export function computeStartSlotAtEpoch(epoch: number, slotsPerEpoch: number): number {
  return epoch * slotsPerEpoch;
}
