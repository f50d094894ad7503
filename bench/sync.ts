// `npm run bench:sync`: how fast a node range-syncs from a peer, against the rate at which the
// same blocks import straight from memory in this process (full verification both ways), and
// how long a block takes from its proposer's import (then publish) to its import on a peer
// over gossip, p50 and p99. Nodes run as their own processes, on loopback. With `--scale` (or
// BENCH_SYNC_SCALE=1): range sync of mainnet-shaped blocks on a million validators (bench/syncScale.ts).
import type {ChildProcess} from "node:child_process";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {type ListeningProcess, startListening} from "../test/serverProcess.ts";
import {fileURLToPath} from "node:url";
import {nodeImportRate} from "./segment.ts";
import {OUR_NAME, measuredMachineLine} from "./machine.ts";
import {headSlot, stop} from "./harness.ts";
import {waitFor} from "../test/waitFor.ts";

const SCALE = process.argv.includes("--scale") || process.env.BENCH_SYNC_SCALE === "1";
// the scale chain is of the mainnet preset, the dev chain here of the minimal one
process.env.LODESTAR_PRESET = SCALE ? "mainnet" : (process.env.LODESTAR_PRESET ?? "minimal");
// SSZ roots with the hasher the node runs (src/hasher.ts), in this process too
await (await import("../src/hasher.ts")).useFastestHasher();
const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
const HOST = "127.0.0.1";
/** blocks the source chain makes before the syncing node starts */
const BLOCKS = Number(process.env.BENCH_SYNC_BLOCKS ?? 96);
const SECONDS_PER_SLOT = 1;

/** Starts a node and resolves once its REST API listens; its JSON log lines are kept. */
function startNode(args: string[]): Promise<ListeningProcess> {
  return startListening([BIN, "node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--listen-address", HOST, "--tcp-port", "0", "--no-discovery", "--seconds-per-slot", String(SECONDS_PER_SLOT), "--log-format", "json", ...args]);
}

async function json(base: string, path: string): Promise<any> {
  return (await fetch(base + path)).json();
}

/** Arrival time (ms) of each `block` event of a node, by block root. */
function blockArrivals(base: string, signal: AbortSignal): Map<string, number> {
  const seen = new Map<string, number>();
  void (async () => {
    const res = await fetch(`${base}/eth/v1/events?topics=block`, {signal});
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const now = performance.now();
      buffer += decoder.decode(chunk, {stream: true});
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (data) seen.set(JSON.parse(data).block, now);
      }
    }
  })().catch(() => undefined);
  return seen;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main(): Promise<void> {
  // the machine, and the bare server's rate on it now, before the nodes start
  const machine = await measuredMachineLine();
  const dir = mkdtempSync(join(tmpdir(), "bench-sync-"));
  const procs: ChildProcess[] = [];
  const abort = new AbortController();
  try {
    const genesisTime = Math.floor(Date.now() / 1000) + 8;
    const source = await startNode(["--data-dir", join(dir, "source"), "--genesis-time", String(genesisTime)]);
    procs.push(source.proc);
    const sourceUrl = `http://${HOST}:${source.port}`;
    const identity = await json(sourceUrl, "/eth/v1/node/identity");
    const peer = (identity.data.p2p_addresses as string[])[0];
    const genesisFile = join(dir, "genesis.ssz");
    const genesis = new Uint8Array(await (await fetch(`${sourceUrl}/eth/v2/debug/beacon/states/genesis`, {headers: {accept: "application/octet-stream"}})).arrayBuffer());
    writeFileSync(genesisFile, genesis);

    // a follower from the start: every block reaches it by gossip
    const follower = await startNode(["--data-dir", join(dir, "follower"), "--genesis-state", genesisFile, "--direct-peer", peer]);
    procs.push(follower.proc);
    const followerUrl = `http://${HOST}:${follower.port}`;
    const atSource = blockArrivals(sourceUrl, abort.signal);
    const atFollower = blockArrivals(followerUrl, abort.signal);

    console.log(`source chain: ${BLOCKS} blocks at ${SECONDS_PER_SLOT} s slots…`);
    await waitFor(`${BLOCKS} blocks`, (BLOCKS * SECONDS_PER_SLOT + 60) * 1000, async () => (await headSlot(sourceUrl)) >= BLOCKS);
    const target = await headSlot(sourceUrl);

    // a node that starts now and range-syncs the whole chain
    const syncer = await startNode(["--data-dir", join(dir, "syncer"), "--genesis-state", genesisFile, "--direct-peer", peer]);
    procs.push(syncer.proc);
    const syncerUrl = `http://${HOST}:${syncer.port}`;
    await waitFor("the range sync", 300_000, async () => (await headSlot(syncerUrl)) >= target);
    const started = syncer.logs.find((l) => l.msg === "range sync started");
    const synced = syncer.logs.filter((l) => l.msg === "imported block" && Number(l.slot) <= target).at(-1);
    if (!started || !synced) throw new Error("the syncing node did not log its range sync");
    const syncSeconds = (Date.parse(String(synced.time)) - Date.parse(String(started.time))) / 1000;
    const syncedBlocks = syncer.logs.filter((l) => l.msg === "imported block" && Number(l.slot) <= target).length;
    abort.abort();

    // the same blocks, imported in this process from memory
    const blockBytes: Uint8Array[] = [];
    for (let slot = 1; slot <= target; slot++) {
      const res = await fetch(`${sourceUrl}/eth/v2/beacon/blocks/${slot}`, {headers: {accept: "application/octet-stream"}});
      if (res.status === 200) blockBytes.push(new Uint8Array(await res.arrayBuffer()));
    }
    for (const p of procs.splice(0)) await stop(p);
    const raw = await nodeImportRate({genesis, genesisTime, blocks: blockBytes});

    const latencies = [...atFollower].flatMap(([root, t]) => (atSource.has(root) ? [t - atSource.get(root)!] : [])).sort((a, b) => a - b);
    const rate = syncedBlocks / syncSeconds;
    console.log(`\n${OUR_NAME}, nodes on loopback; ${machine}`);
    console.log(`range sync: ${syncedBlocks} blocks in ${syncSeconds.toFixed(2)} s = ${rate.toFixed(1)} blocks/s`);
    console.log(`raw import of the same ${blockBytes.length} blocks in this process: ${raw.toFixed(1)} blocks/s`);
    console.log(`range sync / raw import: ${(rate / raw).toFixed(2)}`);
    console.log(`gossip, proposer's import to the peer's import, ${latencies.length} blocks: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
  } finally {
    abort.abort();
    for (const p of procs) await stop(p);
    rmSync(dir, {recursive: true, force: true});
  }
}

if (SCALE) await (await import("./syncScale.ts")).syncAtScale();
else await main();
