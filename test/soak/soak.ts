import {readFileSync, rmSync} from "node:fs";
import {join} from "node:path";
import {NodeProcess, chainView, getJson, tempDataDir} from "../e2e/nodeProcess.ts";
import {prng} from "../../bench/seededRandom.ts";
import {TmpfsNamespace, canMountTmpfs, fillUp} from "../faults/tmpfs.ts";
import {type FaultCounts, type RunPlan, countFaults, planRun} from "./faults.ts";
import {SignatureWatch, followEvents} from "./signatureWatch.ts";

/**
 * The soak: one dev node with every validator, under REST, event-stream and JSON-RPC load,
 * stopped (SIGKILL, sometimes SIGTERM) at seeded random moments and restarted on the same data
 * dir, meeting seeded faults meanwhile (test/soak/faults.ts): a clock moved forwards or
 * backwards between runs, a disk that fills and empties again. After each restart the database
 * must open, every finalized checkpoint seen before must still be there with the same root, and
 * the chain must go on; over the whole run it must keep finalizing, and the validators must never
 * have signed a slashable pair (two blocks of one proposer at one slot, a double or surround
 * vote), as seen from outside in the event stream.
 */

export interface SoakOptions {
  /** how long the whole run lasts */
  durationMs: number;
  seed: number;
  secondsPerSlot: number;
  /** a kill comes this long after the node is back, at the least and at the most */
  killAfterMs: [number, number];
  /** a run long enough to finalize must see finality move (a short slice may not) */
  requireFinality?: boolean;
  /** the beacon database on a tmpfs of its own that fills now and then (needs root and unshare; without them, no disk faults) */
  diskFull?: boolean;
  /** the first runs' faults, in order, instead of seeded ones (a short slice meets the faults it is meant to) */
  plans?: RunPlan[];
  log?: (line: string) => void;
}

export interface SoakReport {
  runs: number;
  kills: number;
  /** from SIGKILL to the head moving past where it was, the longest */
  longestRecoveryMs: number;
  finalizedEpochs: {first: number; last: number};
  /** RSS of each run, MiB, sampled at the end of the run */
  rssMiB: number[];
  requests: {sent: number; failed: number};
  /** what the event stream showed: attestations and blocks checked for slashable pairs */
  observed: {votes: number; proposals: number};
  faults: FaultCounts;
  problems: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** REST and JSON-RPC requests, a few at a time, until `signal` aborts. */
async function load(url: string, rpcUrl: string, counts: {sent: number; failed: number}, signal: AbortSignal): Promise<void> {
  const rest = ["/eth/v1/beacon/headers/head", "/eth/v1/beacon/states/head/validators?id=1,2,3", "/eth/v1/beacon/states/head/finality_checkpoints", "/eth/v1/node/syncing"];
  let i = 0;
  while (!signal.aborted) {
    counts.sent++;
    const call =
      i % 5 === 4
        ? fetch(rpcUrl, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify({jsonrpc: "2.0", id: i, method: "get_v1_beacon_headers_blockId", params: ["head"]}), signal})
        : fetch(url + rest[i % rest.length], {signal});
    i++;
    await call.then((r) => r.arrayBuffer()).catch(() => void (signal.aborted || counts.failed++));
    await sleep(20);
  }
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const random = prng(opts.seed);
  const log = opts.log ?? (() => undefined);
  const ns = opts.diskFull && canMountTmpfs ? await TmpfsNamespace.open("1g", [{path: "data/validator", size: "64m"}]) : null;
  const data = ns ? {dir: join(ns.mountPoint, "data"), remove: () => ns.close()} : tempDataDir("soak");
  const args = ["node", "--rest", "--rest-port", "0", "--rpc", "--rpc-port", "0", "--data-dir", data.dir, "--seconds-per-slot", String(opts.secondsPerSlot)];
  const watch = new SignatureWatch();
  const faults: FaultCounts = {sigkill: 0, sigterm: 0, clockForwards: 0, clockBackwards: 0, diskFull: 0};
  const report: SoakReport = {runs: 0, kills: 0, longestRecoveryMs: 0, finalizedEpochs: {first: -1, last: -1}, rssMiB: [], requests: {sent: 0, failed: 0}, observed: watch.observed, faults, problems: watch.problems};
  const finalizedSeen = new Map<number, string>();
  const end = Date.now() + opts.durationMs;
  let killedAt: number | null = null;
  let headBeforeKill = -1;
  let previousOffsetSlots = 0;

