import {describe, expect, it} from "@jest/globals";
import {SLOTS_PER_HISTORICAL_ROOT} from "@lodestar/params";
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {CircuitBreaker, missedSlots, unhealthyReason} from "../../../src/builder/circuitBreaker.ts";

/** A state at `slot` whose block roots have a block at each slot of `blocks` (an empty slot repeats the previous root). */
function stateAt(slot: number, blocks: Set<number>, finalizedEpoch: number): CachedBeaconStateAllForks {
  const roots: Uint8Array[] = [];
  let last = new Uint8Array(32);
  for (let s = 0; s < slot; s++) {
    if (s === 0 || blocks.has(s)) last = Uint8Array.from({length: 32}, (_, i) => (i === 0 ? s % 256 : (s >> 8) % 256));
    roots[s % SLOTS_PER_HISTORICAL_ROOT] = last;
  }
  return {slot, blockRoots: {get: (i: number) => roots[i]}, finalizedCheckpoint: {epoch: finalizedEpoch}} as unknown as CachedBeaconStateAllForks;
}

const all = (from: number, to: number, except: number[] = []) => new Set(Array.from({length: to - from}, (_, i) => from + i).filter((s) => !except.includes(s)));
const opts = {allowedFaults: 2, faultWindow: 8, maxEpochsSinceFinality: 3};

describe("builder circuit breaker (Lodestar's missed-slot window, Lighthouse's finality lag)", () => {
  it("counts the slots of the window before the proposal that have no block", () => {
    expect(missedSlots(stateAt(40, all(1, 40), 3), 8)).toBe(0);
    expect(missedSlots(stateAt(40, all(1, 40, [33, 35, 39]), 3), 8)).toBe(3);
    // slots before the window do not count
    expect(missedSlots(stateAt(40, all(1, 40, [20, 21, 22]), 3), 8)).toBe(0);
  });

  it("trips on more missed slots than allowed, or on finality further behind than 3 epochs, and resets", () => {
    const breaker = new CircuitBreaker(opts);
    expect(breaker.check(stateAt(40, all(1, 40, [35, 36]), 3))).toBeNull();
    expect(breaker.check(stateAt(40, all(1, 40, [35, 36, 37]), 3))).toMatch(/^3 missed slots in the last 8/);
    expect(breaker.isTripped).toBe(true);
    expect(breaker.check(stateAt(48, all(1, 48, [35, 36, 37]), 3))).toBeNull();
    expect(breaker.isTripped).toBe(false);
    // the minimal preset's epochs are 8 slots: slot 48 is epoch 6
    expect(unhealthyReason(opts, stateAt(48, all(1, 48), 2))).toMatch(/^finality 4 epochs behind/);
    expect(unhealthyReason(opts, stateAt(48, all(1, 48), 3))).toBeNull();
  });
});
