// `npm run bench:sync -- --scale` (or `BENCH_SYNC_SCALE=1`): range sync at mainnet scale. On
// bench:scale's state of a million validators (mainnet preset, bellatrix), a segment of
// mainnet-shaped blocks (bench/syncBlocks.ts: 128 full aggregates and a full sync aggregate
// each; made once, kept on disk) is
//   1. imported in this process by the node's own chain (chain.importBlock, every signature
//      checked, block after block as range sync imports them), into a LevelDB that is then the
//      serving node's data dir: the raw import rate, and every block shown to import;
//   2. served by a node started on that data dir, and range-synced over libp2p on loopback by a
//      second node started from the same genesis state (`--genesis-state`): blocks per second
//      from its `range sync started` to its last `imported block` (log times), its CPU over that
//      window and its RSS (peak during the window, and its VmHWM).
// Both nodes run on a clock shifted so that the blocks' chain (genesis SYNC_GENESIS_TIME) is at
// slot BLOCKS + 1 when the serving node starts.
// The nodes check signatures as the raw import does, on the event loop (`--bls-threads 0`, the dev
// chain's default); BENCH_SYNC_BLS_THREADS gives them worker threads instead.
//   BENCH_SCALE_VALIDATORS (1000000), BENCH_SCALE_STATE, BENCH_SYNC_SCALE_BLOCKS (32)
import {spawn} from "node:child_process";
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {loadavg, tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {type LogLine, REST_LISTENING, readLogLines} from "../test/serverProcess.ts";
import {p2pAddress} from "../test/e2e/nodeProcess.ts";
import {cpuMicros, getData, HOST, headSlot} from "./harness.ts";
import {waitFor} from "../test/waitFor.ts";
import {OUR_NAME, measuredMachineLine} from "./machine.ts";
import {rssMiB} from "./peer.ts";
import {SCALE_SECONDS_PER_SLOT, scaleState, scaleStateFile, withGenesisTime} from "./scaleState.ts";
import {nodeImport} from "./segment.ts";
import {SYNC_GENESIS_TIME, syncBlocks} from "./syncBlocks.ts";

const COUNT = Number(process.env.BENCH_SCALE_VALIDATORS ?? 1_000_000);
const BLOCKS = Number(process.env.BENCH_SYNC_SCALE_BLOCKS ?? 32);
const BLS_THREADS = process.env.BENCH_SYNC_BLS_THREADS ?? "0";
const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));

interface ScaleNode {
  pid: number;
  base: string;
  logs: LogLine[];
  /** the CPU time (µs) and moment when each watched log message first came */
  marks: Map<string, {cpu: number; at: number}>;
  /** RSS samples (MiB), every half second from the start */
  rss: Array<{at: number; mib: number}>;
  stop(): Promise<void>;
}

/** A node of the scale chain; resolves once its REST API listens. `watch`: log messages whose first arrival marks the node's CPU time. */
function startScaleNode(args: string[], env: NodeJS.ProcessEnv, watch: (line: LogLine) => string | null): Promise<ScaleNode> {
  const argv = [
    BIN, "node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--preset", "mainnet", "--genesis-fork", "bellatrix",
    "--seconds-per-slot", String(SCALE_SECONDS_PER_SLOT), "--dev-validators", "none", "--listen-address", HOST, "--tcp-port", "0",
    "--no-quic", "--no-discovery", "--bls-threads", BLS_THREADS, "--log-format", "json", ...args,
  ];
  const proc = spawn(process.execPath, argv, {stdio: ["ignore", "pipe", "inherit"], env});
  const pid = proc.pid!;
  const logs: LogLine[] = [];
  const marks = new Map<string, {cpu: number; at: number}>();
  const rss: Array<{at: number; mib: number}> = [];
  const sampler = setInterval(() => proc.exitCode === null && rss.push({at: Date.now(), mib: rssMiB(pid)}), 500);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => (clearInterval(sampler), resolve())));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    proc.once("exit", (code, signal) => reject(new Error(`the node ${args.join(" ")} exited (${code ?? signal}) before listening`)));
    readLogLines(proc.stdout!, (line) => {
      logs.push(line);
      const mark = watch(line);
      if (mark && !marks.has(mark) && proc.exitCode === null) marks.set(mark, {cpu: cpuMicros(pid), at: Date.now()});
      if (line.msg === REST_LISTENING && line.port !== undefined) resolve({pid, base: `http://${HOST}:${line.port}`, logs, marks, rss, stop});
    });
  });
}

