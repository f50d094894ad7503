import {Worker} from "node:worker_threads";
import {generateKeyPair} from "@libp2p/crypto/keys";
import type {GossipsubOpts} from "@libp2p/gossipsub";
import type {PeerId} from "@libp2p/interface";
import type {BeaconConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {gossipsubMeshParams} from "../../src/network/gossip/scoringParams.ts";
import {createMsgIdFn} from "../../src/network/gossip/encoding.ts";
import {createBeaconLibp2p, type BeaconLibp2p} from "../../src/network/libp2p.ts";
import {ByteSource} from "../../src/network/reqresp/byteSource.ts";
import {readResponseChunk} from "../../src/network/reqresp/encoding.ts";
import {ReqResp, type Status} from "../../src/network/reqresp/index.ts";
import {getJson} from "./nodeProcess.ts";

export {waitFor} from "../waitFor.ts";

/**
 * The pieces of the hostile-peer test: a libp2p peer of the node's chain that can say anything
 * (gossipsub without the snappy data transform, so it publishes raw bytes, and raw req/resp
 * streams), what the node tells about its peers over REST, and an independent REST client that
 * measures the node's response times.
 */

const fromHex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/^0x/, ""), "hex"));

export interface GossipView {
  gossipsub: Record<string, string[]>;
  mesh: Record<string, string[]>;
  peerStats: Array<{peerId: string; score: number}>;
}

