import {describe, expect, it} from "@jest/globals";
import {NO_NODE} from "../../../src/forkchoice/computeDeltas.ts";
import {QueuedVotes, type VoteBatch} from "../../../src/forkchoice/queuedVotes.ts";

const rows = (batch: VoteBatch) => Array.from({length: batch.length}, (_, i) => [batch.validatorIndex[i], batch.nodeIndex[i], batch.targetEpoch[i]]);

describe("votes queued until their release slot", () => {
  it("keeps a mainnet slot's worth per slot in arrival order, and gives the due slots in slot order", () => {
    const queue = new QueuedVotes();
    const expected: number[][] = [];
    for (let i = 0; i < 31_250; i++) {
      const vote = [(i * 7919) % 1_000_000, i % 5, 100 + (i % 2)];
      queue.add(12, vote[0], vote[1], vote[2]);
      expected.push(vote);
    }
    queue.add(11, 5, 1, 99);
    queue.add(13, 6, 2, 101);
    const due = queue.takeDue(12);
    expect(due.map((batch) => batch.length)).toEqual([1, 31_250]);
    expect(rows(due[0])).toEqual([[5, 1, 99]]);
    expect(rows(due[1])).toEqual(expected);
    // taken once; the later slot stays
    expect(queue.takeDue(12)).toEqual([]);
    expect(queue.takeDue(13).map(rows)).toEqual([[[6, 2, 101]]]);
  });

  it("moves the queued node indices with a prune, to none for a removed node", () => {
    const queue = new QueuedVotes();
    queue.add(5, 1, 0, 1);
    queue.add(5, 2, 2, 1);
    queue.add(6, 3, 3, 1);
    queue.add(6, 4, NO_NODE, 1);
    // nodes 0 and 1 removed; 2 and 3 become 0 and 1
    queue.remap([null, null, 0, 1]);
    expect(queue.takeDue(6).map(rows)).toEqual([
      [
        [1, NO_NODE, 1],
        [2, 0, 1],
      ],
      [
        [3, 1, 1],
        [4, NO_NODE, 1],
      ],
    ]);
  });
});