  try {
    while (Date.now() < end) {
      const plan = opts.plans?.[report.runs] ?? planRun(random, ns !== null);
      countFaults(faults, plan, previousOffsetSlots);
      previousOffsetSlots = plan.clockOffsetSlots;
      const env = {BEACON_GATEWAY_CLOCK_OFFSET_MS: String(plan.clockOffsetSlots * opts.secondsPerSlot * 1000)};
      const node = new NodeProcess(args, env, ns ? {mountNamespaceOf: ns.pid} : {});
      report.runs++;
      const url = await node.restUrl(120_000);
      const rpcLine = await node.waitForLog((l) => l.msg === "JSON-RPC listening", 30_000, "JSON-RPC to listen");
      const rpcUrl = `http://127.0.0.1:${rpcLine.port}`;
      // what was finalized before must still be there, with the same root
      for (const [epoch, root] of finalizedSeen) {
        const header = await getJson(url, `/eth/v1/beacon/headers/${root}`);
        if (header.status !== 200) report.problems.push(`finalized checkpoint ${epoch} (${root}) lost after restart ${report.runs - 1}`);
      }
      if (killedAt !== null) {
        while (((await chainView(url).catch(() => null))?.headSlot ?? -1) <= headBeforeKill) {
          if (Date.now() > killedAt + 180_000) {
            report.problems.push(`the chain did not move past slot ${headBeforeKill} within 3 minutes of restart ${report.runs - 1}`);
            break;
          }
          await sleep(250);
        }
        report.longestRecoveryMs = Math.max(report.longestRecoveryMs, Date.now() - killedAt);
      }
      const stop = new AbortController();
      const watching = followEvents(url, watch, stop.signal).catch(() => undefined);
      const loading = load(url, rpcUrl, report.requests, stop.signal);
      const [min, max] = opts.killAfterMs;
      const runMs = Math.min(min + random() * (max - min), Math.max(0, end - Date.now()));
      if (plan.diskFull && ns) {
        const started = Date.now();
        await sleep(runMs / 3);
        await diskFullEpisode(node, url, ns, opts.secondsPerSlot, report.problems);
        await sleep(Math.max(0, runMs - (Date.now() - started)));
      } else {
        await sleep(runMs);
      }
      const view = await chainView(url);
      const finalized = Number(view.finalized.epoch);
      if (finalized > 0) finalizedSeen.set(finalized, view.finalized.root);
      if (report.finalizedEpochs.first < 0) report.finalizedEpochs.first = finalized;
      report.finalizedEpochs.last = finalized;
      report.rssMiB.push(Math.round(processRssMiB(node.proc.pid) ?? -1));
      headBeforeKill = view.headSlot;
      stop.abort();
      await Promise.all([watching, loading]);
      killedAt = Date.now();
      const exit = await node.stop(plan.stop);
      if (plan.stop === "SIGTERM") {
        faults.sigterm++;
        if (exit.code !== 0) report.problems.push(`run ${report.runs}: SIGTERM ended the node with ${exit.code ?? exit.signal}, not 0`);
      } else {
        faults.sigkill++;
      }
      report.kills++;
      log(`run ${report.runs}: clock ${plan.clockOffsetSlots} slots${plan.diskFull ? ", disk full" : ""}, head ${view.headSlot}, finalized ${finalized}, ${plan.stop}`);
    }
    if ((opts.requireFinality ?? true) && report.finalizedEpochs.last <= report.finalizedEpochs.first) report.problems.push(`finality did not move: epoch ${report.finalizedEpochs.first} to ${report.finalizedEpochs.last}`);
    return report;
  } finally {
    data.remove();
  }
}

/**
 * The beacon database's disk fills while the node runs: the node must say so, import nothing
 * (the head stays), go on answering reads, and resume by itself once the space is freed.
 */
async function diskFullEpisode(node: NodeProcess, url: string, ns: TmpfsNamespace, secondsPerSlot: number, problems: string[]): Promise<void> {
  const filler = ns.inside(join(ns.mountPoint, "filler"));
  const seen = node.logs.length;
  const after = (pattern: RegExp) => (l: {msg: string}) => pattern.test(l.msg) && node.logs.indexOf(l as never) >= seen;
  try {
    fillUp(filler);
    await node.waitForLog(after(/^the disk is full/), 30_000, "the disk-full line");
    const paused = (await chainView(url)).headSlot;
    await sleep(2 * secondsPerSlot * 1000);
    const still = (await chainView(url)).headSlot;
    if (still > paused + 1) problems.push(`the head moved from ${paused} to ${still} while the disk was full`);
    if ((await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).status !== 200) problems.push("reads failed while the disk was full");
  } catch (err) {
    problems.push(`disk full: ${(err as Error).message}`);
  } finally {
    rmSync(filler, {force: true});
  }
  await node.waitForLog(after(/^space is back/), 30_000, "writes to resume").catch((err: Error) => void problems.push(`disk full: ${err.message}`));
}

/** The resident set size of a process, from /proc (Linux), in MiB. */
function processRssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}
