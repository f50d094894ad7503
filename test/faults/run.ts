import {runSplit} from "./split.ts";

/**
 * `npm run faults:split`: the whole split-network run of test/faults/split.ts: cut in two for
 * SPLIT_EPOCHS epochs (default 3), healed, then node 3's links flapping every FLAP_SECONDS
 * (default 3) for FLAP_EPOCHS epochs (default 3; 0: no flapping); SPLIT_MODE `refuse` (default) or `stall`.
 * SPLIT_SECONDS_PER_SLOT (default 1). Prints the report; exits 1 if it found a problem.
 */
const report = await runSplit({
  cutEpochs: Number(process.env.SPLIT_EPOCHS ?? 3),
  mode: process.env.SPLIT_MODE === "stall" ? "stall" : "refuse",
  secondsPerSlot: Number(process.env.SPLIT_SECONDS_PER_SLOT ?? 1),
  flap: Number(process.env.FLAP_EPOCHS ?? 3) > 0 ? {seconds: Number(process.env.FLAP_SECONDS ?? 3), epochs: Number(process.env.FLAP_EPOCHS ?? 3)} : undefined,
  log: (line) => console.log(line),
});
console.log(JSON.stringify(report, null, 2));
process.exit(report.problems.length === 0 ? 0 : 1);
