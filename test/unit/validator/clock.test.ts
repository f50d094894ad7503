import {describe, expect, it} from "@jest/globals";
import {SlotClock} from "../../../src/validator/clock.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("SlotClock", () => {
  it("ticks every slot at the slot start computed from genesis, without skipping or repeating", async () => {
    const genesisSec = Math.floor(Date.now() / 1000) - 10;
    const clock = new SlotClock(genesisSec, 100);
    const ticks: {slot: number; late: number}[] = [];
    clock.start((slot) => {
      ticks.push({slot, late: Date.now() - clock.slotStartMs(slot)});
      // A busy tick must not push the following ones later.
      const until = Date.now() + 30;
      while (Date.now() < until);
    });
    await sleep(650);
    clock.stop();
    const count = ticks.length;
    await sleep(200);
    expect(ticks.length).toBe(count);
    expect(count).toBeGreaterThanOrEqual(5);
    ticks.forEach((t, k) => {
      if (k > 0) expect(t.slot).toBe(ticks[k - 1].slot + 1);
      expect(t.late).toBeGreaterThanOrEqual(0);
      expect(t.late).toBeLessThan(60);
    });
  });

  it("waits for genesis: the first tick is slot 0 at genesis time", async () => {
    const genesisSec = Date.now() / 1000 + 0.1;
    const clock = new SlotClock(genesisSec, 1000);
    expect(clock.currentSlot()).toBe(-1);
    const ticks: number[] = [];
    clock.start((slot) => ticks.push(slot));
    await sleep(150);
    clock.stop();
    expect(ticks).toEqual([0]);
  });

  it("runs a task at an offset into a slot, at once if that time has passed, never after stop", async () => {
    const clock = new SlotClock(Math.floor(Date.now() / 1000) - 1, 1000);
    const slot = clock.currentSlot();
    const ran: string[] = [];
    clock.runAt(slot - 1, 0, () => ran.push("past"));
    clock.runAt(slot + 5, 0, () => ran.push("future"));
    await sleep(10);
    clock.stop();
    clock.runAt(slot - 1, 0, () => ran.push("after stop"));
    await sleep(10);
    expect(ran).toEqual(["past"]);
  });
});
