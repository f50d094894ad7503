/** A node index that points nowhere: no vote yet, or its block was pruned. */
export const NO_NODE = -1;
/** The target epoch of a validator that has not voted yet. */
const NO_VOTE = -1;

/**
 * Validators' latest messages as proto-array node indices, by validator index, in typed arrays:
 * `currentIndex` is where a validator's weight sits now, `nextIndex` where its latest message says
 * it should sit, `nextEpoch` that message's target epoch (spec LatestMessage.epoch). On mainnet that
 * is a million validators: three arrays instead of a million objects for every full garbage
 * collection to trace and for each head update to visit scattered through the heap.
 */
export class VoteTable {
  currentIndex = new Int32Array(0);
  nextIndex = new Int32Array(0);
  nextEpoch = new Float64Array(0);
  /** one past the highest validator index that has voted */
  size = 0;

  /** Spec update_latest_messages' rule for one validator: its vote moves only to a later target epoch. */
  set(validatorIndex: number, nodeIndex: number, targetEpoch: number): void {
    if (validatorIndex >= this.size) this.grow(validatorIndex + 1);
    // a first vote too: NO_VOTE is below every epoch
    if (targetEpoch > this.nextEpoch[validatorIndex]) {
      this.nextIndex[validatorIndex] = nodeIndex;
      this.nextEpoch[validatorIndex] = targetEpoch;
    }
  }

  /** After the proto-array dropped nodes: each index moved to its node's new index, or to none with a removed node. */
  remap(newIndexOf: ReadonlyArray<number | null>): void {
    remapNodeIndices(this.currentIndex, this.size, newIndexOf);
    remapNodeIndices(this.nextIndex, this.size, newIndexOf);
  }

  private grow(size: number): void {
    if (size > this.nextEpoch.length) {
      // doubling, so that votes arriving in index order cost linear time
      const capacity = Math.max(size, this.nextEpoch.length * 2, 1024);
      this.currentIndex = grown(this.currentIndex, capacity, NO_NODE);
      this.nextIndex = grown(this.nextIndex, capacity, NO_NODE);
      this.nextEpoch = grown(this.nextEpoch, capacity, NO_VOTE);
    }
    this.size = size;
  }
}

/** The first `length` node indices of `indices` moved to their nodes' new indices after a prune, or to none where the node was removed. */
export function remapNodeIndices(indices: Int32Array, length: number, newIndexOf: ReadonlyArray<number | null>): void {
  for (let i = 0; i < length; i++) indices[i] = indices[i] === NO_NODE ? NO_NODE : (newIndexOf[indices[i]] ?? NO_NODE);
}

export function grown<T extends Int32Array | Float64Array>(array: T, capacity: number, empty: number): T {
  const larger = new (array.constructor as new (length: number) => T)(capacity);
  larger.set(array);
  larger.fill(empty, array.length);
  return larger;
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
  votes: VoteTable,
  oldBalances: readonly number[],
  newBalances: readonly number[],
  equivocatingIndices: ReadonlySet<number>
): number[] {
  const deltas = new Array<number>(nodeCount).fill(0);
  const {currentIndex: currentIndices, nextIndex: nextIndices} = votes;
  const checkEquivocation = equivocatingIndices.size > 0;
  for (let validatorIndex = 0; validatorIndex < votes.size; validatorIndex++) {
    const currentIndex = currentIndices[validatorIndex];
    const nextIndex = nextIndices[validatorIndex];
    const oldBalance = oldBalances[validatorIndex] ?? 0;

    if (checkEquivocation && equivocatingIndices.has(validatorIndex)) {
      if (currentIndex !== NO_NODE) deltas[currentIndex] -= oldBalance;
      currentIndices[validatorIndex] = NO_NODE;
      nextIndices[validatorIndex] = NO_NODE;
      continue;
    }

    const newBalance = newBalances[validatorIndex] ?? 0;
    if (currentIndex === nextIndex && oldBalance === newBalance) continue;
    if (currentIndex !== NO_NODE) deltas[currentIndex] -= oldBalance;
    if (nextIndex !== NO_NODE) deltas[nextIndex] += newBalance;
    currentIndices[validatorIndex] = nextIndex;
  }
  return deltas;
}
