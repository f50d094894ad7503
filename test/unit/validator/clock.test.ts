import {afterEach, beforeEach, describe, expect, it, jest} from "@jest/globals";
import {SlotClock} from "../../../src/validator/clock.ts";

/** Jest's fake timers drive both the clock's timers and its `now` (Date.now): no test waits on the wall clock. */
const START_MS = 1_700_000_000_000;

describe("SlotClock", () => {
  beforeEach(() => {
    jest.useFakeTimers({now: START_MS});
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it("ticks every slot at the slot start computed from genesis, without skipping or repeating", () => {
    const clock = new SlotClock(START_MS / 1000 - 10, 100);
    const ticks: {slot: number; late: number}[] = [];
    clock.start((slot) => {
      ticks.push({slot, late: Date.now() - clock.slotStartMs(slot)});
      // A busy tick (30 ms) must not push the following ones later.
      jest.setSystemTime(Date.now() + 30);
    });
    jest.advanceTimersByTime(650);
    clock.stop();
    const count = ticks.length;
    jest.advanceTimersByTime(200);
    expect(ticks.length).toBe(count);
    expect(count).toBeGreaterThanOrEqual(6);
    ticks.forEach((t, k) => {
      if (k > 0) expect(t.slot).toBe(ticks[k - 1].slot + 1);
      // at most the previous tick's busy time: lateness never adds up from tick to tick
      expect(t.late).toBeGreaterThanOrEqual(0);
      expect(t.late).toBeLessThanOrEqual(30);
    });
  });

  it("waits for genesis: the first tick is slot 0 at genesis time", () => {
    const clock = new SlotClock(START_MS / 1000 + 0.1, 1000);
    expect(clock.currentSlot()).toBe(-1);
    const ticks: number[] = [];
    clock.start((slot) => ticks.push(slot));
    jest.advanceTimersByTime(99);
    expect(ticks).toEqual([]);
    jest.advanceTimersByTime(51);
    clock.stop();
    expect(ticks).toEqual([0]);
  });

  it("a wall clock set back by two slots ticks no slot twice: the ticks go on with the slot after the last, once its time comes again", () => {
    const clock = new SlotClock(START_MS / 1000 - 10, 1000);
    const ticks: number[] = [];
    clock.start((slot) => ticks.push(slot));
    jest.advanceTimersByTime(3000);
    expect(ticks).toEqual([11, 12, 13]);
    jest.setSystemTime(Date.now() - 2000);
    // slot 14's start is now 3 s away, not 1 s
    jest.advanceTimersByTime(2900);
    expect(ticks).toEqual([11, 12, 13]);
    jest.advanceTimersByTime(2100);
    clock.stop();
    expect(ticks).toEqual([11, 12, 13, 14, 15, 16]);
  });

  it("runs a task at an offset into a slot, at once if that time has passed, never after stop", () => {
    const clock = new SlotClock(START_MS / 1000 - 1, 1000);
    const slot = clock.currentSlot();
    const ran: string[] = [];
    clock.runAt(slot - 1, 0, () => ran.push("past"));
    clock.runAt(slot + 5, 0, () => ran.push("future"));
    jest.advanceTimersByTime(10);
    clock.stop();
    clock.runAt(slot - 1, 0, () => ran.push("after stop"));
    jest.advanceTimersByTime(10_000);
    expect(ran).toEqual(["past"]);
  });
});
