import {describe, expect, it} from "@jest/globals";
import {createServer} from "node:http";
import type {AddressInfo} from "node:net";
import {LoopTurns, StepCost} from "../../../src/loopTurns.ts";
import {turnCounter} from "../turnCounter.ts";

/** Holds the thread for `ms`, as a BLS signature does for about half a millisecond. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}


describe("LoopTurns", () => {
  it("runs steps in the order asked, on later turns of the event loop; a step that throws rejects only its own promise", async () => {
    // a budget of 0: one step per turn
    const turns = new LoopTurns(0);
    const turn = turnCounter();
    const ranAt: number[] = [];
    const steps = [0, 1, 2, 3].map((i) =>
      turns.run(() => {
        ranAt.push(turn.now());
        if (i === 2) throw new Error("step 2 failed");
        return i * 10;
      })
    );
    const settled = await Promise.allSettled(steps);
    turn.stop();
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual([0, 10, "step 2 failed", 30]);
    expect(new Set(ranAt).size).toBe(4);
    expect(ranAt).toEqual([...ranAt].sort((a, b) => a - b));
  });

  it("runs the steps queued together in one turn while its budget lasts", async () => {
    const turns = new LoopTurns(1000);
    const turn = turnCounter();
    const ranAt = await Promise.all([0, 1, 2, 3].map(() => turns.run(() => turn.now())));
    turn.stop();
    expect(new Set(ranAt).size).toBe(1);
  });

  it("a step that asks for another step, with budget left, has it run in the same turn, and no turn finds the queue empty", async () => {
    const turns = new LoopTurns(1000);
    const turn = turnCounter();
    const inner: Promise<number>[] = [];
    const outer = await turns.run(() => {
      inner.push(turns.run(() => turn.now()));
      return turn.now();
    });
    expect(await inner[0]).toBe(outer);
    // the turns after it: a turn scheduled for the inner step and run with nothing queued threw
    // there, an uncaught error that fails this test
    await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    turn.stop();
  });

  it("starts a step after others in a turn only if its expected cost fits in what is left of the budget; alone, it runs whatever its cost", async () => {
    // the turn's clock is the test's: each step takes exactly 1 ms of it, however loaded the machine
    let clockMs = 0;
    const turns = new LoopTurns(20, () => clockMs);
    const turn = turnCounter();
    const light = () => turns.run(() => ((clockMs += 1), turn.now()));
    const heavy = (expectedMs: number) => turns.run(() => ((clockMs += 1), turn.now()), () => expectedMs);
    // 3 ms of light steps, then steps expected to take 18 and 19.5 ms, then a light one
    const ranAt = await Promise.all([light(), light(), light(), heavy(18), heavy(19.5), light()]);
    turn.stop();
    const [a, b, c, heavy18, heavy19, after] = ranAt;
    expect(new Set([a, b, c]).size).toBe(1);
    // each heavy step opens a turn of its own, and the light step after it fits in that turn's budget
    expect(heavy18).toBeGreaterThan(c);
    expect(heavy19).toBeGreaterThan(heavy18);
    expect(after).toBe(heavy19);
  });

  it("lets an HTTP request be answered while a long queue of steps is still running", async () => {
    const server = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const turns = new LoopTurns(5);
      const STEPS = 300;
      let done = 0;
      const all = Promise.all(Array.from({length: STEPS}, () => turns.run(() => (busy(1), done++))));
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(await res.text()).toBe("ok");
      const doneWhenAnswered = done;
      await all;
      // all the steps in one task would have held the request for 300 ms, until every step had run;
      // in turns of 5 ms, the request waits a few turns at most
      expect(doneWhenAnswered).toBeLessThan(STEPS / 2);
      expect(done).toBe(STEPS);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("StepCost", () => {
  it("starts at the given cost and moves toward what steps take, per unit of a batch", () => {
    const cost = new StepCost(10);
    expect(cost.ms).toBe(10);
    for (let i = 0; i < 30; i++) expect(cost.time(() => (busy(1), i))).toBe(i);
    // about 1 ms now (at least 1: each step held the thread that long; a loaded machine may add some)
    expect(cost.ms).toBeGreaterThanOrEqual(1);
    expect(cost.ms).toBeLessThan(5);
    // 2 ms batches of 4 units: about 0.5 ms a unit (2 or more if the batch were not divided)
    const perUnit = new StepCost(10);
    for (let i = 0; i < 30; i++) perUnit.time(() => busy(2), 4);
    expect(perUnit.ms).toBeGreaterThanOrEqual(0.5);
    expect(perUnit.ms).toBeLessThan(2);
  });

  it("a step that throws is timed too, and its error goes to the caller", () => {
    const cost = new StepCost(10);
    expect(() =>
      cost.time(() => {
        throw new Error("bad step");
      })
    ).toThrow("bad step");
    expect(cost.ms).toBeLessThan(10);
  });

  it("steps that declare their measured cost end their turn within the budget instead of one step past it", async () => {
    const turns = new LoopTurns(4);
    const cost = new StepCost(1);
    const turn = turnCounter();
    const started: number[] = [];
    const ranAt = await Promise.all(
      Array.from({length: 8}, () =>
        turns.run(
          () => cost.time(() => (started.push(performance.now()), busy(1), turn.now())),
          () => cost.ms
        )
      )
    );
    turn.stop();
    // 1 ms steps that say so, in a 4 ms budget: a 4th would end the turn past it, so 3 a turn at most
    // (undeclared, a 4th starts while under 4 ms have passed)
    const perTurn = [...new Set(ranAt)].map((t) => ranAt.filter((x) => x === t).length);
    expect(perTurn.length).toBeGreaterThanOrEqual(3);
    for (const n of perTurn) expect(n).toBeLessThanOrEqual(3);
    expect(started.length).toBe(8);
  });
});
