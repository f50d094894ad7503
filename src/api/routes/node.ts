import {BooleanType, ContainerType, type ValueOf} from "@chainsafe/ssz";
import {ssz, stringType} from "@lodestar/types";
import {optional, parseUint, scalar, sszData} from "../codecs.ts";
import {route, type NoArgs} from "./types.ts";

/** Routes of the Node tag. */

export const NodeVersionType = new ContainerType({version: stringType}, {jsonCase: "eth2"});
export type NodeVersion = ValueOf<typeof NodeVersionType>;

export const SyncingStatusType = new ContainerType(
  {headSlot: ssz.Slot, syncDistance: ssz.UintNum64, isSyncing: new BooleanType(), isOptimistic: new BooleanType(), elOffline: new BooleanType()},
  {jsonCase: "eth2"}
);
export type SyncingStatus = ValueOf<typeof SyncingStatusType>;

/** An HTTP status code to answer with (getHealth's `syncing_status`). */
const statusCode = scalar<number>("syncing status code", (s) => {
  const n = parseUint(s);
  return n !== undefined && n >= 100 && n <= 599 ? n : undefined;
}, String);

export const nodeRoutes = {
  getNodeVersion: route<NoArgs, NodeVersion>({
    method: "GET",
    path: "/eth/v1/node/version",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: sszData(() => NodeVersionType, {ssz: false}), meta: {}},
    legacy: {method: "get_v1_node_version", params: []},
  }),
  getSyncingStatus: route<NoArgs, SyncingStatus>({
    method: "GET",
    path: "/eth/v1/node/syncing",
    version: 1,
    tag: "Node",
    args: {},
    response: {kind: "data", data: sszData(() => SyncingStatusType, {ssz: false}), meta: {}},
    legacy: {method: "get_v1_node_syncing", params: []},
  }),
  /** 200 when synced, 206 (or `syncing_status`) while syncing */
  getHealth: route<{syncingStatus?: number}, number>({
    method: "GET",
    path: "/eth/v1/node/health",
    version: 1,
    tag: "Node",
    args: {syncingStatus: {in: "query", name: "syncing_status", codec: optional(statusCode)}},
    response: {kind: "status"},
    legacy: {method: "get_v1_node_health", params: []},
  }),
};
