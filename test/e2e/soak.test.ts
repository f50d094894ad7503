// suite: alone (kills at seeded moments and a head that must keep moving)
import {describe, expect, it} from "@jest/globals";
import {runSoak} from "../soak/soak.ts";

/**
 * A short seeded slice of `npm run soak`: the first run's clock 3 slots ahead and killed under
 * load, the second on the right clock (so it moved back past slots the validators signed) and
 * stopped with SIGTERM: nothing lost, nothing slashable, a clean exit.
 */
describe("soak slice", () => {
  it(
    "a node stopped twice under REST, event-stream and JSON-RPC load, its clock moved back between, opens its database, keeps its finalized blocks and signs nothing slashable",
    async () => {
      const plans = [
        {clockOffsetSlots: 3, diskFull: false, stop: "SIGKILL" as const},
        {clockOffsetSlots: 0, diskFull: false, stop: "SIGTERM" as const},
      ];
      const report = await runSoak({durationMs: 30_000, seed: 7, secondsPerSlot: 1, killAfterMs: [9_000, 13_000], requireFinality: false, plans});
      expect(report.problems).toEqual([]);
      expect(report.kills).toBeGreaterThanOrEqual(2);
      expect(report.faults).toMatchObject({clockForwards: 1, clockBackwards: 1, sigterm: 1});
      expect(report.runs).toBe(report.kills);
      expect(report.requests.sent).toBeGreaterThan(100);
      expect(report.longestRecoveryMs).toBeGreaterThan(0);
      // the slashing check had something to check
      expect(report.observed.votes).toBeGreaterThan(64);
      expect(report.observed.proposals).toBeGreaterThan(5);
    },
    180_000
  );
});
