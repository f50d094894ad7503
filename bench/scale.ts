// `npm run bench:scale`: the REST answers a validator client and an explorer ask of a node
// whose state holds a million validators (mainnet preset, bellatrix), on a synthetic genesis
// state (bench/scaleState.ts, made once and kept). The node starts from it without validators
// of its own; each request is timed from this process (time to the first byte and to the last),
// with the node's peak RSS during it (VmHWM, reset before each request through
// /proc/<pid>/clear_refs). With `BENCH_PEER=<folder>` a Lodestar 1.5.1 peer (its README) is
// started on the same state and asked the same, once its head is our node's: each node is asked
// while the other is stopped (SIGSTOP), both on the genesis state, before our node moves its
// head (three blocks, the last one past an epoch transition) with the peer gone.
//
//   BENCH_SCALE_VALIDATORS (1000000), BENCH_SCALE_STATE (a file in the temp folder)
import type {ChildProcess} from "node:child_process";
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {type ListeningProcess, startListening} from "../test/serverProcess.ts";
import {fileURLToPath} from "node:url";
import {SCALE_SECONDS_PER_SLOT, scaleState, scaleStateFile, withGenesisTime} from "./scaleState.ts";
import {freePort, peerName, rssMiB, startPeer} from "./peer.ts";
import {OUR_NAME, measuredMachineLine} from "./machine.ts";

process.env.LODESTAR_PRESET = "mainnet";
const COUNT = Number(process.env.BENCH_SCALE_VALIDATORS ?? 1_000_000);
const STATE_FILE = scaleStateFile(COUNT);
const PEER_DIR = process.env.BENCH_PEER;
/** the issue's bound on what all validators as JSON add to the peak RSS: 300 MB (decimal), in MiB */
const MAX_PEAK_RSS_MIB = 300e6 / 2 ** 20;
const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
const HOST = "127.0.0.1";

interface Timed {
  status: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  /** the server's peak RSS during the request, above its RSS before it */
  peakRssMiB: number;
}

function vmHwmMiB(pid: number): number {
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
}

async function timed(pid: number, url: string, init: RequestInit = {}): Promise<Timed> {
  // 5: reset the peak resident set size to the current one, then read that (read before, a
  // collection in between would give a peak below it)
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = rssMiB(pid);
  const start = performance.now();
  const res = await fetch(url, init);
  let firstByteMs = -1;
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (firstByteMs < 0) firstByteMs = performance.now() - start;
    bytes += chunk.length;
  }
  const totalMs = performance.now() - start;
  return {status: res.status, firstByteMs: Math.max(firstByteMs, 0), totalMs, bytes, peakRssMiB: vmHwmMiB(pid) - before};
}

/** The median run of `n` by total time. */
async function median(n: number, run: () => Promise<Timed>): Promise<Timed> {
  const runs: Timed[] = [];
  for (let i = 0; i < n; i++) runs.push(await run());
  return runs.sort((a, b) => a.totalMs - b.totalMs)[Math.floor(n / 2)];
}

interface Case {
  name: string;
  run: (base: string, pid: number) => Promise<Timed>;
}

/** The chain's current epoch (genesis is set when the bench starts; mainnet's 32 slots an epoch). */
let genesisTime = 0;
const currentEpoch = (): number => Math.floor((Date.now() / 1000 - genesisTime) / SCALE_SECONDS_PER_SLOT / 32);

const ids = (n: number, from = 0): string[] => Array.from({length: n}, (_, i) => String(from + i * Math.floor(COUNT / n)));
const json = {"content-type": "application/json"};

