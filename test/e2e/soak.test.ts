// suite: alone (kills at seeded moments and a head that must keep moving)
import {describe, expect, it} from "@jest/globals";
import {runSoak} from "../soak/soak.ts";

/** A short seeded slice of `npm run soak`: SIGKILL under load, restart, nothing lost, nothing slashable. */
describe("soak slice", () => {
  it(
    "a node killed twice under REST, event-stream and JSON-RPC load opens its database, keeps its finalized blocks and signs nothing slashable",
    async () => {
      const report = await runSoak({durationMs: 30_000, seed: 7, secondsPerSlot: 1, killAfterMs: [9_000, 13_000], requireFinality: false});
      expect(report.problems).toEqual([]);
      expect(report.kills).toBeGreaterThanOrEqual(2);
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
