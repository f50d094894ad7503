import {runSplit} from "./split.ts";

/**
 * `npm run faults:split`: the whole split-network run of test/faults/split.ts: cut in two for
 * SPLIT_EPOCHS epochs (default 3), healed, then node 3's links flapping every FLAP_SECONDS
 * (default 3) for FLAP_EPOCHS epochs (default 3; 0: no flapping); SPLIT_MODE `refuse` (default) or `stall`;
 * SPLIT_FINALITY=0 leaves out the wait for finality after the heal (the suite's slice).
 * SPLIT_SECONDS_PER_SLOT (default 3, see below); SPLIT_CPU_PROF=<dir>: node 0 writes a CPU
 * profile there. Prints the report; exits 1 if it found a problem.
 *
 * Why 3-second slots: the four nodes share the machine. Measured as CPU time (not wall time) on
 * the 2-core test machine, with every validator at work they take 2.3 CPU-seconds per slot
 * together, whatever the slot length: about 0.4 for each of the two that custody their share of
 * data columns, 0.8 for each of the two that keep every column (`--subscribe-all-subnets`: the
 * KZG proofs of every block's 128 columns, a proposal's cells and proofs, about 0.4 s each, BLS
 * signatures). At 1-second slots that is more than the two cores: the nodes' event loops wait
 * their turn of the CPU longer than they run, fall slots behind the clock, time their peers'
 * messages seconds late, and the run fails on timing rather than on the split. At 3-second slots
 * it is under 0.8 of a core, which two cores carry with room for the bursts at each slot's start.
 */
const report = await runSplit({
  cutEpochs: Number(process.env.SPLIT_EPOCHS ?? 3),
  mode: process.env.SPLIT_MODE === "stall" ? "stall" : "refuse",
  finality: process.env.SPLIT_FINALITY !== "0",
  secondsPerSlot: Number(process.env.SPLIT_SECONDS_PER_SLOT ?? 3),
  flap: Number(process.env.FLAP_EPOCHS ?? 3) > 0 ? {seconds: Number(process.env.FLAP_SECONDS ?? 3), epochs: Number(process.env.FLAP_EPOCHS ?? 3)} : undefined,
  cpuProfileDir: process.env.SPLIT_CPU_PROF,
  log: (line) => console.log(line),
});
console.log(JSON.stringify(report, null, 2));
process.exit(report.problems.length === 0 ? 0 : 1);
