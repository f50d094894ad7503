import {describe, it, expect} from "@jest/globals";
import {ValidatorBits} from "../../../src/pools/validatorBits.ts";
import {prng} from "../../../bench/seededRandom.ts";

describe("ValidatorBits", () => {
  it("answers as a Set per epoch would, over a million validator indices in random order", () => {
    const random = prng(7);
    const bits = new ValidatorBits();
    const sets = new Map<number, Set<number>>();
    for (let i = 0; i < 50_000; i++) {
      const epoch = Math.floor(random() * 4);
      // a small range as well, so that indices repeat
      const index = random() < 0.5 ? Math.floor(random() * 1_000_000) : Math.floor(random() * 200);
      const set = sets.get(epoch) ?? new Set<number>();
      sets.set(epoch, set);
      expect(bits.add(epoch, index)).toBe(!set.has(index));
      set.add(index);
    }
    for (let i = 0; i < 20_000; i++) {
      const epoch = Math.floor(random() * 5);
      const index = Math.floor(random() * 1_100_000);
      expect(bits.has(epoch, index)).toBe(sets.get(epoch)?.has(index) ?? false);
    }
    for (const [epoch, set] of sets) for (const index of set) expect(bits.has(epoch, index)).toBe(true);
    bits.deleteBelow(2);
    const [kept] = sets.get(2)!;
    expect(bits.has(2, kept)).toBe(true);
    for (const index of sets.get(1)!) expect(bits.has(1, index)).toBe(false);
    // a forgotten epoch starts empty again
    const [forgotten] = sets.get(0)!;
    expect(bits.add(0, forgotten)).toBe(true);
  });
});
