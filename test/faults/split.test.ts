// suite: alone (four nodes on 3-second slots, whose timing the split is about)
import {describe, expect, it} from "@jest/globals";
import {execFile} from "node:child_process";
import {fileURLToPath} from "node:url";
import type {SplitReport} from "./split.ts";

/**
 * The suite's slice of `npm run faults:split`: four nodes cut into two halves for one epoch
 * (connections reset and refused), then healed. Each half must keep proposing on its own branch
 * without finalizing, all four must come back to one head within a few slots, no finalized
 * checkpoint may go back, and no validator may sign a slashable pair. Finality after the heal,
 * the longer cut, the stalled links and the flapping are the whole run's (docs/faults.md).
 *
 * The run is the npm script's own process, which exits when it is done: its proxies' sockets,
 * reset while the nodes die, stay out of the test runner's process.
 */
const RUN = fileURLToPath(new URL("./run.ts", import.meta.url));

describe("a split network, healed", () => {
  it("converges on one head within a few slots of the heal, nothing finalized reverted, nothing slashable signed", async () => {
    const env = {...process.env, SPLIT_EPOCHS: "1", SPLIT_MODE: "refuse", FLAP_EPOCHS: "0", SPLIT_FINALITY: "0"};
    const {stdout, stderr} = await new Promise<{stdout: string; stderr: string}>((resolve) =>
      execFile(process.execPath, [RUN], {env, timeout: 220_000, maxBuffer: 16 << 20}, (_err, stdout, stderr) => resolve({stdout, stderr}))
    );
    const reportStart = stdout.indexOf("\n{");
    if (reportStart < 0) throw new Error(`the split run printed no report; stdout: ${stdout.slice(-2000)} stderr: ${stderr.slice(-2000)}`);
    const report = JSON.parse(stdout.slice(reportStart)) as SplitReport;
    console.log(stdout.slice(0, reportStart) + `\nconverged ${report.convergedAfterSlots} slots after the heal`);
    expect(report.problems).toEqual([]);
    expect(report.heads.diverged).toBe(true);
    expect(report.convergedAfterSlots).toBeLessThanOrEqual(4);
    expect(report.observed.votes).toBeGreaterThan(0);
    expect(report.observed.proposals).toBeGreaterThan(0);
  }, 240_000);
});
