// `npm run bench:ab`: whether a change makes the node answer bench:api's realistic mix (bench/mix.ts)
// with fewer late requests. Two nodes, A and B, each a checkout's build or this one with other
// flags, run side by side on the same kind of dev chain as bench:api's; windows of the mix at one
// offered rate alternate between them (ABBA...), the other node stopped (SIGSTOP) for each window.
// Each window's requests over 5 ms are counted by the moment of the slot they were due in, where
// the late ones gather: the epoch's first 500 ms (every client's duties), a third into each slot
// (attestation data, the node's own attesters), two thirds (aggregates), and the rest. A rank test
// over the windows (bench/rankTest.ts) says whether A and B differ beyond the shuffle of windows.
//
//   BENCH_AB_A, BENCH_AB_B: a checkout's folder with its dependencies installed and built (default:
//     this one; both defaults make an A/A run, which shows the machine's noise)
//   BENCH_AB_A_ARGS, BENCH_AB_B_ARGS: more node options ("--bls-threads 1")
//   BENCH_AB_A_NODE_FLAGS, BENCH_AB_B_NODE_FLAGS: Node and V8 flags ("--max-semi-space-size=8"; one of
//     the launcher's heap flags given replaces them all, as when the node is started so)
//   BENCH_AB_A_VALIDATORS, BENCH_AB_B_VALIDATORS: "node" (default: the chain's 64 validators in the
//     node, as in bench:api) or "external" (in a `beacon-gateway validator` process of its own,
//     stopped with its node)
//   BENCH_AB_RATE (500 req/s offered), BENCH_AB_WINDOWS (8 a side, after one unmeasured each),
//   BENCH_MIX_SLOTS (6, a window), BENCH_MIX_SEED (1), BENCH_LOAD_NICE (-20, the load generator's priority)
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import {type ChildProcess, spawn} from "node:child_process";
import {HOST, devNodeArgs, stop, waitForHeadSlot} from "./harness.ts";
import {startListening} from "../test/serverProcess.ts";
import {MIX_P99_MS, type Isolation, type MixServer, mixChain, runWindow, timing} from "./apiMix.ts";
import {type LoadSummary, SENT_LATE_MS, loadGeneratorLine, summarize, unsuccessfulLine} from "./openLoop.ts";
import {median, rankTestP} from "./rankTest.ts";
import {bareServerRate, machineLine} from "./machine.ts";
import {rssMiB} from "./peer.ts";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const RATE = Number(process.env.BENCH_AB_RATE ?? 500);
const WINDOWS = Number(process.env.BENCH_AB_WINDOWS ?? 8);
const VALIDATORS = 64;
const MOMENTS = ["epoch start", "a third", "two thirds", "the rest"] as const;
type Moment = (typeof MOMENTS)[number];

/** The moment of a request due `atMs` into a window that starts with an epoch. */
export function momentOf(atMs: number, slotMs: number): Moment {
  if (atMs < 500) return "epoch start";
  const intoSlot = atMs % slotMs;
  // a client's clock is late by up to 200 ms, and a burst's queue outlasts it
  if (intoSlot >= slotMs / 3 - 100 && intoSlot < slotMs / 3 + 400) return "a third";
  if (intoSlot >= (2 * slotMs) / 3 - 100 && intoSlot < (2 * slotMs) / 3 + 400) return "two thirds";
  return "the rest";
}

interface Side extends MixServer {
  label: "A" | "B";
  /** the node, and its validator client when its validators are external */
  procs: ChildProcess[];
  dataDir: string;
  windows: {late: number; byMoment: Record<Moment, number>; sentLate: number; p99: number; failed: number; non2xx: number; cpuUsPerRequest: number; rssMiB: number}[];
}

const words = (text: string | undefined): string[] => (text ?? "").split(" ").filter(Boolean);

async function startSide(label: "A" | "B"): Promise<Side> {
  const tree = resolve(process.env[`BENCH_AB_${label}`] ?? HERE);
  const bin = join(tree, "bin/beacon-gateway.js");
  const dataDir = mkdtempSync(join(tmpdir(), `bench-ab-${label}-`));
  const extraArgs = words(process.env[`BENCH_AB_${label}_ARGS`]);
  const nodeFlags = words(process.env[`BENCH_AB_${label}_NODE_FLAGS`]);
  const external = process.env[`BENCH_AB_${label}_VALIDATORS`] === "external";
  const validatorArgs = external ? ["--dev-validators", "none"] : [];
  const {proc, port} = await startListening([...nodeFlags, bin, ...devNodeArgs(join(dataDir, "node"), VALIDATORS), ...validatorArgs, ...extraArgs], {ready: "REST API listening"});
  const base = `http://${HOST}:${port}`;
  const procs = [proc];
  if (external) {
    const vcArgs = ["validator", "--beacon-node", base, "--interop-indices", `0..${VALIDATORS - 1}`, "--data-dir", join(dataDir, "validator")];
    procs.push(spawn(process.execPath, [bin, ...vcArgs], {stdio: ["ignore", "ignore", "inherit"]}));
  }
  const settings = [...nodeFlags, ...extraArgs, ...(external ? ["validators in a process of their own"] : [])];
  return {label, name: `${label}: ${tree}${settings.length ? ` (${settings.join(" ")})` : ""}`, base, pid: proc.pid!, procs, dataDir, windows: []};
}

