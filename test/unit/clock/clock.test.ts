import {describe, expect, it} from "@jest/globals";
import {Clock} from "../../../src/clock/clock.ts";

describe("clock", () => {
  it("computes slots and epochs from genesis time", () => {
    let now = 1_000_000;
    const clock = new Clock(1000, 2, 8, () => now);
    expect(clock.currentSlot()).toBe(0);
    now = (1000 + 2 * 17) * 1000 + 1999;
    expect(clock.currentSlot()).toBe(17);
    expect(clock.currentEpoch()).toBe(2);
    expect(clock.msIntoSlot(17)).toBe(1999);
    expect(clock.currentSlotWithTolerance(500)).toBe(18);
    now = 500_000;
    expect(clock.currentSlot()).toBe(0);
  });

  it("emits every slot in order, and epochs at their first slot", async () => {
    const genesis = Date.now() / 1000 - 0.95;
    const clock = new Clock(genesis, 0.05, 4);
    const events: string[] = [];
    clock.on("slot", (s) => events.push(`s${s}`));
    clock.on("epoch", (e) => events.push(`e${e}`));
    clock.start();
    await new Promise((r) => setTimeout(r, 330));
    clock.stop();
    const slots = events.filter((e) => e.startsWith("s")).map((e) => Number(e.slice(1)));
    expect(slots.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < slots.length; i++) expect(slots[i]).toBe(slots[i - 1] + 1);
    for (const [i, e] of events.entries()) {
      if (e.startsWith("e")) expect(events[i - 1]).toBe(`s${Number(e.slice(1)) * 4}`);
    }
  });
});