const CASES: Case[] = [
  {name: "GET validators (all), JSON", run: (base, pid) => timed(pid, `${base}/eth/v1/beacon/states/head/validators`)},
  // the spec gives the validators list no SSZ form: validator identities (index, pubkey, activation epoch) are its SSZ list
  {
    name: "POST validator_identities (all), SSZ",
    run: (base, pid) => timed(pid, `${base}/eth/v1/beacon/states/head/validator_identities`, {method: "POST", headers: {...json, accept: "application/octet-stream"}, body: "[]"}),
  },
  {name: "GET debug state (head), SSZ", run: (base, pid) => timed(pid, `${base}/eth/v2/debug/beacon/states/head`, {headers: {accept: "application/octet-stream"}})},
  {name: "GET validators?id= (1,000 ids), median of 5", run: (base, pid) => median(5, () => timed(pid, `${base}/eth/v1/beacon/states/head/validators?${ids(1000).map((i) => `id=${i}`).join("&")}`))},
  {
    name: "POST validators (10,000 ids), median of 3",
    run: (base, pid) => median(3, () => timed(pid, `${base}/eth/v1/beacon/states/head/validators`, {method: "POST", headers: json, body: JSON.stringify({ids: ids(10_000)})})),
  },
  {name: "GET validator_balances (all)", run: (base, pid) => timed(pid, `${base}/eth/v1/beacon/states/head/validator_balances`)},
  {name: "GET committees (current epoch)", run: (base, pid) => timed(pid, `${base}/eth/v1/beacon/states/head/committees?epoch=${currentEpoch()}`)},
  {
    name: "POST attester duties (10,000 indices), median of 3",
    run: (base, pid) => median(3, () => timed(pid, `${base}/eth/v1/validator/duties/attester/${currentEpoch()}`, {method: "POST", headers: json, body: JSON.stringify(ids(10_000))})),
  },
  {name: "GET proposer duties (current epoch), median of 5", run: (base, pid) => median(5, () => timed(pid, `${base}/eth/v1/validator/duties/proposer/${currentEpoch()}`))},
];

function startNode(args: string[]): Promise<ListeningProcess> {
  return startListening([BIN, ...args, "--log-format", "json"]);
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
}

function row(name: string, t: Timed | undefined): string {
  if (!t) return `${name.padEnd(52)} -`;
  return `${name.padEnd(52)} ${String(t.status).padStart(3)}  first byte ${t.firstByteMs.toFixed(0).padStart(6)} ms  total ${t.totalMs.toFixed(0).padStart(6)} ms  ${(t.bytes / 1e6).toFixed(1).padStart(7)} MB  peak RSS +${t.peakRssMiB} MiB`;
}

/**
 * Waits until the peer's head is our node's (the same genesis block: neither has made a block),
 * so that it is measured on the same state, not while it still syncs. Throws after a minute.
 */
