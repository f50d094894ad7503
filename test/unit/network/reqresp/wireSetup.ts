import {noise} from "@chainsafe/libp2p-noise";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {identify} from "@libp2p/identify";
import type {Libp2p, Stream} from "@libp2p/interface";
import {mplex} from "@libp2p/mplex";
import {ping} from "@libp2p/ping";
import {tcp} from "@libp2p/tcp";
import {yamux} from "@libp2p/yamux";
import {BitArray} from "@chainsafe/ssz";
import {createBeaconConfig, createChainForkConfig, type BeaconConfig} from "@lodestar/config";
import type {fulu} from "@lodestar/types";
import {createLibp2p} from "libp2p";
import {ReqResp} from "../../../../src/network/reqresp/reqResp.ts";
import type {PeerMisbehaviourSeverity, ReqRespHandlers, ReqRespOptions, SlotBytes, Status} from "../../../../src/network/reqresp/types.ts";

/**
 * Real libp2p nodes over TCP loopback for the Req/Resp tests, and a chain config where each
 * fork starts one epoch after the previous (minimal preset: 8 slots an epoch), plus a fulu
 * blob-parameter-only fork at epoch 7, so context bytes change at every boundary.
 */
export const GENESIS_VALIDATORS_ROOT = new Uint8Array(32).fill(0x42);
export const config: BeaconConfig = createBeaconConfig(
  createChainForkConfig({
    ALTAIR_FORK_EPOCH: 1,
    BELLATRIX_FORK_EPOCH: 2,
    CAPELLA_FORK_EPOCH: 3,
    DENEB_FORK_EPOCH: 4,
    ELECTRA_FORK_EPOCH: 5,
    FULU_FORK_EPOCH: 6,
    BLOB_SCHEDULE: [{EPOCH: 7, MAX_BLOBS_PER_BLOCK: 12}],
  }),
  GENESIS_VALIDATORS_ROOT
);

export async function createNode(): Promise<Libp2p> {
  return createLibp2p({
    privateKey: await generateKeyPair("secp256k1"),
    addresses: {listen: ["/ip4/127.0.0.1/tcp/0"]},
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux(), mplex()],
    services: {identify: identify(), ping: ping()},
  });
}

export interface StoredBlock extends SlotBytes {
  root: Uint8Array;
}

/** A default block of the slot's fork, at that slot. */
export function blockAt(slot: number, proposerIndex = 0): StoredBlock {
  const types = config.getForkTypes(slot);
  const block = types.SignedBeaconBlock.defaultValue();
  block.message.slot = slot;
  block.message.proposerIndex = proposerIndex;
  return {slot, bytes: types.SignedBeaconBlock.serialize(block), root: types.BeaconBlock.hashTreeRoot(block.message)};
}

/** one block in each fork: phase0, altair, bellatrix, capella, deneb, electra, fulu, and fulu after the BPO boundary */
export const BLOCK_SLOTS = [3, 9, 17, 25, 33, 41, 49, 57];

export interface Misbehaviour {
  peer: string;
  reason: string;
  severity: PeerMisbehaviourSeverity;
}

export function metadataOf(seq: number): fulu.Metadata {
  return {
    seqNumber: BigInt(seq),
    attnets: BitArray.fromBoolArray(Array.from({length: 64}, (_, i) => i === 3)),
    syncnets: BitArray.fromBoolArray([true, false, false, false]),
    custodyGroupCount: 8,
  };
}

export function statusOf(headSlot: number, earliestAvailableSlot?: number): Status {
  return {
    forkDigest: config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(7)),
    finalizedRoot: new Uint8Array(32).fill(headSlot),
    finalizedEpoch: 1,
    headRoot: new Uint8Array(32).fill(headSlot + 1),
    headSlot,
    ...(earliestAvailableSlot === undefined ? {} : {earliestAvailableSlot}),
  };
}

/** Handlers over a block list, recording what peers sent. */
export function chainHandlers(blocks: StoredBlock[], ours: Status, seq: number) {
  const seen = {statuses: [] as Status[], pings: [] as bigint[], goodbyes: [] as bigint[]};
  const handlers: ReqRespHandlers = {
    onStatus: async (_peer, status) => {
      seen.statuses.push(status);
      return ours;
    },
    onGoodbye: (_peer, reason) => void seen.goodbyes.push(reason),
    onPing: (_peer, theirSeq) => {
      seen.pings.push(theirSeq);
      return BigInt(seq);
    },
    onMetadata: () => metadataOf(seq),
    onBeaconBlocksByRange: async function* (_peer, {startSlot, count}) {
      for (const block of blocks) if (block.slot >= startSlot && block.slot < startSlot + count) yield block;
    },
    onBeaconBlocksByRoot: async function* (_peer, roots) {
      const wanted = new Set(roots.map((r) => Buffer.from(r).toString("hex")));
      for (const block of blocks) if (wanted.has(Buffer.from(block.root).toString("hex"))) yield block;
    },
  };
  return {handlers, seen};
}

/** A ReqResp on `libp2p` whose misbehaviour reports land in `reports`. */
export function reqRespOn(libp2p: Libp2p, handlers: ReqRespHandlers, reports: Misbehaviour[], extra: Partial<ReqRespOptions> = {}): ReqResp {
  return new ReqResp({
    libp2p,
    config,
    handlers,
    onPeerMisbehaved: (peer, reason, severity) => reports.push({peer, reason, severity}),
    ...extra,
  });
}

/** Writes raw bytes as a whole response and closes: for peers that break the protocol. */
export async function answerRaw(stream: Stream, bytes: Uint8Array): Promise<void> {
  stream.send(bytes);
  await stream.close();
}

export const digestAtSlot = (slot: number): Uint8Array => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(Math.floor(slot / 8)));
