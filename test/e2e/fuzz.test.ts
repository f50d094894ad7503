// suite: alone (1,000 requests as fast as the node answers, each with a 15 s limit)
import {describe, expect, it} from "@jest/globals";
import {runFuzz} from "../../bench/fuzz.ts";

/**
 * A seeded slice of `npm run fuzz` (bench/fuzz.ts): 1,000 bad requests to every route of the
 * table and to the JSON-RPC server of a dev node process. A client's mistake never gets a 5xx
 * (the documented 501s of declined routes excepted) and never kills the node.
 */
describe("fuzzing slice", () => {
  it("answers 1,000 seeded bad requests without a 5xx or a crash, with bounded RSS growth", async () => {
    const report = await runFuzz({requests: 1000, seed: 12, concurrency: 8});
    expect(report.serverErrorSamples).toEqual([]);
    expect(report.serverErrors).toBe(0);
    expect(report.crashed).toBe(false);
    expect(report.requests).toBe(1000);
    expect(report.timeouts).toBe(0);
    // every kind of refusal was exercised, so the slice did reach the handlers
    for (const status of ["200", "400", "404", "406", "415"]) expect(report.byStatus[status]).toBeGreaterThan(0);
    expect(report.rssMaxGrowthMb).toBeLessThan(512);
  }, 180_000);
});