/** What the node's REST API says about its chain, its peers and its pools. */
export class NodeView {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  async headSlot(): Promise<number> {
    return Number((await getJson(this.url, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
  }

  /** a status of the node's own chain (finalized checkpoint and head), as an honest peer in sync would send */
  async chainStatus(forkDigest: Uint8Array): Promise<Status> {
    const [head, finality] = await Promise.all([getJson(this.url, "/eth/v1/beacon/headers/head"), getJson(this.url, "/eth/v1/beacon/states/head/finality_checkpoints")]);
    return {
      forkDigest,
      finalizedRoot: fromHex(finality.body.data.finalized.root),
      finalizedEpoch: Number(finality.body.data.finalized.epoch),
      headRoot: fromHex(head.body.data.root),
      headSlot: Number(head.body.data.header.message.slot),
      earliestAvailableSlot: 0,
    };
  }

  /** the node's own score of a peer (`/ext/v1/network/peers`) */
  async score(peerId: string): Promise<number | null> {
    const {body} = await getJson(this.url, "/ext/v1/network/peers");
    const peer = (body.data.peers as Array<{id: string; score: number}>).find((p) => p.id === peerId);
    return peer ? Number(peer.score) : null;
  }

  /** the node's gossipsub topics, meshes and peer scores */
  async gossip(): Promise<GossipView> {
    return (await getJson(this.url, "/ext/v1/debug/gossip/peers")).body.data;
  }

  async gossipScore(peerId: string): Promise<number | null> {
    const stats = (await this.gossip()).peerStats.find((p) => p.peerId === peerId);
    return stats ? Number(stats.score) : null;
  }

  /** connected, disconnected, ... (`/eth/v1/node/peers/{peer_id}`) */
  async peerState(peerId: string): Promise<string | null> {
    const res = await getJson(this.url, `/eth/v1/node/peers/${peerId}`);
    return res.status === 200 ? res.body.data.state : null;
  }

  /** attestations of the node's pool with this vote (slot and block root) */
  async poolVotes(vote: {slot: number; root: string}): Promise<unknown[]> {
    const pool = (await getJson(this.url, `/eth/v2/beacon/pool/attestations?slot=${vote.slot}`)).body.data as Array<{data: {slot: string; beacon_block_root: string}}>;
    return pool.filter((a) => Number(a.data.slot) === vote.slot && a.data.beacon_block_root === vote.root);
  }
}

export interface HostilePeer {
  libp2p: BeaconLibp2p;
  reqResp: ReqResp;
  peerId: string;
  /** status requests the node made to this peer */
  statusRequests: number;
  stop(): Promise<void>;
}

/**
 * A peer that passes the status handshake (it answers status, ping and metadata with `status()`
 * and empty metadata) and whose gossip goes out exactly as given.
 */
export async function createHostilePeer(
  config: BeaconConfig,
  currentEpoch: () => number,
  status: () => Promise<Status>,
  /** gossipsub options over the defaults (a driver that publishes much may precompute its message ids) */
  gossip: Partial<GossipsubOpts> = {}
): Promise<HostilePeer> {
  const key = await generateKeyPair("secp256k1");
  const libp2p = await createBeaconLibp2p({
    privateKey: key.raw,
    listenAddress: "127.0.0.1",
    tcpPort: 0,
    quicPort: null,
    maxConnections: 10,
    // no dataTransform: what we publish is what goes on the wire
    gossip: {...gossipsubMeshParams(config), msgIdFn: createMsgIdFn(config), asyncValidation: false, ...gossip},
    isBanned: () => false,
  });
  const peer: HostilePeer = {
    libp2p,
    peerId: libp2p.peerId.toString(),
    statusRequests: 0,
    reqResp: new ReqResp({
      libp2p,
      config,
      currentEpoch,
      handlers: {
        onStatus: async () => {
          peer.statusRequests++;
          return status();
        },
        onGoodbye: () => undefined,
        onPing: () => 0n,
        onMetadata: () => ssz.fulu.Metadata.defaultValue(),
        onBeaconBlocksByRange: async function* () {},
        onBeaconBlocksByRoot: async function* () {},
      },
      onPeerMisbehaved: () => undefined,
    }),
    async stop() {
      await peer.reqResp.stop().catch(() => undefined);
      await Promise.resolve(libp2p.stop()).catch(() => undefined);
    },
  };
  await libp2p.start();
  await peer.reqResp.start();
  return peer;
}

/** How a raw request ended, from the requester's side. */
export type RawOutcome =
  | {kind: "response"; ms: number; successChunks: number; status: number; message: string}
  | {kind: "reset"; ms: number; error: string}
  | {kind: "refused"; ms: number; error: string}
  | {kind: "no answer"; ms: number};

/**
 * Opens a stream for `protocol`, writes `bytes` (then half-closes, unless `keepOpen`) and reads
 * the response chunks (with context bytes) until the stream ends, is reset, or `timeoutMs` passes.
 * `status` is the result byte of the last chunk: 0 when every chunk was a success.
 */
export async function rawRequest(
  libp2p: BeaconLibp2p,
  peer: PeerId,
  protocol: string,
  bytes: Uint8Array,
  opts: {keepOpen?: boolean; timeoutMs: number; contextBytes: boolean}
): Promise<RawOutcome> {
  const start = Date.now();
  const ms = () => Date.now() - start;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  let stream;
  try {
    stream = await libp2p.dialProtocol(peer, protocol, {signal, maxOutboundStreams: 256});
  } catch (e) {
    return {kind: "refused", ms: ms(), error: (e as Error).message};
  }
  const source = new ByteSource(stream);
  try {
    stream.send(bytes);
    if (!opts.keepOpen) await stream.close({signal});
    let successChunks = 0;
    for (;;) {
      const chunk = await readResponseChunk(source, opts.contextBytes, () => ({min: 0, max: 10 * 2 ** 20}), signal);
      if (chunk === null) return {kind: "response", ms: ms(), successChunks, status: 0, message: ""};
      if (chunk.kind === "error") return {kind: "response", ms: ms(), successChunks, status: chunk.status, message: chunk.message};
      successChunks++;
    }
  } catch (e) {
    if (signal.aborted) {
      stream.abort(new Error("test gave up"));
      return {kind: "no answer", ms: ms()};
    }
    return {kind: "reset", ms: ms(), error: (e as Error).message};
  }
}

export interface LatencyReport {
  samples: number;
  maxMs: number;
  /** when the slowest answer was asked for (epoch ms) */
  maxAt: number;
  failures: number;
}

/**
 * Asks `url` every `intervalMs` from a worker thread, so what it measures is the node's response
 * time and not this process's own load; a request counts for at most `timeoutMs` (then a failure).
 */
export class LatencySampler {
  private readonly worker: Worker;

  constructor(url: string, intervalMs = 100, timeoutMs = 5_000) {
    this.worker = new Worker(SAMPLER_SOURCE, {eval: true, workerData: {url, intervalMs, timeoutMs}});
    this.worker.unref();
  }

  /** Stops sampling and returns what it saw. */
  async stop(): Promise<LatencyReport> {
    const report = new Promise<LatencyReport>((resolve, reject) => {
      this.worker.once("message", resolve);
      this.worker.once("error", reject);
    });
    this.worker.postMessage("stop");
    const result = await report;
    await this.worker.terminate();
    return result;
  }
}

const SAMPLER_SOURCE = `
const {parentPort, workerData} = require("node:worker_threads");
const {url, intervalMs, timeoutMs} = workerData;
let stopped = false;
const report = {samples: 0, maxMs: 0, maxAt: 0, failures: 0};
parentPort.on("message", () => { stopped = true; });
(async () => {
  while (!stopped) {
    const start = Date.now();
    let ok = false;
    try {
      const res = await fetch(url, {signal: AbortSignal.timeout(timeoutMs)});
      await res.arrayBuffer();
      ok = res.status === 200;
    } catch {}
    const ms = Date.now() - start;
    report.samples++;
    if (!ok) report.failures++;
    if (ms > report.maxMs) { report.maxMs = ms; report.maxAt = start; }
    await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - ms)));
  }
  parentPort.postMessage(report);
})();
`;
