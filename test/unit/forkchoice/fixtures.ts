import {ForkChoice, type CheckpointHex, type ForkChoiceOptions, type ProtoBlock} from "../../../src/forkchoice/index.ts";

export const SLOTS_PER_EPOCH = 8;
export const OPTS: ForkChoiceOptions = {slotsPerEpoch: SLOTS_PER_EPOCH, secondsPerSlot: 6, proposerScoreBoostPercent: 40};
/** 32 validators of 32 increments: total 1024, committee weight 128, proposer boost 51 (more than one vote, less than two) */
export const VALIDATOR_COUNT = 32;
export const BALANCE = 32;
export const PROPOSER_BOOST = 51;

/** A root whose lexicographic order follows `n`. */
export function root(n: number): string {
  return "0x" + n.toString(16).padStart(64, "0");
}

export const GENESIS = root(0x100);

export function cp(epoch: number, checkpointRoot: string): CheckpointHex {
  return {epoch, root: checkpointRoot};
}

export interface BlockSpec {
  slot: number;
  root: string;
  parent: string;
  justified?: CheckpointHex;
  finalized?: CheckpointHex;
  /** defaults to `justified` */
  unrealizedJustified?: CheckpointHex;
  /** defaults to `finalized` */
  unrealizedFinalized?: CheckpointHex;
}

export function makeBlock(spec: BlockSpec): ProtoBlock {
  const justified = spec.justified ?? cp(0, GENESIS);
  const finalized = spec.finalized ?? cp(0, GENESIS);
  return {
    slot: spec.slot,
    blockRoot: spec.root,
    parentRoot: spec.parent,
    stateRoot: "0x" + spec.root.slice(2).split("").reverse().join(""),
    targetRoot: spec.root,
    justifiedCheckpoint: justified,
    finalizedCheckpoint: finalized,
    unrealizedJustifiedCheckpoint: spec.unrealizedJustified ?? justified,
    unrealizedFinalizedCheckpoint: spec.unrealizedFinalized ?? finalized,
    executionBlockHash: null,
  };
}

export function genesisBlock(): ProtoBlock {
  return makeBlock({slot: 0, root: GENESIS, parent: root(0)});
}

export interface TestForkChoice {
  fc: ForkChoice;
  /** every checkpoint getJustifiedBalances was asked for, in order */
  balanceRequests: CheckpointHex[];
}

export function createForkChoice(
  currentSlot: number,
  opts: {anchor?: ProtoBlock; balances?: (checkpoint: CheckpointHex) => number[]} = {}
): TestForkChoice {
  const balanceRequests: CheckpointHex[] = [];
  const balances = opts.balances ?? (() => new Array<number>(VALIDATOR_COUNT).fill(BALANCE));
  const fc = new ForkChoice({
    anchor: opts.anchor ?? genesisBlock(),
    currentSlot,
    opts: OPTS,
    getJustifiedBalances: (checkpoint) => {
      balanceRequests.push({...checkpoint});
      return balances(checkpoint);
    },
  });
  return {fc, balanceRequests};
}

export function addBlocks(fc: ForkChoice, specs: BlockSpec[], isTimely = false): void {
  for (const spec of specs) fc.onBlock(makeBlock(spec), {isTimely});
}

export function vote(fc: ForkChoice, validators: number[], blockRoot: string, targetEpoch: number, slot?: number): void {
  for (const validatorIndex of validators) fc.onAttestation(validatorIndex, blockRoot, targetEpoch, slot);
}

export function weightOf(fc: ForkChoice, blockRoot: string): number {
  const node = fc.getAllNodes().find((n) => n.blockRoot === blockRoot);
  if (!node) throw new Error(`no node ${blockRoot}`);
  return node.weight;
}