async function main(): Promise<void> {
  // the machine's own speed, measured before the nodes start
  const machine = machineLine(await bareServerRate());
  const sides: Side[] = [];
  try {
    sides.push(await startSide("A"));
    sides.push(await startSide("B"));
    for (const side of sides) await waitForHeadSlot(side.base, 3);
    const isolated: Isolation = async (measured, run) => {
      const others = sides.filter((s) => s !== measured);
      for (const p of others.flatMap((o) => o.procs)) p.kill("SIGSTOP");
      try {
        return await run();
      } finally {
        for (const p of others.flatMap((o) => o.procs)) p.kill("SIGCONT");
      }
    };
    const chain = await mixChain(sides[0].base);
    const slots = Number(process.env.BENCH_MIX_SLOTS ?? Math.max(1, chain.slotsPerEpoch - 2));
    console.log(`bench:ab, ${machine}\n${await loadGeneratorLine()}`);
    console.log(`${sides.map((s) => s.name).join("\n")}\nthe mix at ${RATE} req/s offered, ${slots}-slot windows, ${WINDOWS} a side after one unmeasured, ABBA order, the other node stopped`);
    const at = await Promise.all(sides.map((s) => timing(s.base)));
    for (let round = 0; round <= WINDOWS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const side = sides[i];
        const {outcomes, schedule, cpuUsPerRequest} = await runWindow(side, at[i], chain, {rate: RATE, slots, isolated});
        const summary = summarize(outcomes);
        const byMoment = Object.fromEntries(MOMENTS.map((m) => [m, 0])) as Record<Moment, number>;
        outcomes.forEach((o, k) => {
          if (o.latencyMs > MIX_P99_MS) byMoment[momentOf(schedule[k].atMs, at[i].slotMs)]++;
        });
        // the late requests the load generator itself sent late: their latency is partly its own
        const {late, sentLate} = summary;
        const sentLateMax = Math.max(...outcomes.map((o) => o.sentLateMs));
        // the node's RSS right after its window: what a change of the heap's settings trades late requests for
        const window = {late, byMoment, sentLate, p99: summary.p99, failed: summary.failed, non2xx: summary.non2xx, cpuUsPerRequest, rssMiB: rssMiB(side.pid)};
        if (round > 0) side.windows.push(window);
        const counts = MOMENTS.map((m) => `${m} ${byMoment[m]}`).join(", ");
        console.log(`  ${round === 0 ? "unmeasured" : `window ${round}`} ${side.label}: ${summary.requests} requests, over ${MIX_P99_MS} ms ${late} (${counts}), of them sent over ${SENT_LATE_MS} ms late by the load generator ${sentLate} (at most ${sentLateMax.toFixed(0)} ms late), p99 ${summary.p99.toFixed(1)} ms, ${summary.failed} failed, ${summary.non2xx} non-2xx${unsuccessful(summary)}, ${cpuUsPerRequest.toFixed(0)} µs CPU a request, RSS ${window.rssMiB} MiB`);
      }
    }
    printVerdict(sides);
  } finally {
    for (const side of sides) {
      for (const p of side.procs.reverse()) await stop(p);
      rmSync(side.dataDir, {recursive: true, force: true});
    }
  }
}

/** The answers other than 2xx by category and status, with an example of each: " (blocks 404 x12, e.g. /eth/v2/beacon/blocks/90)". */
function unsuccessful(summary: LoadSummary): string {
  return summary.unsuccessful.size === 0 ? "" : ` (${unsuccessfulLine(summary.unsuccessful)})`;
}

function printVerdict(sides: Side[]): void {
  const [a, b] = sides;
  const rows: [string, (w: Side["windows"][number]) => number][] = [
    [`requests over ${MIX_P99_MS} ms`, (w) => w.late],
    ...MOMENTS.map((m): [string, (w: Side["windows"][number]) => number] => [`at ${m}`, (w) => w.byMoment[m]]),
    [`of them sent over ${SENT_LATE_MS} ms late by the load generator`, (w) => w.sentLate],
    ["p99 (ms)", (w) => w.p99],
    ["CPU µs a request", (w) => w.cpuUsPerRequest],
    ["RSS after it (MiB)", (w) => w.rssMiB],
  ];
  console.log(`\n| a window's | A median | B median | B / A | p (rank test, two-sided) |\n|---|---:|---:|---:|---:|`);
  for (const [name, value] of rows) {
    const [va, vb] = [a.windows.map(value), b.windows.map(value)];
    const [ma, mb] = [median(va), median(vb)];
    console.log(`| ${name} | ${ma.toFixed(1)} | ${mb.toFixed(1)} | ${ma > 0 ? (mb / ma).toFixed(2) : "-"} | ${rankTestP(va, vb).toFixed(3)} |`);
  }
  const total = (s: Side, count: (w: Side["windows"][number]) => number) => s.windows.reduce((sum, w) => sum + count(w), 0);
  const failed = sides.map((s) => `${s.label} ${total(s, (w) => w.failed)} failed and ${total(s, (w) => w.non2xx)} non-2xx`).join(", ");
  console.log(`\nover the measured windows: ${failed}. A p under 0.05 says the windows of A and B are unlikely to be one distribution dealt in two; an A/A run shows how often the machine says so by itself.`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
