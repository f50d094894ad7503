// `npm run bench:gossip [-- --slots N]`: a node with all subnets (`--subscribe-all-subnets`) on
// bench:scale's state of a million validators (mainnet preset, bellatrix), sent what mainnet's
// gossip carries in a slot (bench/gossipMessages.ts: made once, kept on disk) over real libp2p by
// driver peers of the node's own libp2p stack (test/e2e/hostilePeer.ts), each message at its
// moment of the slot. It reads from the node's metrics the verdicts by topic, the time from
// arrival to verdict, the messages ignored because the node was overloaded, its event-loop lag;
// from its event stream when the head moved each slot; times a light REST load (a worker
// thread); samples the node's CPU and RSS. In the same run, before the node starts: the ceiling
// of the same messages' signature sets through @chainsafe/blst alone (batched, as many threads
// as the node's BLS pool) and of their snappy and SSZ decoding (bench/gossipCeiling.ts).
//
// The node runs on a clock shifted so that the messages' chain (genesis GOSSIP_GENESIS_TIME)
// starts `BENCH_GOSSIP_START_S` (120) after it is launched: its start on a million validators
// must fit in that. `BENCH_GOSSIP_PEERS` (4) driver peers, the messages dealt in turn.
// `BENCH_GOSSIP_SHARE` (1) sends that share of the single attestations only (every other message
// whole): to find the share a machine keeps up with, or to check the bench on a loaded one.
// `BENCH_GOSSIP_LOG_LEVEL` is the node's `--log-level` (INFO): with "INFO; TRACE:network" the node
// logs why it did not accept a message, and the bench prints those reasons, counted.
// `BENCH_GOSSIP_NODE_OPTIONS` is the node's NODE_OPTIONS alone ("--cpu-prof --cpu-prof-dir=DIR":
// a profile of the node's threads, not of the bench and its driver peers).
//   BENCH_SCALE_VALIDATORS (1000000), BENCH_SCALE_STATE, BENCH_GOSSIP_SLOTS (2, or --slots)
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {availableParallelism, tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {Worker} from "node:worker_threads";
import {REST_LISTENING, startListening} from "../test/serverProcess.ts";
import {createHostilePeer, NodeView, type HostilePeer} from "../test/e2e/hostilePeer.ts";
import {p2pAddress} from "../test/e2e/nodeProcess.ts";
import {parseExposition, type Exposition} from "../test/prometheusText.ts";
import {cpuMicros, HOST} from "./harness.ts";
import {measuredMachineLine} from "./machine.ts";
import {rssMiB} from "./peer.ts";
import type {GossipRecord} from "./gossipCache.ts";
import {blstCeiling, decodeCeiling} from "./gossipCeiling.ts";
import {GOSSIP_GENESIS_TIME, gossipMessages} from "./gossipMessages.ts";
import {printGossipReport, type GossipRun} from "./gossipReport.ts";
import {SCALE_SECONDS_PER_SLOT, scaleState, scaleStateFile, withGenesisTime} from "./scaleState.ts";

process.env.LODESTAR_PRESET = "mainnet";
const COUNT = Number(process.env.BENCH_SCALE_VALIDATORS ?? 1_000_000);
const slotsArg = process.argv.indexOf("--slots");
const SLOTS = Number(slotsArg >= 0 ? process.argv[slotsArg + 1] : (process.env.BENCH_GOSSIP_SLOTS ?? 2));
const PEERS = Number(process.env.BENCH_GOSSIP_PEERS ?? 4);
const START_S = Number(process.env.BENCH_GOSSIP_START_S ?? 120);
const LOG_LEVEL = process.env.BENCH_GOSSIP_LOG_LEVEL ?? "INFO";
/** the share of each slot's single attestations sent (1: all of them, as mainnet) */
const SHARE = Number(process.env.BENCH_GOSSIP_SHARE ?? 1);
const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
const SLOT_MS = SCALE_SECONDS_PER_SLOT * 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(port: number): Promise<Exposition> {
  return parseExposition(await (await fetch(`http://${HOST}:${port}/metrics`)).text());
}

/**
 * Connects a driver peer to the node and waits until it knows the node is on every topic. The ids
 * of the messages it publishes are computed beforehand (`ids`, by the message's bytes): the
 * driver stands for many machines, and its own CPU is the node's.
 */
async function connectDriver(o: {config: any; view: NodeView; nodeAddress: string; nodeId: string; currentEpoch: () => number; topics: string[]; ids: WeakMap<Uint8Array, Uint8Array>}): Promise<HostilePeer> {
  const {multiaddr} = await import("@multiformats/multiaddr");
  const {createMsgIdFn} = await import("../src/network/gossip/encoding.ts");
  const forkDigest = o.config.forkBoundary2ForkDigest(o.config.getForkBoundaryAtEpoch(0));
  const msgId = createMsgIdFn(o.config);
  const peer = await createHostilePeer(o.config, o.currentEpoch, () => o.view.chainStatus(forkDigest), {msgIdFn: (msg) => o.ids.get(msg.data) ?? msgId(msg)});
  // the node admits a few new connections a second from one address: retry as a peer would
  for (let attempt = 1; ; attempt++) {
    try {
      await peer.libp2p.dial(multiaddr(o.nodeAddress), {signal: AbortSignal.timeout(10_000)});
      break;
    } catch (e) {
      if (attempt >= 5) throw e;
      await sleep(1_100);
    }
  }
  await peer.reqResp.status(o.nodeId as never, await o.view.chainStatus(forkDigest));
  const gossipsub = peer.libp2p.services.gossipsub;
  for (const t of o.topics) gossipsub.subscribe(t);
  const deadline = Date.now() + 60_000;
  while (!o.topics.every((t) => gossipsub.getSubscribers(t).map(String).includes(o.nodeId))) {
    if (Date.now() > deadline) throw new Error("the node did not subscribe to every topic toward a driver peer within a minute");
    await sleep(250);
  }
  return peer;
}

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  await (await import("../src/hasher.ts")).useFastestHasher();
  log(`state of ${COUNT} validators (mainnet preset, bellatrix)…`);
  const state = await scaleState(scaleStateFile(COUNT), COUNT, log);
  const made = await gossipMessages({state, slots: SLOTS, prefix: join(tmpdir(), `beacon-gateway-gossip-v1-${COUNT}`), log});
  // a share of the attestations: every one whose place among them falls under it
  const records = made.filter((r, i) => r.kind !== "beacon_attestation" || ((i * 0.6180339887) % 1) < SHARE);
  const machine = await measuredMachineLine();
  const threads = Math.max(1, availableParallelism() - 1);
  log(`ceilings: ${records.reduce((n, r) => n + r.sets.length, 0)} signature sets through blst on ${threads} thread(s), and the messages' decoding…`);
  const blst = await blstCeiling(records, threads);
  if (!blst.valid) throw new Error("a batch of the generated signature sets did not verify: the kept messages are wrong (delete them and run again)");
  const decode = await decodeCeiling(records);

  const {createBeaconConfig} = await import("@lodestar/config");
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {readStateBytesHeader} = await import("../src/chain/genesis.ts");
  const {stringifyTopic} = await import("../src/network/gossip/topics.ts");
  const config = createBeaconConfig(devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}}), readStateBytesHeader(state).genesisValidatorsRoot);
  const boundary = config.getForkBoundaryAtEpoch(0);
  const subnetted = new Set(["beacon_attestation", "sync_committee"]);
  const topicOf = (r: GossipRecord) => stringifyTopic(config, {type: r.kind, subnet: subnetted.has(r.kind) ? r.subnet : undefined, boundary});
  const topics = [...new Set(records.map(topicOf))];

  const dir = mkdtempSync(join(tmpdir(), "bench-gossip-"));
  const peers: HostilePeer[] = [];
  // the chain's genesis, in this machine's time: START_S from now
  const genesisMs = Date.now() + START_S * 1000;
  const currentSlot = () => Math.max(0, Math.floor((Date.now() - genesisMs) / SLOT_MS));
  const genesisFile = join(dir, "genesis.ssz");
  writeFileSync(genesisFile, withGenesisTime(state, GOSSIP_GENESIS_TIME));
  const launched = performance.now();
  const node = await startListening(
    [
      BIN, "node", "--rest", "--rest-port", "0", "--rest-address", HOST, "--preset", "mainnet", "--genesis-fork", "bellatrix",
      "--seconds-per-slot", String(SCALE_SECONDS_PER_SLOT), "--genesis-state", genesisFile, "--dev-validators", "none",
      "--data-dir", join(dir, "node"), "--listen-address", HOST, "--tcp-port", "0", "--no-quic", "--no-discovery",
      "--subscribe-all-subnets", "--bls-threads", String(threads), "--metrics", "--metrics-port", "0", "--log-format", "json", "--log-level", LOG_LEVEL,
    ],
    // ready once the metrics server listens, on any free port it logs (a port picked here before
    // the node's half-minute start on a million validators was once taken meanwhile); the REST
    // API listens before it
    {ready: "metrics listening", env: {...process.env, ...(process.env.BENCH_GOSSIP_NODE_OPTIONS ? {NODE_OPTIONS: process.env.BENCH_GOSSIP_NODE_OPTIONS} : {}), BEACON_GATEWAY_CLOCK_OFFSET_MS: String(GOSSIP_GENESIS_TIME * 1000 - genesisMs)}}
  );
  const metricsPort = node.port;
  const pid = node.proc.pid!;
  try {
    const base = `http://${HOST}:${node.logs.find((l) => l.msg === REST_LISTENING)!.port}`;
    log(`beacon-gateway up in ${((performance.now() - launched) / 1000).toFixed(0)} s (pid ${pid}), metrics on ${metricsPort}`);
    const view = new NodeView(base);
    const nodeAddress = await p2pAddress(base);
    const nodeId = nodeAddress.split("/p2p/")[1];
    const currentEpoch = () => Math.floor(currentSlot() / 32);
    const {createMsgIdFn} = await import("../src/network/gossip/encoding.ts");
    const msgId = createMsgIdFn(config);
    const ids = new WeakMap<Uint8Array, Uint8Array>();
    for (const r of records) ids.set(r.data, msgId({type: "unsigned", topic: topicOf(r), data: r.data} as never));
    for (let i = 0; i < PEERS; i++) peers.push(await connectDriver({config, view, nodeAddress, nodeId, currentEpoch, topics, ids}));
    log(`${PEERS} driver peers on ${topics.length} topics`);
    // the node forwards what it accepts to the other driver peers: the first copy back is when it
    // had validated the message and sent it on (gossipsub's message id strings are unpadded base64)
    const recordOfId = new Map(records.map((r) => [Buffer.from(ids.get(r.data)!).toString("base64").replace(/=+$/, ""), r]));
    const forwardedAtMs = new Map<GossipRecord, number>();
    for (const peer of peers) {
      peer.libp2p.services.gossipsub.addEventListener("gossipsub:message", (evt) => {
        const r = recordOfId.get(evt.detail.msgId);
        if (r && !forwardedAtMs.has(r)) forwardedAtMs.set(r, Date.now());
      });
    }
    const firstMs = genesisMs + SLOT_MS;
    if (Date.now() > firstMs - 2000) throw new Error(`the node and its peers were not ready before slot 1 (${START_S} s after the launch): set BENCH_GOSSIP_START_S higher`);
    await sleep(firstMs - 2000 - Date.now());

    const before = await scrape(metricsPort);
    const cpuBefore = cpuMicros(pid);
    const rss = {start: rssMiB(pid), peak: 0, end: 0};
    const rssTimer = setInterval(() => (rss.peak = Math.max(rss.peak, rssMiB(pid))), 1000);
    const sampler = new Worker(new URL("./gossipRestSampler.ts", import.meta.url), {workerData: {base, intervalMs: 50, genesisMs, secondsPerSlot: SCALE_SECONDS_PER_SLOT}});
    const sampled = new Promise<{latencies: number[]; failures: number; heads: Array<{slot: number; atMs: number}>}>((resolve) => sampler.once("message", resolve));

    // each message at its moment; publishing does not wait for the send
    const due = (r: GossipRecord) => genesisMs + r.slot * SLOT_MS + r.atMs;
    const schedule = [...records].sort((a, b) => due(a) - due(b));
    let publishLateMs = 0;
    const publishErrors = new Map<string, number>();
    const publish = (r: GossipRecord, i: number) =>
      peers[i % peers.length].libp2p.services.gossipsub.publish(topicOf(r), r.data).catch((e: Error) => publishErrors.set(e.message, (publishErrors.get(e.message) ?? 0) + 1));
    // blocks on time whatever the backlog of the rest: on mainnet they come from other peers than the attestations
    schedule.filter((r) => r.kind === "beacon_block").forEach((r, i) => setTimeout(() => void publish(r, i), due(r) - Date.now()));
    const others = schedule.filter((r) => r.kind !== "beacon_block");
    for (let i = 0; i < others.length; i++) {
      const r = others[i];
      const wait = due(r) - Date.now();
      if (wait > 1) await sleep(wait);
      else if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
      publishLateMs = Math.max(publishLateMs, Date.now() - due(r));
      void publish(r, i);
    }
    // until every message has its verdict, or a slot after the last one ends
    const endMs = genesisMs + (SLOTS + 2) * SLOT_MS;
    const verdicts = (e: Exposition) => e.samples.filter((s) => s.name === "beacon_gateway_gossip_messages_received_total").reduce((n, s) => n + s.value, 0);
    const offered = verdicts(before) + records.length;
    while (Date.now() < endMs && verdicts(await scrape(metricsPort)) < offered) await sleep(1000);
    // and until the forwards have stopped coming back (behind the driver peers' backlog)
    for (let seen = -1; Date.now() < endMs && forwardedAtMs.size !== seen; ) {
      seen = forwardedAtMs.size;
      await sleep(1000);
    }
    const after = await scrape(metricsPort);
    const cpuSeconds = (cpuMicros(pid) - cpuBefore) / 1e6;
    clearInterval(rssTimer);
    rss.end = rssMiB(pid);
    sampler.postMessage("stop");
    const rest = await sampled;
    await sampler.terminate();

    const run: GossipRun = {
      machine,
      date: new Date().toISOString().slice(0, 10),
      validators: COUNT,
      slots: SLOTS,
      peers: PEERS,
      share: SHARE,
      threads,
      records,
      before,
      after,
      windowSeconds: (SLOTS * SLOT_MS) / 1000,
      cpuSeconds,
      rss,
      rest,
      slotStartMs: (slot) => genesisMs + slot * SLOT_MS,
      forwardedAtMs,
      publishLateMs,
      publishErrors,
      blst,
      decode,
    };
    printGossipReport(run);
    // why messages were not accepted, where the node logged it (BENCH_GOSSIP_LOG_LEVEL)
    const reasons = new Map<string, number>();
    for (const l of node.logs.filter((l) => l.msg === "gossip message not accepted")) {
      const key = `${l.type} ${l.result}: ${String(l.reason).replace(/\d+/g, "N").replace(/0x[0-9a-f]+/g, "0x…")}`;
      reasons.set(key, (reasons.get(key) ?? 0) + 1);
    }
    for (const [reason, count] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`not accepted x${count}: ${reason}`);
    // the node's warnings and errors, and its peers coming and going, counted
    const notes = new Map<string, number>();
    for (const l of node.logs.filter((l) => l.level >= 40 || /^peer /.test(l.msg))) notes.set(`${l.topic ?? ""} ${l.msg}`, (notes.get(`${l.topic ?? ""} ${l.msg}`) ?? 0) + 1);
    for (const [note, count] of notes) console.log(`node log x${count}: ${note}`);
  } finally {
    for (const peer of peers) await peer.stop();
    await node.stop();
    rmSync(dir, {recursive: true, force: true});
  }
}

await main();