async function sameHead(ours: string, peer: string): Promise<void> {
  const head = async (base: string): Promise<string> => ((await (await fetch(`${base}/eth/v1/beacon/headers/head`)).json()) as {data: {root: string}}).data.root;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [a, b] = await Promise.all([head(ours), head(peer).catch(() => "")]);
    if (a === b) {
      const syncing = ((await (await fetch(`${peer}/eth/v1/node/syncing`)).json()) as {data: unknown}).data;
      console.log(`the peer's head is ours (${a}); its node/syncing: ${JSON.stringify(syncing)}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`the peer's head ${b} is not ours ${a} after a minute`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Waits until a server's RSS holds still: 4 samples a second apart within 16 MiB (at most a
 * minute). Just after it starts listening, a server is still doing its start-up work and has not
 * collected its garbage: a peak measured above that "rest" would count its start-up, not the request.
 */
async function settled(pid: number): Promise<void> {
  const samples: number[] = [];
  for (let i = 0; i < 60; i++) {
    samples.push(rssMiB(pid));
    const last = samples.slice(-4);
    if (last.length === 4 && Math.max(...last) - Math.min(...last) <= 16) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function measureAll(label: string, base: string, pid: number): Promise<Map<string, Timed>> {
  const results = new Map<string, Timed>();
  await settled(pid);
  console.log(`\n${label}: RSS at rest ${rssMiB(pid)} MiB`);
  for (const c of CASES) {
    const t = await c.run(base, pid);
    results.set(c.name, t);
    console.log(row(c.name, t));
  }
  console.log(`${label}: RSS after ${rssMiB(pid)} MiB`);
  return results;
}

/**
 * Moving the head one slot: the slot's proposer duties (at an epoch's first slot, the first ask
 * runs the epoch transition), a block for the slot produced by the node (`produceBlockV3`,
 * its proposer's randao reveal signed here with the interop key), signed and published as SSZ,
 * timed until the node's head is that block.
 */
async function moveHead(base: string, atLeastSlot = 0): Promise<{slot: number; dutiesMs: number; produceMs: number; importMs: number}> {
  const {DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO} = await import("@lodestar/params");
  const {computeDomain, computeEpochAtSlot, computeSigningRoot, interopSecretKey} = await import("@lodestar/state-transition");
  const {ssz} = await import("@lodestar/types");
  const {fromHex, toHex} = await import("@lodestar/utils");
  const get = async (path: string): Promise<any> => ((await (await fetch(base + path)).json()) as {data: unknown}).data;
  const genesis = await get("/eth/v1/beacon/genesis");
  const genesisTime = Number(genesis.genesis_time);  // the node's, the same as the bench's
  const gvr = fromHex(genesis.genesis_validators_root);
  const forkVersion = fromHex((await get("/eth/v1/beacon/states/head/fork")).current_version);
  const headSlot = Number((await get("/eth/v1/beacon/headers/head")).header.message.slot);
  // the next slot that has begun, after the head
  const slot = Math.max(atLeastSlot, headSlot + 1, Math.floor((Date.now() / 1000 - genesisTime) / SCALE_SECONDS_PER_SLOT) + 1);
  const waitMs = (genesisTime + slot * SCALE_SECONDS_PER_SLOT) * 1000 - Date.now();
  if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs + 100));
  const epoch = computeEpochAtSlot(slot);
  const asked = performance.now();
  const duty = ((await get(`/eth/v1/validator/duties/proposer/${epoch}`)) as {slot: string; validator_index: string}[]).find((d) => Number(d.slot) === slot)!;
  const dutiesMs = performance.now() - asked;
  const key = interopSecretKey(Number(duty.validator_index));
  const randao = key.sign(computeSigningRoot(ssz.Epoch, epoch, computeDomain(DOMAIN_RANDAO, forkVersion, gvr))).toBytes();
  const started = performance.now();
  const produced = (await (await fetch(`${base}/eth/v3/validator/blocks/${slot}?randao_reveal=${toHex(randao)}`)).json()) as {data: unknown};
  const block = ssz.bellatrix.BeaconBlock.fromJson(produced.data);
  const produceMs = performance.now() - started;
  const signature = key.sign(computeSigningRoot(ssz.bellatrix.BeaconBlock, block, computeDomain(DOMAIN_BEACON_PROPOSER, forkVersion, gvr))).toBytes();
  const published = performance.now();
  const res = await fetch(`${base}/eth/v2/beacon/blocks`, {
    method: "POST",
    headers: {"content-type": "application/octet-stream", "eth-consensus-version": "bellatrix"},
    body: ssz.bellatrix.SignedBeaconBlock.serialize({message: block, signature}),
  });
  if (res.status !== 200 && res.status !== 202) throw new Error(`publishing the block of slot ${slot}: HTTP ${res.status} ${await res.text()}`);
  while (Number((await get("/eth/v1/beacon/headers/head")).header.message.slot) < slot) await new Promise((r) => setTimeout(r, 5));
  return {slot, dutiesMs, produceMs, importMs: performance.now() - published};
}

async function main(): Promise<void> {
  // the state is built in this process: with the hasher the node runs (src/hasher.ts)
  await (await import("../src/hasher.ts")).useFastestHasher();
  console.log(`state of ${COUNT} validators (mainnet preset, bellatrix)…`);
  const state = await scaleState(STATE_FILE, COUNT, (line) => console.log(line));
  // the machine, and the bare server's rate on it now, before the nodes start
  const machine = await measuredMachineLine();
  const dir = mkdtempSync(join(tmpdir(), "bench-scale-"));
  const procs: ChildProcess[] = [];
  try {
    const genesisFile = join(dir, "genesis.ssz");
    genesisTime = Math.floor(Date.now() / 1000);
    writeFileSync(genesisFile, withGenesisTime(state, genesisTime));
    const started = performance.now();
    const node = await startNode([
      "node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--preset", "mainnet", "--genesis-fork", "bellatrix",
      "--seconds-per-slot", String(SCALE_SECONDS_PER_SLOT), "--genesis-state", genesisFile, "--dev-validators", "none",
      "--rest-max-query-ids", "1000", "--data-dir", join(dir, "node"), "--listen-address", HOST, "--tcp-port", "0", "--no-quic", "--no-discovery",
    ]);
    procs.push(node.proc);
    const base = `http://${HOST}:${node.port}`;
    console.log(`beacon-gateway up in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    let peer: {proc: ChildProcess; base: string; name: string} | undefined;
    if (PEER_DIR) {
      const peerStarted = performance.now();
      const launched = await startPeer(PEER_DIR, {
        restPort: await freePort(),
        p2pPort: await freePort(),
        validators: 0,
        env: {FOLLOW: base, ANCHOR_STATE: genesisFile, LODESTAR_PRESET: "mainnet", START_VALIDATORS: "0", SECONDS_PER_SLOT: String(SCALE_SECONDS_PER_SLOT)},
        readyTimeoutMs: 900_000,
      });
      procs.push(launched.proc);
      peer = {...launched, name: await peerName(launched.base, PEER_DIR)};
      console.log(`${peer.name} up in ${((performance.now() - peerStarted) / 1000).toFixed(0)} s`);
      await sameHead(base, peer.base);
    }
    // each node asked with the other stopped, so that neither shares the cores with the other's work
    const isolated = async <T>(stopped: ChildProcess | undefined, run: () => Promise<T>): Promise<T> => {
      stopped?.kill("SIGSTOP");
      try {
        return await run();
      } finally {
        stopped?.kill("SIGCONT");
      }
    };
    const ours = await isolated(peer?.proc, () => measureAll(OUR_NAME, base, node.proc.pid!));
    const theirs = peer && (await isolated(node.proc, () => measureAll(peer.name, peer.base, peer.proc.pid!)));
    const json = ours.get("GET validators (all), JSON")!;
    const byIds = ours.get("GET validators?id= (1,000 ids), median of 5")!;
    const met = json.firstByteMs < 1000 && json.totalMs < 10_000 && json.peakRssMiB < MAX_PEAK_RSS_MIB && byIds.totalMs < 50;
    const not2xx = (results: Map<string, Timed>): string => `${[...results.values()].filter((t) => t.status < 200 || t.status > 299).length} of ${results.size} answers not 2xx`;
    console.log(`\n${machine}`);
    console.log(`${OUR_NAME}: ${not2xx(ours)}${peer && theirs ? `; ${peer.name}: ${not2xx(theirs)}` : ""}`);
    if (peer) await stop(peer.proc);
    // two slots within the epoch, then the first slot of the next epoch (its import runs the epoch transition)
    for (const atLeast of [0, 0, (currentEpoch() + 1) * 32]) {
      const moved = await moveHead(base, atLeast);
      console.log(`moving the head to slot ${moved.slot}: proposer duties ${moved.dutiesMs.toFixed(0)} ms, block produced in ${moved.produceMs.toFixed(0)} ms, published and imported (head moved) in ${moved.importMs.toFixed(0)} ms; RSS ${rssMiB(node.proc.pid!)} MiB`);
    }
    console.log(`targets (all validators as JSON: first byte < 1 s, done < 10 s, peak RSS under +300 MB, ${MAX_PEAK_RSS_MIB.toFixed(0)} MiB; 1,000 ids < 50 ms): ${met ? "met" : "NOT met"}`);
  } finally {
    for (const proc of procs.reverse()) await stop(proc);
    rmSync(dir, {recursive: true, force: true});
  }
}

await main();