export async function syncAtScale(): Promise<void> {
  const log = (line: string) => console.log(line);
  log(`state of ${COUNT} validators (mainnet preset, bellatrix)…`);
  const state = await scaleState(scaleStateFile(COUNT), COUNT, log);
  const blocks = await syncBlocks({state, count: BLOCKS, prefix: join(tmpdir(), `beacon-gateway-syncblocks-v1-${COUNT}`), log});
  const blockKiB = blocks.reduce((n, b) => n + b.length, 0) / blocks.length / 1024;
  const machine = await measuredMachineLine();
  const loadBefore = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), "bench-sync-scale-"));
  const nodes: ScaleNode[] = [];
  try {
    const genesis = withGenesisTime(state, SYNC_GENESIS_TIME);
    const genesisFile = join(dir, "genesis.ssz");
    writeFileSync(genesisFile, genesis);
    const clockAtStart = (SYNC_GENESIS_TIME + (BLOCKS + 1) * SCALE_SECONDS_PER_SLOT) * 1000;

    log(`raw import of the ${BLOCKS} blocks in this process (every signature checked), into the serving node's data dir…`);
    const raw = await nodeImport(
      {genesis, genesisTime: SYNC_GENESIS_TIME, blocks},
      {genesisFork: "bellatrix", secondsPerSlot: SCALE_SECONDS_PER_SLOT, now: () => clockAtStart, dbDir: join(dir, "source", "beacon")}
    );

    const offsetMs = Math.round(clockAtStart - Date.now());
    const env = {...process.env, BEACON_GATEWAY_CLOCK_OFFSET_MS: String(offsetMs)};
    const clockSlot = (ms: number) => Math.floor((ms + offsetMs - SYNC_GENESIS_TIME * 1000) / (SCALE_SECONDS_PER_SLOT * 1000));
    log("the serving node, on that data dir…");
    const source = await startScaleNode(["--data-dir", join(dir, "source"), "--genesis-state", genesisFile], env, () => null);
    nodes.push(source);
    const target = await headSlot(source.base);
    if (target !== BLOCKS) throw new Error(`the serving node's head is at slot ${target}, not ${BLOCKS}: not every block imported`);
    const targetRoot = (await getData(source.base, "/eth/v1/beacon/headers/head")).root as string;

    log("the syncing node, from the genesis state…");
    const synced = (l: LogLine) => l.msg === "imported block" && Number(l.slot) === target;
    const syncer = await startScaleNode(["--data-dir", join(dir, "syncer"), "--genesis-state", genesisFile, "--direct-peer", await p2pAddress(source.base)], env, (l) =>
      l.msg === "range sync started" ? "started" : synced(l) ? "synced" : null
    );
    nodes.push(syncer);
    await waitFor("the range sync", 30 * 60_000, async () => syncer.marks.has("synced"));
    const syncedRoot = (await getData(syncer.base, "/eth/v1/beacon/headers/head")).root as string;
    if (syncedRoot !== targetRoot) throw new Error(`the syncing node's head ${syncedRoot} is not the serving node's ${targetRoot}`);
    const startedLine = syncer.logs.find((l) => l.msg === "range sync started");
    const imported = syncer.logs.filter((l) => l.msg === "imported block" && Number(l.slot) <= target);
    if (!startedLine || imported.length !== BLOCKS) throw new Error(`the syncing node logged ${imported.length} imported blocks of ${BLOCKS}`);
    const at = (l: LogLine) => Date.parse(String(l.time)) / 1000;
    const seconds = at(imported.at(-1)!) - at(startedLine);
    const firstSeconds = at(imported[0]) - at(startedLine);
    const {started, synced: done} = {started: syncer.marks.get("started")!, synced: syncer.marks.get("synced")!};
    const cpuSeconds = (done.cpu - started.cpu) / 1e6;
    const windowRss = syncer.rss.filter((s) => s.at >= started.at && s.at <= done.at).map((s) => s.mib);
    const hwm = Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${syncer.pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
    const rate = BLOCKS / seconds;

    console.log(`\n${OUR_NAME}, nodes on loopback; ${machine}; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`);
    console.log(`${BLOCKS} blocks on ${COUNT} validators (mainnet preset, bellatrix): 128 full aggregates and a 512-bit sync aggregate each, ${blockKiB.toFixed(0)} KiB on average`);
    console.log(`raw import in this process (chain.importBlock, every signature checked): ${raw.blocksPerSecond.toFixed(2)} blocks/s, ${raw.cpuSecondsPerBlock.toFixed(2)} s of CPU a block`);
    console.log(`range sync over libp2p (--bls-threads ${BLS_THREADS}): ${BLOCKS} blocks in ${seconds.toFixed(1)} s = ${rate.toFixed(2)} blocks/s (the first imported ${firstSeconds.toFixed(1)} s after the start; from it to the last, ${((BLOCKS - 1) / (seconds - firstSeconds)).toFixed(2)} blocks/s)`);
    console.log(`range sync / raw import: ${(rate / raw.blocksPerSecond).toFixed(2)}`);
    console.log(`the nodes' clock: slot ${clockSlot(started.at)} when the sync started, ${clockSlot(done.at)} when it ended`);
    console.log(`syncing node: ${cpuSeconds.toFixed(1)} s of CPU over the sync, ${(cpuSeconds / BLOCKS).toFixed(2)} s a block (${(cpuSeconds / ((done.at - started.at) / 1000)).toFixed(2)} cores), RSS peak ${Math.max(0, ...windowRss)} MiB during the sync, ${hwm} MiB over its life (VmHWM)`);
  } finally {
    for (const node of nodes) await node.stop();
    rmSync(dir, {recursive: true, force: true});
  }
}
