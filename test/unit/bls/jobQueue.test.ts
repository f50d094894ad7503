import {describe, expect, it} from "@jest/globals";
import {JobQueue} from "../../../src/bls/jobQueue.ts";

/** The BLS pool's waiting jobs: batches of one message's jobs where the queue holds them, blocks first. */
interface TestJob {
  name: string;
  sets: Array<{msg: Uint8Array}>;
}
const msg = (n: number) => new Uint8Array(32).fill(n);
const job = (name: string, ...messages: number[]): TestJob => ({name, sets: messages.map((n) => ({msg: msg(n)}))});
const names = (jobs: TestJob[]) => jobs.map((j) => j.name);

describe("BLS job queue", () => {
  it("batches interleaved jobs by message, groups in the order they began, jobs in order within a group", () => {
    const queue = new JobQueue<TestJob>();
    // a slot's attestations: three committees' data, interleaved as they arrive
    for (let i = 0; i < 6; i++) for (const committee of [1, 2, 3]) queue.push(job(`c${committee}-${i}`, committee));
    expect(queue.length).toBe(18);
    expect(queue.sets).toBe(18);
    expect(names(queue.take(4))).toEqual(["c1-0", "c1-1", "c1-2", "c1-3"]);
    expect(names(queue.take(4))).toEqual(["c1-4", "c1-5", "c2-0", "c2-1"]);
    // a later job of a group still waiting joins it, ahead of younger groups
    queue.push(job("c3-6", 3));
    queue.push(job("c1-6", 1));
    expect(names(queue.take(20))).toEqual(["c2-2", "c2-3", "c2-4", "c2-5", "c3-0", "c3-1", "c3-2", "c3-3", "c3-4", "c3-5", "c3-6", "c1-6"]);
    expect(queue.length).toBe(0);
    expect(queue.sets).toBe(0);
  });

  it("takes priority jobs first, in their order, and never splits a job", () => {
    const queue = new JobQueue<TestJob>();
    queue.push(job("gossip", 1));
    queue.push(job("aggregate", 2, 3, 4));
    queue.push(job("block", 9, 9, 8), true);
    queue.push(job("sidecar", 7), true);
    expect(names(queue.take(3))).toEqual(["block"]);
    expect(names(queue.take(3))).toEqual(["sidecar", "gossip"]);
    // a job larger than the batch still goes, alone
    expect(names(queue.take(2))).toEqual(["aggregate"]);
    expect(queue.take(2)).toEqual([]);
  });

  it("empties on drain", () => {
    const queue = new JobQueue<TestJob>();
    queue.push(job("a", 1));
    queue.push(job("b", 2), true);
    expect(names(queue.drain()).sort()).toEqual(["a", "b"]);
    expect(queue.length).toBe(0);
    expect(queue.sets).toBe(0);
  });
});
