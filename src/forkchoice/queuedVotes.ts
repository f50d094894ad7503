import {grown, NO_NODE, remapNodeIndices} from "./computeDeltas.ts";

/** One release slot's votes: validator, proto-array node and target epoch at the same position. */
export interface VoteBatch {
  validatorIndex: Int32Array;
  nodeIndex: Int32Array;
  targetEpoch: Float64Array;
  length: number;
}

/**
 * Votes that count only from a later slot (an attestation counts from the slot after its own),
 * by that slot, as typed arrays. A mainnet slot brings about 31,000 of them, each held until the
 * next slot starts: one object and a root string each made 31,000 objects a slot for the young
 * collections to copy and promote, and releasing them looked every root up again at the slot's
 * start. Their blocks' node indices are taken when they are queued and moved with the nodes
 * when the proto-array is pruned.
 */
export class QueuedVotes {
  private readonly bySlot = new Map<number, VoteBatch>();

  add(releaseSlot: number, validatorIndex: number, nodeIndex: number, targetEpoch: number): void {
    let batch = this.bySlot.get(releaseSlot);
    if (!batch) {
      batch = {validatorIndex: new Int32Array(64), nodeIndex: new Int32Array(64), targetEpoch: new Float64Array(64), length: 0};
      this.bySlot.set(releaseSlot, batch);
    }
    if (batch.length === batch.nodeIndex.length) {
      const capacity = batch.length * 2;
      batch.validatorIndex = grown(batch.validatorIndex, capacity, 0);
      batch.nodeIndex = grown(batch.nodeIndex, capacity, NO_NODE);
      batch.targetEpoch = grown(batch.targetEpoch, capacity, 0);
    }
    batch.validatorIndex[batch.length] = validatorIndex;
    batch.nodeIndex[batch.length] = nodeIndex;
    batch.targetEpoch[batch.length] = targetEpoch;
    batch.length++;
  }

  /** The batches of every release slot up to `slot`, in slot order, no longer queued. */
  takeDue(slot: number): VoteBatch[] {
    const due = [...this.bySlot.keys()].filter((releaseSlot) => releaseSlot <= slot).sort((a, b) => a - b);
    return due.map((releaseSlot) => {
      const batch = this.bySlot.get(releaseSlot)!;
      this.bySlot.delete(releaseSlot);
      return batch;
    });
  }

  /** After the proto-array dropped nodes: see VoteTable.remap. */
  remap(newIndexOf: ReadonlyArray<number | null>): void {
    for (const batch of this.bySlot.values()) remapNodeIndices(batch.nodeIndex, batch.length, newIndexOf);
  }
}
