import {describe, expect, it} from "@jest/globals";
import {runSplit} from "../faults/split.ts";

/**
 * A slice of `npm run faults:split`: four nodes cut into two halves for two epochs (the full run
 * cuts for three, then flaps a link), healed, converging and finalizing again with nothing
 * finalized reverted and nothing slashable signed.
 */
describe("a split network", () => {
  it(
    "two halves run apart for two epochs without finalizing; healed, they agree on one head, finalize again, revert nothing and sign nothing slashable",
    async () => {
      const report = await runSplit({cutEpochs: 2, mode: "refuse"});
      expect(report.problems).toEqual([]);
      expect(report.heads.diverged).toBe(true);
      expect(report.finalized.duringCut).toBeLessThanOrEqual(Math.floor(report.cutSlot / 8));
      expect(report.finalized.afterHeal).toBeGreaterThan(Math.floor(report.cutSlot / 8));
      // the slashing check had both branches to check
      expect(report.observed.blocksRead).toBeGreaterThan(report.heads.half0 - report.cutSlot);
      expect(report.observed.votes).toBeGreaterThan(64);
    },
    300_000
  );
});
