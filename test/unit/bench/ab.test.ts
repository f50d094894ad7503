import {describe, expect, it} from "@jest/globals";
import {median, midranks, rankTestP} from "../../../bench/rankTest.ts";
import {momentOf} from "../../../bench/ab.ts";

/** bench:ab's judgement of two sides' window counts, against the Mann-Whitney test's exact null distribution. */
describe("rank test of two sides' windows", () => {
  it("gives equal values their mean rank", () => {
    expect(midranks([10, 20, 10, 30])).toEqual([1.5, 3, 1.5, 4]);
    expect(midranks([5, 5, 5])).toEqual([2, 2, 2]);
  });

  it("gives the exact two-sided p-values of fully separated groups: 2 of C(n+m, n) splits", () => {
    // all of a below all of b: only that split and its mirror are as extreme
    expect(rankTestP([1, 2, 3], [4, 5, 6])).toBeCloseTo(2 / 20, 12);
    expect(rankTestP([1, 2, 3, 4], [5, 6, 7, 8])).toBeCloseTo(2 / 70, 12);
    expect(rankTestP([80, 90, 70, 60, 85, 75], [10, 20, 15, 5, 25, 30])).toBeCloseTo(2 / 924, 12);
  });

  it("matches the Mann-Whitney table: with 8 windows a side, U = 13 is significant at 5% (two-sided) and U = 14 is not", () => {
    const b = [10, 20, 30, 40, 50, 60, 70, 80];
    // U, the pairs (x of a, y of b) with x < y: 5 is below all 8 of b, 35 below 5 of them, 25 below 6, the rest below none
    expect(rankTestP([5, 35, 1000, 1001, 1002, 1003, 1004, 1005], b)).toBeCloseTo(0.04988, 4);
    expect(rankTestP([5, 25, 1000, 1001, 1002, 1003, 1004, 1005], b)).toBeCloseTo(0.06496, 4);
  });

  it("finds nothing between identical sides, and samples when the splits are too many to count", () => {
    expect(rankTestP([3, 3, 3], [3, 3, 3])).toBe(1);
    const a = Array.from({length: 14}, (_, i) => 100 + i);
    const b = Array.from({length: 14}, (_, i) => i);
    // C(28, 14) splits: sampled; the exact value, 2 / C(28, 14), is far below the sampling's floor
    const p = rankTestP(a, b);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-4);
    const mixed = Array.from({length: 14}, (_, i) => (i % 2 === 0 ? 100 + i : i));
    expect(rankTestP(mixed, b)).toBeGreaterThan(0.01);
  });

  it("takes the middle of an even count as the mean of the two", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5, 1, 3])).toBe(3);
  });
});

describe("bench:ab's moments of a window that starts with an epoch (4 s slots)", () => {
  it("puts a request by when it was due: the duties burst, a third and two thirds into a slot, the rest", () => {
    expect(momentOf(0, 4000)).toBe("epoch start");
    expect(momentOf(499, 4000)).toBe("epoch start");
    expect(momentOf(500, 4000)).toBe("the rest");
    // a third into the first slot and into the fifth, up to 400 ms after (clients late by up to 200 ms)
    expect(momentOf(1300, 4000)).toBe("a third");
    expect(momentOf(4 * 4000 + 1700, 4000)).toBe("a third");
    expect(momentOf(4 * 4000 + 1800, 4000)).toBe("the rest");
    expect(momentOf(2 * 4000 + 2600, 4000)).toBe("two thirds");
    expect(momentOf(2 * 4000 + 3100, 4000)).toBe("the rest");
    // a later slot's start is not the epoch's
    expect(momentOf(4000 + 100, 4000)).toBe("the rest");
  });
});
