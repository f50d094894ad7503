import {runSoak} from "./soak.ts";

/**
 * `npm run soak`: the soak of test/soak/soak.ts for SOAK_MINUTES (default 120), seeded by
 * SOAK_SEED (default 1), with full-disk faults where the machine lets it mount a tmpfs (as root;
 * SOAK_DISK_FULL=0 leaves them out). Prints the report; exits 1 if it found a problem.
 */
const minutes = Number(process.env.SOAK_MINUTES ?? 120);
const seed = Number(process.env.SOAK_SEED ?? 1);
const report = await runSoak({
  durationMs: minutes * 60_000,
  seed,
  secondsPerSlot: Number(process.env.SOAK_SECONDS_PER_SLOT ?? 2),
  killAfterMs: [15_000, 90_000],
  diskFull: process.env.SOAK_DISK_FULL !== "0",
  log: (line) => console.log(line),
});
console.log(JSON.stringify({seed, minutes, ...report}, null, 2));
process.exit(report.problems.length === 0 ? 0 : 1);
