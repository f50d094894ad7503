import {describe, it, expect} from "@jest/globals";
import {NO_NODE, VoteTable, computeDeltas} from "../../../src/forkchoice/computeDeltas.ts";
import {computeDeltas as lodestarDeltas} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/computeDeltas.js";
import {HEX_ZERO_HASH, type VoteTracker} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/interface.js";
import {seededInts} from "./randomTree.ts";

/**
 * The vote table (typed arrays by validator index, grown as votes come) against Lodestar 1.5.1's
 * computeDeltas over VoteTracker objects by root, with thousands of validators voting in random
 * order (so the table grows past its first capacity with gaps left unvoted), stale votes, balance
 * changes, equivocations and a prune that renumbers the nodes. The differential test of the whole
 * fork choice (differential.test.ts) has 24 validators.
 */
const VALIDATORS = 5000;
const NODES = 16;
const rootOf = (i: number): string => `0x${(i + 1).toString(16).padStart(64, "0")}`;

describe("VoteTable and computeDeltas agree with Lodestar 1.5.1's computeDeltas", () => {
  for (const seed of [1, 2, 3]) {
    it(`on ${VALIDATORS} validators over 12 rounds with a prune (seed ${seed})`, () => {
      const rand = seededInts(seed);
      const ours = new VoteTable();
      const theirs: VoteTracker[] = [];
      // Lodestar's node indices by root; ours are the same numbers until the prune
      let roots = Array.from({length: NODES}, (_, i) => rootOf(i));
      let indices = new Map(roots.map((root, i) => [root, i]));
      const equivocating = new Set<number>();
      let balances = Array.from({length: VALIDATORS}, () => 32);
      for (let round = 0; round < 12; round++) {
        if (round === 6) {
          // the first 5 nodes go; the others move down
          const newIndexOf = roots.map((_, i) => (i < 5 ? null : i - 5));
          ours.remap(newIndexOf);
          roots = roots.slice(5);
          indices = new Map(roots.map((root, i) => [root, i]));
        }
        for (let n = 0; n < 2000; n++) {
          const v = rand(VALIDATORS);
          const node = rand(roots.length);
          // now and then older than the validator's latest message: ignored by both
          const epoch = round + 2 - rand(3);
          ours.set(v, node, epoch);
          const vote = theirs[v];
          if (vote === undefined) theirs[v] = {currentRoot: HEX_ZERO_HASH, nextRoot: roots[node], nextEpoch: epoch};
          else if (epoch > vote.nextEpoch) {
            vote.nextRoot = roots[node];
            vote.nextEpoch = epoch;
          }
        }
        if (round % 4 === 3) equivocating.add(rand(VALIDATORS));
        const newBalances = balances.map((b) => (rand(10) === 0 ? 31 + rand(3) : b));
        const expected = lodestarDeltas(indices, theirs, Uint16Array.from(balances), Uint16Array.from(newBalances), equivocating);
        expect(computeDeltas(roots.length, ours, balances, newBalances, equivocating)).toEqual(expected);
        balances = newBalances;
      }
      expect(ours.size).toBeGreaterThan(4000);
      // validators that never voted hold no weight anywhere
      const unvoted = Array.from({length: ours.size}, (_, v) => v).filter((v) => theirs[v] === undefined);
      expect(unvoted.length).toBeGreaterThan(0);
      for (const v of unvoted) expect([ours.currentIndex[v], ours.nextIndex[v]]).toEqual([NO_NODE, NO_NODE]);
    });
  }
});
