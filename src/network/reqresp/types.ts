import type {BeaconConfig} from "@lodestar/config";
import type {altair, deneb, fulu, phase0} from "@lodestar/types";
import type {Libp2p} from "@libp2p/interface";
import type {RateLimits} from "./rateLimiter.ts";
import type {NodeMetrics} from "../../metrics/nodeMetrics.ts";

/** Status of either version: v2 (fulu) adds earliest_available_slot. */
export type Status = phase0.Status & {earliestAvailableSlot?: number};

/** Metadata of any version: v2 (altair) adds syncnets, v3 (fulu) custody_group_count. */
export type Metadata = phase0.Metadata & Partial<Pick<fulu.Metadata, "syncnets" | "custodyGroupCount">>;

/** An object as stored, with the slot that sets its fork (and so the chunk's context bytes). */
export interface SlotBytes {
  slot: number;
  bytes: Uint8Array;
}

export interface BlocksByRangeRequest {
  startSlot: number;
  count: number;
  step: number;
}

export type PeerMisbehaviourSeverity = "low" | "mid" | "high" | "fatal";

/**
 * What the node answers with. A handler may throw ResponseError to answer with a given result
 * code (e.g. RESOURCE_UNAVAILABLE for pruned history); anything else it throws is a ServerError.
 * The optional sidecar handlers, when absent, answer with zero chunks.
 */
export interface ReqRespHandlers {
  /** the peer's status in, ours out (with earliestAvailableSlot for status v2; 0 when absent) */
  onStatus(peer: string, status: Status): Promise<Status>;
  onGoodbye(peer: string, reason: bigint): void;
  /** returns our metadata sequence number */
  onPing(peer: string, seq: bigint): bigint;
  /** our metadata; each version sends the fields it has */
  onMetadata(peer: string): fulu.Metadata;
  /** blocks of the canonical chain in the range, ascending; `count` is already capped to the protocol maximum */
  onBeaconBlocksByRange(peer: string, request: BlocksByRangeRequest): AsyncIterable<SlotBytes>;
  onBeaconBlocksByRoot(peer: string, roots: Uint8Array[]): AsyncIterable<SlotBytes>;
  onBlobSidecarsByRange?(peer: string, request: deneb.BlobSidecarsByRangeRequest): AsyncIterable<SlotBytes>;
  onBlobSidecarsByRoot?(peer: string, ids: deneb.BlobIdentifier[]): AsyncIterable<SlotBytes>;
  onDataColumnSidecarsByRange?(peer: string, request: fulu.DataColumnSidecarsByRangeRequest): AsyncIterable<SlotBytes>;
  onDataColumnSidecarsByRoot?(peer: string, ids: fulu.DataColumnsByRootIdentifier[]): AsyncIterable<SlotBytes>;
  /** light-client objects: `slot` is their (attested) header's, which picks the context bytes */
  onLightClientBootstrap?(peer: string, blockRoot: Uint8Array): AsyncIterable<SlotBytes>;
  onLightClientUpdatesByRange?(peer: string, request: altair.LightClientUpdatesByRange): AsyncIterable<SlotBytes>;
  onLightClientFinalityUpdate?(peer: string): AsyncIterable<SlotBytes>;
  onLightClientOptimisticUpdate?(peer: string): AsyncIterable<SlotBytes>;
}

export interface ReqRespTimeouts {
  /** connecting to the peer and negotiating the protocol */
  dialMs: number;
  /** from sending the request to the first byte of the response (TTFB_TIMEOUT) */
  ttfbMs: number;
  /** for each response chunk, and for a whole incoming request (RESP_TIMEOUT) */
  respMs: number;
}

/** What a started ReqResp serves requests with, and reports misbehaving peers to. */
export interface ReqRespServing {
  handlers: ReqRespHandlers;
  onPeerMisbehaved(peerId: string, reason: string, severity: PeerMisbehaviourSeverity): void;
}

export interface ReqRespOptions {
  libp2p: Libp2p;
  config: BeaconConfig;
  /**
   * What serves the peers' requests, and where their misbehaviour is reported: given here, or
   * at `start` when they are made of parts built after the ReqResp (the peer manager).
   */
  handlers?: ReqRespHandlers;
  onPeerMisbehaved?(peerId: string, reason: string, severity: PeerMisbehaviourSeverity): void;
  /** the wall-clock epoch: it sets the request limits and which versions are offered; default the last scheduled fork's epoch */
  currentEpoch?: () => number;
  rateLimits?: RateLimits;
  timeouts?: Partial<ReqRespTimeouts>;
  /** milliseconds, for the rate limiter; default Date.now */
  now?: () => number;
  metrics?: Pick<NodeMetrics, "reqResp">;
}
