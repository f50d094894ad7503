import {BooleanType, ContainerType, type ValueOf} from "@chainsafe/ssz";
import {peerIdFromString} from "@libp2p/peer-id";
import {ArrayOf, ssz, stringType} from "@lodestar/types";
import {list, oneOf, optional, parseUint, scalar, sszData} from "../codecs.ts";
import type {ApiMetadata} from "../../network/identity.ts";
import {route, type DataCodec, type MetaField, type NoArgs} from "./types.ts";

/** Routes of the Node tag. */

export const NodeVersionType = new ContainerType({version: stringType}, {jsonCase: "eth2"});
export type NodeVersion = ValueOf<typeof NodeVersionType>;

export const SyncingStatusType = new ContainerType(
  {headSlot: ssz.Slot, syncDistance: ssz.UintNum64, isSyncing: new BooleanType(), isOptimistic: new BooleanType(), elOffline: new BooleanType()},
  {jsonCase: "eth2"}
);
export type SyncingStatus = ValueOf<typeof SyncingStatusType>;

/** `el_offline` came into the spec later: a node built before it leaves it out, and knew no offline execution client. */
const syncingStatusData: DataCodec<SyncingStatus, unknown> = {
  toJson: (data) => SyncingStatusType.toJson(data),
  fromJson: (json) => SyncingStatusType.fromJson(typeof json === "object" && json !== null ? {el_offline: false, ...json} : json),
};

const NetworkIdentityBaseType = new ContainerType(
  {peerId: stringType, enr: stringType, p2pAddresses: ArrayOf(stringType), discoveryAddresses: ArrayOf(stringType)},
  {jsonCase: "eth2"}
);
export type NetworkIdentity = ValueOf<typeof NetworkIdentityBaseType> & {metadata: ApiMetadata};

/** MetaData v1, v2 or v3 by the fields present: syncnets from altair, custody_group_count from fulu (as the spec's MetaData). */
const metadataType = (has: (key: string) => boolean) =>
  has("custodyGroupCount") || has("custody_group_count") ? ssz.fulu.Metadata : has("syncnets") ? ssz.altair.Metadata : ssz.phase0.Metadata;

const networkIdentityData: DataCodec<NetworkIdentity, unknown> = {
  toJson: ({metadata, ...rest}) => ({...(NetworkIdentityBaseType.toJson(rest) as object), metadata: metadataType((k) => k in metadata).toJson(metadata as never)}),
  fromJson: (json) => {
    const {metadata, ...rest} = json as {metadata: Record<string, unknown>};
    return {...NetworkIdentityBaseType.fromJson(rest), metadata: metadataType((k) => k in metadata).fromJson(metadata)};
  },
};

export const PEER_STATES = ["disconnected", "connecting", "connected", "disconnecting"] as const;
export const PEER_DIRECTIONS = ["inbound", "outbound"] as const;
export type PeerState = (typeof PEER_STATES)[number];
export type PeerDirection = (typeof PEER_DIRECTIONS)[number];

/** `enr` is null when the peer's record is unknown. */
export interface Peer {
  peerId: string;
  enr: string | null;
  lastSeenP2pAddress: string;
  state: PeerState;
  direction: PeerDirection;
}
const peerJson = {
  toJson: (p: Peer) => ({peer_id: p.peerId, enr: p.enr, last_seen_p2p_address: p.lastSeenP2pAddress, state: p.state, direction: p.direction}),
  fromJson(json: unknown): Peer {
    const j = json as Record<string, string>;
    return {peerId: j.peer_id, enr: j.enr ?? null, lastSeenP2pAddress: j.last_seen_p2p_address, state: j.state as PeerState, direction: j.direction as PeerDirection};
  },
};

export const PeerCountType = new ContainerType(
  {disconnected: ssz.UintNum64, connecting: ssz.UintNum64, connected: ssz.UintNum64, disconnecting: ssz.UintNum64},
  {jsonCase: "eth2"}
);
export type PeerCount = ValueOf<typeof PeerCountType>;

/** A libp2p peer id (its canonical text); one that does not parse is a 400. */
const peerId = scalar<string>("peer ID", (s) => {
  try {
    return peerIdFromString(s).toString();
  } catch {
    return undefined;
  }
}, (v) => v);

/** getPeers' `meta: {count}` (the spec names no header; `X-Total-Count` is the usual one for a list's size). */
const countMeta: MetaField<number> = {
  json: "meta",
  header: "X-Total-Count",
  toJson: (count) => ({count}),
  fromJson(json) {
    const count = (json as {count?: unknown} | undefined)?.count;
    if (typeof count !== "number") throw new Error(`Invalid meta in response: ${JSON.stringify(json)}`);
    return count;
  },
  toHeader: String,
  fromHeader: Number,
};

/** An HTTP status code to answer with (getHealth's `syncing_status`). */
const statusCode = scalar<number>("syncing status code", (s) => {
  const n = parseUint(s);
  return n !== undefined && n >= 100 && n <= 599 ? n : undefined;
}, String);

export const nodeRoutes = {
  getNetworkIdentity: route<NoArgs, NetworkIdentity>({
    method: "GET",
    path: "/eth/v1/node/identity",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: networkIdentityData, meta: {}},
  }),
  getPeers: route<{state: PeerState[]; direction: PeerDirection[]}, Peer[], {count: number}>({
    method: "GET",
    path: "/eth/v1/node/peers",
    version: 1,
    tag: "Node",
    args: {
      state: {in: "query", name: "state", codec: list(oneOf(PEER_STATES), {unique: true})},
      direction: {in: "query", name: "direction", codec: list(oneOf(PEER_DIRECTIONS), {unique: true})},
    },
    response: {
      kind: "data",
      data: {toJson: (peers) => peers.map(peerJson.toJson), fromJson: (json) => (json as unknown[]).map(peerJson.fromJson)},
      meta: {count: countMeta},
    },
  }),
  /** 400 for an id that does not parse, 404 for a peer the node does not know */
  getPeer: route<{peerId: string}, Peer>({
    method: "GET",
    path: "/eth/v1/node/peers/{peer_id}",
    version: 1,
    tag: "Node",
    args: {peerId: {in: "path", name: "peer_id", codec: peerId}},
    response: {kind: "data", data: peerJson, meta: {}},
  }),
  getPeerCount: route<NoArgs, PeerCount>({
    method: "GET",
    path: "/eth/v1/node/peer_count",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: sszData(() => PeerCountType, {ssz: false}), meta: {}},
  }),
  getNodeVersion: route<NoArgs, NodeVersion>({
    method: "GET",
    path: "/eth/v1/node/version",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: sszData(() => NodeVersionType, {ssz: false}), meta: {}},
  }),
  getSyncingStatus: route<NoArgs, SyncingStatus>({
    method: "GET",
    path: "/eth/v1/node/syncing",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: syncingStatusData, meta: {}},
  }),
  /** 200 when synced, 206 (or `syncing_status`) while syncing */
  getHealth: route<{syncingStatus?: number}, number>({
    method: "GET",
    path: "/eth/v1/node/health",
    version: 1,
    tag: "Node",
    args: {syncingStatus: {in: "query", name: "syncing_status", codec: optional(statusCode)}},
    response: {kind: "status"},
  }),
};
