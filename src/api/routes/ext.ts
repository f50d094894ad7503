import {BooleanType, ContainerType, ListCompositeType, type ValueOf} from "@chainsafe/ssz";
import {MAX_DEPOSITS} from "@lodestar/params";
import {ArrayOf, ssz, stringType, type phase0} from "@lodestar/types";
import {fromHex, toHex} from "@lodestar/utils";
import {formatLogDirective, parseLogDirective, type LogDirective} from "../../log.ts";
import {graffitiFromText, jsonData, optional, sszData, textBody} from "../codecs.ts";
import {badRequest} from "../errors.ts";
import {route, type DataCodec, type NoArgs, type NoMeta, type ParamCodec} from "./types.ts";

/**
 * The node's extension endpoints (`/ext/v1/...`, tag "Ext"): the three of the product spec
 * (graffiti, run-time log level) and the node's views that no standard endpoint gives (chain
 * head, execution-chain data, peer lists, live tasks, gossip view). Bodies are
 * `{data}` in the REST encoding: integers as decimal strings, bytes as 0x hex.
 */

export const ChainHeadType = new ContainerType(
  {
    headSlot: ssz.Slot,
    headBlockRoot: ssz.Root,
    /** the checkpoints' slots are their epoch x SLOTS_PER_EPOCH */
    finalizedSlot: ssz.Slot,
    finalizedBlockRoot: ssz.Root,
    justifiedSlot: ssz.Slot,
    justifiedBlockRoot: ssz.Root,
  },
  {jsonCase: "eth2"}
);
export type ChainHead = ValueOf<typeof ChainHeadType>;

/** One live asynchronous task: an id, where it started, and its state. */
export const LiveTaskType = new ContainerType(
  {id: ssz.UintNum64, childId: ssz.UintNum64, procname: stringType, filename: stringType, line: ssz.UintNum64, state: stringType},
  {jsonCase: "eth2"}
);
export type LiveTaskInfo = ValueOf<typeof LiveTaskType>;

/** What a block at the current slot would carry from the execution chain. */
export const Eth1ProposalDataType = new ContainerType(
  {vote: ssz.phase0.Eth1Data, deposits: new ListCompositeType(ssz.phase0.Deposit, MAX_DEPOSITS)},
  {jsonCase: "eth2"}
);
export type Eth1ProposalData = ValueOf<typeof Eth1ProposalDataType>;

/** A peer of the pool; `score` is a plain JSON number (scores can be negative). */
export interface PeerSummary {
  id: string;
  connectionState: string;
  score: number;
}

/** The gossip view: topic -> peer ids, and peer lists. */
export interface GossipSubPeers {
  gossipsub: Record<string, string[]>;
  mesh: Record<string, string[]>;
  colocationPeers: string[];
  peerStats: unknown[];
  allPeers: string[];
}

/** The graffiti setting: `hex` (all 32 bytes) and `text` (its UTF-8 reading without the zero padding; null when it is not UTF-8). */
const graffitiData: DataCodec<Uint8Array, NoMeta> = {
  toJson(graffiti) {
    let end = graffiti.length;
    while (end > 0 && graffiti[end - 1] === 0) end--;
    let text: string | null;
    try {
      text = new TextDecoder("utf-8", {fatal: true}).decode(graffiti.subarray(0, end));
    } catch {
      text = null;
    }
    return {hex: toHex(graffiti), text};
  },
  fromJson: (json) => fromHex((json as {hex: string}).hex),
};

/** A graffiti to set: UTF-8 text, or 0x hex giving raw bytes; never empty (`0x` is zero bytes). */
function graffitiToSet(text: string): Uint8Array {
  if (text === "") throw new Error("graffiti is empty (send 0x for zero bytes)");
  return graffitiFromText(text);
}

/** A log-level directive (spec section 4.2) as a query value; a bad one is a 400 with the reason. */
const logDirective: ParamCodec<LogDirective> = {
  parse(raw, name) {
    if (raw === undefined || raw.length === 0) throw badRequest(`Missing required parameter ${name}`);
    if (raw.length > 1) throw badRequest(`Parameter ${name} given more than once`);
    try {
      return parseLogDirective(raw[0]);
    } catch (e) {
      throw badRequest(`Invalid ${name}: ${(e as Error).message}`);
    }
  },
  format: (d) => [formatLogDirective(d)],
};

const trueData = sszData(() => new BooleanType(), {ssz: false});
const ext = {method: "GET", version: 1, tag: "Ext", args: {}} as const;

export const extRoutes = {
  getGraffiti: route<NoArgs, Uint8Array>({
    ...ext,
    path: "/ext/v1/graffiti",
    response: {kind: "data", data: graffitiData, meta: {}},
  }),
  /** answers `true` once the graffiti is set (and stored) */
  setGraffiti: route<{graffiti: Uint8Array}, boolean>({
    ...ext,
    method: "POST",
    path: "/ext/v1/graffiti",
    args: {graffiti: textBody("graffiti", graffitiToSet, toHex)},
    response: {kind: "data", data: trueData, meta: {}},
  }),
  /** the directive as a text body or as the `log_level` query parameter; answers `true` once applied */
  setLogLevel: route<{directive?: LogDirective; logLevel?: LogDirective}, boolean>({
    ...ext,
    method: "POST",
    path: "/ext/v1/chronicles/settings",
    args: {
      directive: textBody("log_level", parseLogDirective, formatLogDirective, {optional: true}),
      logLevel: {in: "query", name: "log_level", codec: optional(logDirective)},
    },
    response: {kind: "data", data: trueData, meta: {}},
  }),
  getChainHead: route<NoArgs, ChainHead>({
    ...ext,
    path: "/ext/v1/chain/head",
    response: {kind: "data", data: sszData(() => ChainHeadType, {ssz: false}), meta: {}},
  }),
  /** the peer ids of the peer pool */
  getNetworkPeerIds: route<NoArgs, string[]>({
    ...ext,
    path: "/ext/v1/network/ids",
    response: {kind: "data", data: sszData(() => ArrayOf(stringType), {ssz: false}), meta: {}},
  }),
  getNetworkPeers: route<NoArgs, {peers: PeerSummary[]}>({
    ...ext,
    path: "/ext/v1/network/peers",
    response: {kind: "data", data: jsonData(), meta: {}},
  }),
  /** the execution-chain blocks kept for deposits and eth1 voting */
  getEth1Chain: route<NoArgs, phase0.Eth1Block[]>({
    ...ext,
    path: "/ext/v1/eth1/chain",
    response: {kind: "data", data: sszData(() => ArrayOf(ssz.phase0.Eth1Block), {ssz: false}), meta: {}},
  }),
  getEth1ProposalData: route<NoArgs, Eth1ProposalData>({
    ...ext,
    path: "/ext/v1/eth1/proposal_data",
    response: {kind: "data", data: sszData(() => Eth1ProposalDataType, {ssz: false}), meta: {}},
  }),
  /** the node's live asynchronous work */
  getDebugTasks: route<NoArgs, LiveTaskInfo[]>({
    ...ext,
    path: "/ext/v1/debug/tasks",
    response: {kind: "data", data: sszData(() => ArrayOf(LiveTaskType), {ssz: false}), meta: {}},
  }),
  getDebugGossipPeers: route<NoArgs, GossipSubPeers>({
    ...ext,
    path: "/ext/v1/debug/gossip/peers",
    response: {kind: "data", data: jsonData(), meta: {}},
  }),
};
