/**
 * A validator's latest message as node indices: `currentIndex` is where its weight sits in the
 * proto-array now, `nextIndex` where its latest message says it should sit. `null` = nowhere
 * (no vote yet, or the block was pruned).
 */
export interface VoteTracker {
  currentIndex: number | null;
  nextIndex: number | null;
  /** target epoch of the latest message (spec LatestMessage.epoch) */
  nextEpoch: number;
}

/**
 * Weight change per node since the last call: each vote moves its validator's old balance off
 * `currentIndex` and its new balance onto `nextIndex`. Only the node a vote points at changes;
 * the proto-array carries the change up to the ancestors. Equivocating validators' weight is
 * taken off and never put back (spec get_weight skips `store.equivocating_indices`).
 *
 * Mutates `votes`: afterwards every vote's weight sits where it points.
 */
export function computeDeltas(
  nodeCount: number,
  votes: Array<VoteTracker | undefined>,
  oldBalances: readonly number[],
  newBalances: readonly number[],
  equivocatingIndices: ReadonlySet<number>
): number[] {
  const deltas = new Array<number>(nodeCount).fill(0);
  for (let validatorIndex = 0; validatorIndex < votes.length; validatorIndex++) {
    const vote = votes[validatorIndex];
    if (vote === undefined) continue;
    const {currentIndex, nextIndex} = vote;
    const oldBalance = oldBalances[validatorIndex] ?? 0;

    if (equivocatingIndices.has(validatorIndex)) {
      if (currentIndex !== null) deltas[currentIndex] -= oldBalance;
      vote.currentIndex = null;
      vote.nextIndex = null;
      continue;
    }

    const newBalance = newBalances[validatorIndex] ?? 0;
    if (currentIndex === nextIndex && oldBalance === newBalance) continue;
    if (currentIndex !== null) deltas[currentIndex] -= oldBalance;
    if (nextIndex !== null) deltas[nextIndex] += newBalance;
    vote.currentIndex = nextIndex;
  }
  return deltas;
}
