import {prng} from "../../../bench/seededRandom.ts";
import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";
import {SLOTS_PER_EPOCH, cp} from "./fixtures.ts";

/** A seeded integer source: rand(n) is in [0, n). */
export type Rand = (n: number) => number;

export function seededInts(seed: number): Rand {
  const next = prng(seed);
  return (n: number) => Math.floor(next() * n);
}

export function epochOf(slot: number): number {
  return Math.floor(slot / SLOTS_PER_EPOCH);
}

/** Justified balances that differ per checkpoint, some validators inactive (0). */
export function balancesOf(checkpoint: CheckpointHex, validators: number): number[] {
  const salt = parseInt(checkpoint.root.slice(-6), 16) + checkpoint.epoch * 7919;
  return Array.from({length: validators}, (_, i) => (((salt + i * 2654435761) >>> 0) % 40 < 4 ? 0 : 16 + (((salt >>> 3) + i * 97) % 17)));
}

/**
 * A block whose checkpoints are plausible for its chain: non-decreasing from its parent's,
 * realized behind unrealized, each root the block's own checkpoint block at that epoch
 * (`ancestorAt(root, slot)` is spec get_ancestor on the tree built so far). Given
 * `justifiedRoots` (epoch to root, shared by the blocks of one tree and filled in here), no two
 * branches justify different roots at one epoch: that takes a third of the stake slashable.
 */
export function randomBlock(
  rand: Rand,
  ancestorAt: (root: string, slot: number) => string | null,
  parent: ProtoBlock,
  slot: number,
  blockRoot: string,
  justifiedRoots?: Map<number, string>
): ProtoBlock {
  const epoch = epochOf(slot);
  const checkpointAt = (e: number): CheckpointHex => {
    const start = e * SLOTS_PER_EPOCH;
    return cp(e, slot <= start ? blockRoot : (ancestorAt(parent.blockRoot, start) as string));
  };
  const allowed = (e: number) => justifiedRoots === undefined || e === 0 || (justifiedRoots.get(e) ?? checkpointAt(e).root) === checkpointAt(e).root;
  const between = (lo: number, hi: number) => {
    let e = hi <= lo ? lo : lo + rand(hi - lo + 1);
    while (e > lo && !allowed(e)) e--;
    return e;
  };
  // an epoch transition realizes what the parent's state had pulled up
  const newEpoch = epoch > epochOf(parent.slot);
  const baseJustified = newEpoch ? parent.unrealizedJustifiedCheckpoint.epoch : parent.justifiedCheckpoint.epoch;
  const baseFinalized = newEpoch ? parent.unrealizedFinalizedCheckpoint.epoch : parent.finalizedCheckpoint.epoch;
  // and only an epoch transition changes the realized checkpoints
  const justifiedEpoch = newEpoch && rand(3) === 0 ? between(baseJustified, Math.max(0, epoch - 1)) : baseJustified;
  const finalizedEpoch = newEpoch && rand(3) === 0 ? between(baseFinalized, Math.max(0, justifiedEpoch - 1)) : baseFinalized;
  // within an epoch, attestations only accumulate: the pulled-up checkpoints never fall behind the parent's
  const leastUnrealizedJustified = Math.max(justifiedEpoch, newEpoch ? 0 : parent.unrealizedJustifiedCheckpoint.epoch);
  const leastUnrealizedFinalized = Math.max(finalizedEpoch, newEpoch ? 0 : parent.unrealizedFinalizedCheckpoint.epoch);
  const unrealizedJustifiedEpoch = rand(2) === 0 ? between(leastUnrealizedJustified, epoch) : leastUnrealizedJustified;
  const unrealizedFinalizedEpoch =
    rand(3) === 0 ? between(leastUnrealizedFinalized, Math.max(leastUnrealizedFinalized, unrealizedJustifiedEpoch - 1)) : leastUnrealizedFinalized;
  for (const e of [justifiedEpoch, unrealizedJustifiedEpoch]) if (e > 0) justifiedRoots?.set(e, checkpointAt(e).root);
  return {
    slot,
    blockRoot,
    parentRoot: parent.blockRoot,
    stateRoot: blockRoot,
    targetRoot: checkpointAt(epoch).root,
    justifiedCheckpoint: checkpointAt(justifiedEpoch),
    finalizedCheckpoint: checkpointAt(Math.min(finalizedEpoch, justifiedEpoch)),
    unrealizedJustifiedCheckpoint: checkpointAt(unrealizedJustifiedEpoch),
    unrealizedFinalizedCheckpoint: checkpointAt(Math.min(unrealizedFinalizedEpoch, unrealizedJustifiedEpoch)),
    executionBlockHash: null,
  };
}
