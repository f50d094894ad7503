// Whether two sets of per-window counts differ beyond what shuffling the windows between the two
// sides gives: a permutation test of the difference of their mean ranks (the Mann-Whitney test,
// ties given their mean rank). A window's late requests are made by a few events (a collection,
// a burst meeting the node's own work), so their counts are far from normal and a change is
// judged by ranks, not means.
import {prng} from "./seededRandom.ts";

/** Above this many ways to split the windows, the splits are sampled (seeded) rather than all counted. */
const EXACT_LIMIT = 200_000;
const SAMPLES = 100_000;

/** Each value's rank among all of them, from 1; equal values share their mean rank. */
export function midranks(values: number[]): number[] {
  const order = values.map((v, i) => ({v, i})).sort((a, b) => a.v - b.v);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1].v === order[start].v) end++;
    for (let k = start; k <= end; k++) ranks[order[k].i] = (start + end) / 2 + 1;
    start = end + 1;
  }
  return ranks;
}

function binomial(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

/**
 * The two-sided p-value that `a` and `b` come from one distribution: the share of the ways to
 * deal all the values into groups of their sizes whose rank sums are at least as far from the
 * mean as the observed one. Exact up to EXACT_LIMIT splits, else estimated from SAMPLES seeded shuffles.
 */
export function rankTestP(a: number[], b: number[]): number {
  if (a.length === 0 || b.length === 0) return 1;
  const ranks = midranks([...a, ...b]);
  const n = a.length;
  const expected = (n * (ranks.length + 1)) / 2;
  const observed = Math.abs(ranks.slice(0, n).reduce((s, r) => s + r, 0) - expected);
  // a split's rank sum counts as extreme when at least as far from the mean (a little slack for the halves of mean ranks)
  const extreme = (sum: number) => Math.abs(sum - expected) >= observed - 1e-9;
  if (binomial(ranks.length, n) <= EXACT_LIMIT) {
    let hits = 0;
    let total = 0;
    const pick = (from: number, left: number, sum: number): void => {
      if (left === 0) {
        total++;
        if (extreme(sum)) hits++;
        return;
      }
      for (let i = from; i <= ranks.length - left; i++) pick(i + 1, left - 1, sum + ranks[i]);
    };
    pick(0, n, 0);
    return hits / total;
  }
  const random = prng(1);
  const pool = [...ranks];
  let hits = 0;
  for (let s = 0; s < SAMPLES; s++) {
    // the first n of a partial Fisher-Yates shuffle are a uniform draw of n ranks
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(random() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
      sum += pool[i];
    }
    if (extreme(sum)) hits++;
  }
  // the observed split counts as one of them (a p-value of 0 would claim more than the samples show)
  return (hits + 1) / (SAMPLES + 1);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
