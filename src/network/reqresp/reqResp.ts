import type {Libp2p} from "@libp2p/interface";
import type {BeaconConfig} from "@lodestar/config";
import {FAR_FUTURE_EPOCH, type ForkName} from "@lodestar/params";
import {ssz, type deneb, type fulu, type SignedBeaconBlock} from "@lodestar/types";
import {ReqRespError} from "./errors.ts";
import {maxRequestBlobSidecars, maxRequestBlocks, PROTOCOLS, versionsOf, type ProtocolName, type ProtocolVersion} from "./protocols.ts";
import {RateLimiter} from "./rateLimiter.ts";
import {Requester, type OutgoingRequest, type ReceivedChunk} from "./requester.ts";
import {serveRequest, type ResponderContext} from "./responder.ts";
import {
  blobSidecarsByRangeDecoder,
  blobSidecarsByRootDecoder,
  blocksByRangeDecoder,
  blocksByRootDecoder,
  dataColumnSidecarsByRangeDecoder,
  dataColumnSidecarsByRootDecoder,
} from "./responseChecks.ts";
import type {BlocksByRangeRequest, Metadata, ReqRespOptions, ReqRespServing, ReqRespTimeouts, Status} from "./types.ts";

/** The spec's former TTFB_TIMEOUT and RESP_TIMEOUT (seconds in configs that still carry them). */
export const DEFAULT_TIMEOUTS: ReqRespTimeouts = {dialMs: 5_000, ttfbMs: 5_000, respMs: 10_000};
const RATE_LIMITER_PRUNE_MS = 60_000;

/**
 * The consensus p2p Req/Resp domain over libp2p streams: serves every protocol version of
 * phase0..fulu from `handlers` once started, and makes requests to peers (by peer id string),
 * each with an optional AbortSignal. Failed requests throw ReqRespError.
 */
export class ReqResp {
  private readonly libp2p: Libp2p;
  private readonly config: BeaconConfig;
  private readonly requester: Requester;
  private serving: ReqRespServing | null;
  private readonly respTimeoutMs: number;
  private readonly rateLimiter: RateLimiter;
  private readonly currentEpoch: () => number;
  private readonly metrics: ReqRespOptions["metrics"];
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(opts: ReqRespOptions) {
    this.libp2p = opts.libp2p;
    this.config = opts.config;
    this.currentEpoch = opts.currentEpoch ?? (() => lastScheduledForkEpoch(opts.config));
    this.metrics = opts.metrics;
    const timeouts = {...configTimeouts(opts.config), ...opts.timeouts};
    const currentFork = (): ForkName => this.currentFork();
    this.rateLimiter = new RateLimiter(opts.rateLimits, opts.now);
    this.serving = opts.handlers && opts.onPeerMisbehaved ? {handlers: opts.handlers, onPeerMisbehaved: opts.onPeerMisbehaved} : null;
    this.respTimeoutMs = timeouts.respMs;
    // a response that breaks the protocol is reported once the node serves (before, nothing asks peers)
    const onPeerMisbehaved: ReqRespServing["onPeerMisbehaved"] = (peer, reason, severity) => this.serving?.onPeerMisbehaved(peer, reason, severity);
    this.requester = new Requester({libp2p: opts.libp2p, config: opts.config, currentFork, timeouts, onPeerMisbehaved});
  }

  /**
   * Registers a handler for every protocol version, so old and new peers each find theirs;
   * `serving` when the constructor was not given it.
   */
  async start(serving?: ReqRespServing): Promise<void> {
    this.serving = serving ?? this.serving;
    if (!this.serving) throw new Error("ReqResp started without handlers");
    const responder: ResponderContext = {
      config: this.config,
      handlers: this.serving.handlers,
      rateLimiter: this.rateLimiter,
      currentFork: () => this.currentFork(),
      respTimeoutMs: this.respTimeoutMs,
      onPeerMisbehaved: this.serving.onPeerMisbehaved,
    };
    for (const protocol of PROTOCOLS) {
      await this.libp2p.handle(protocol.id, (stream, connection) => {
        this.metrics?.reqResp.inc({protocol: protocol.name, direction: "inbound", result: "received"});
        return serveRequest(responder, protocol, stream, connection.remotePeer.toString());
      });
    }
    this.pruneTimer = setInterval(() => this.rateLimiter.prune(), RATE_LIMITER_PRUNE_MS);
    this.pruneTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
    await this.libp2p.unhandle(PROTOCOLS.map((p) => p.id));
  }

  /** Exchanges statuses (v2 from fulu, else v1); returns the peer's. */
  async status(peer: string, ours: Status, signal?: AbortSignal): Promise<Status> {
    const [theirs] = await this.request(
      peer,
      {
        name: "status",
        body: (version) => version.responseType(this.currentFork()).serialize(withEarliestSlot(ours, version)),
        maxChunks: 1,
        decode: (chunk, version) => version.responseType(chunk.fork).deserialize(chunk.bytes) as Status,
      },
      signal
    );
    return theirs;
  }

  /** Tells the peer why we disconnect. Peers may close without answering, so only a failure to reach it is thrown. */
  async goodbye(peer: string, reason: bigint, signal?: AbortSignal): Promise<void> {
    try {
      await this.request(
        peer,
        {name: "goodbye", body: () => ssz.phase0.Goodbye.serialize(reason), maxChunks: 1, responseOptional: true, decode: () => undefined},
        signal
      );
    } catch (e) {
      const code = (e as ReqRespError).code;
      if (code === "DIAL_ERROR" || code === "DIAL_TIMEOUT" || code === "UNSUPPORTED_PROTOCOL" || code === "ABORTED") throw e;
    }
  }

  /** Sends our metadata sequence number; returns the peer's. */
  async ping(peer: string, ourSeq: bigint, signal?: AbortSignal): Promise<bigint> {
    const [seq] = await this.request(
      peer,
      {name: "ping", body: () => ssz.phase0.Ping.serialize(ourSeq), maxChunks: 1, decode: (chunk) => ssz.phase0.Ping.deserialize(chunk.bytes)},
      signal
    );
    return seq;
  }

  /** The peer's metadata, in the newest version both have: syncnets from v2, custodyGroupCount from v3. */
  async metadata(peer: string, signal?: AbortSignal): Promise<Metadata> {
    const [metadata] = await this.request(
      peer,
      {name: "metadata", body: () => null, maxChunks: 1, decode: (chunk, version) => version.responseType(chunk.fork).deserialize(chunk.bytes) as Metadata},
      signal
    );
    return metadata;
  }

  /** Blocks of the peer's chain in [startSlot, startSlot + count), ascending, each typed by its fork. */
  async beaconBlocksByRange(peer: string, request: BlocksByRangeRequest, signal?: AbortSignal): Promise<SignedBeaconBlock[]> {
    const limit = maxRequestBlocks(this.config, this.currentFork());
    if (request.count > limit) throw new ReqRespError("BAD_REQUEST_ARGUMENT", `count ${request.count} exceeds the ${limit} blocks a request may ask for`);
    if (request.step < 1) throw new ReqRespError("BAD_REQUEST_ARGUMENT", "step must be at least 1");
    if (request.count === 0) return [];
    return this.multi(peer, "beacon_blocks_by_range", ssz.phase0.BeaconBlocksByRangeRequest.serialize(request), request.step > 1 ? 1 : request.count, blocksByRangeDecoder(this.config, request), signal);
  }

  async beaconBlocksByRoot(peer: string, roots: Uint8Array[], signal?: AbortSignal): Promise<SignedBeaconBlock[]> {
    const body = (version: ProtocolVersion): Uint8Array => this.requestType(version).serialize(roots);
    this.checkListLength("beacon_blocks_by_root", roots.length);
    return this.multi(peer, "beacon_blocks_by_root", body, roots.length, blocksByRootDecoder(this.config, roots), signal);
  }

  async blobSidecarsByRange(peer: string, request: deneb.BlobSidecarsByRangeRequest, signal?: AbortSignal): Promise<deneb.BlobSidecar[]> {
    const max = this.protocol("blob_sidecars_by_range").maxResponseChunks(this.config, this.currentFork(), request);
    const body = ssz.deneb.BlobSidecarsByRangeRequest.serialize(request);
    return this.multi(peer, "blob_sidecars_by_range", body, max, blobSidecarsByRangeDecoder(this.config, request), signal);
  }

  async blobSidecarsByRoot(peer: string, ids: deneb.BlobIdentifier[], signal?: AbortSignal): Promise<deneb.BlobSidecar[]> {
    this.checkListLength("blob_sidecars_by_root", ids.length);
    const body = (version: ProtocolVersion): Uint8Array => this.requestType(version).serialize(ids);
    return this.multi(peer, "blob_sidecars_by_root", body, ids.length, blobSidecarsByRootDecoder(this.config, ids), signal);
  }

  async dataColumnSidecarsByRange(peer: string, request: fulu.DataColumnSidecarsByRangeRequest, signal?: AbortSignal): Promise<fulu.DataColumnSidecar[]> {
    const max = this.protocol("data_column_sidecars_by_range").maxResponseChunks(this.config, this.currentFork(), request);
    const body = ssz.fulu.DataColumnSidecarsByRangeRequest.serialize(request);
    return this.multi(peer, "data_column_sidecars_by_range", body, max, dataColumnSidecarsByRangeDecoder(this.config, request), signal);
  }

  async dataColumnSidecarsByRoot(peer: string, ids: fulu.DataColumnsByRootIdentifier[], signal?: AbortSignal): Promise<fulu.DataColumnSidecar[]> {
    this.checkListLength("data_column_sidecars_by_root", ids.length);
    const max = this.protocol("data_column_sidecars_by_root").maxResponseChunks(this.config, this.currentFork(), ids);
    const body = (version: ProtocolVersion): Uint8Array => this.requestType(version).serialize(ids);
    return this.multi(peer, "data_column_sidecars_by_root", body, max, dataColumnSidecarsByRootDecoder(this.config, ids), signal);
  }

  private multi<T>(
    peer: string,
    name: ProtocolName,
    body: Uint8Array | ((version: ProtocolVersion) => Uint8Array),
    maxChunks: number,
    decode: (chunk: ReceivedChunk, version: ProtocolVersion) => T,
    signal?: AbortSignal
  ): Promise<T[]> {
    const request: OutgoingRequest<T> = {name, body: typeof body === "function" ? body : () => body, maxChunks, decode};
    return this.request(peer, request, signal);
  }

  /** Every outgoing request, counted by protocol and result (ok, or the ReqRespError code). */
  private async request<T>(peer: string, request: OutgoingRequest<T>, signal?: AbortSignal): Promise<T[]> {
    try {
      const answer = await this.requester.request(peer, request, signal);
      this.metrics?.reqResp.inc({protocol: request.name, direction: "outbound", result: "ok"});
      return answer;
    } catch (e) {
      this.metrics?.reqResp.inc({protocol: request.name, direction: "outbound", result: e instanceof ReqRespError ? e.code : "error"});
      throw e;
    }
  }

  private currentFork(): ForkName {
    return this.config.getForkInfoAtEpoch(this.currentEpoch()).name;
  }

  private protocol(name: ProtocolName): ProtocolVersion {
    return versionsOf(name)[0];
  }

  private requestType(version: ProtocolVersion): {serialize(value: unknown): Uint8Array; maxSize: number} {
    if (!version.requestType) throw new Error(`${version.id} has no request content`);
    return version.requestType(this.config, this.currentFork());
  }

  /** The request list limits of the current fork (MAX_REQUEST_BLOCKS[_DENEB], MAX_REQUEST_BLOB_SIDECARS[_ELECTRA], ...). */
  private checkListLength(name: ProtocolName, length: number): void {
    const fork = this.currentFork();
    const limit =
      name === "beacon_blocks_by_root"
        ? maxRequestBlocks(this.config, fork)
        : name === "blob_sidecars_by_root"
          ? maxRequestBlobSidecars(this.config, fork)
          : this.config.MAX_REQUEST_BLOCKS_DENEB;
    if (length > limit) throw new ReqRespError("BAD_REQUEST_ARGUMENT", `${length} items exceed the ${limit} a ${name} request may hold`);
  }
}

function withEarliestSlot(status: Status, version: ProtocolVersion): Status {
  return version.version === 2 ? {...status, earliestAvailableSlot: status.earliestAvailableSlot ?? 0} : status;
}

function lastScheduledForkEpoch(config: BeaconConfig): number {
  const scheduled = config.forksAscendingEpochOrder.filter((f) => Number.isFinite(f.epoch) && f.epoch !== FAR_FUTURE_EPOCH);
  return scheduled[scheduled.length - 1]?.epoch ?? 0;
}

/** TTFB_TIMEOUT and RESP_TIMEOUT from the config when it carries them (seconds), else the defaults. */
function configTimeouts(config: BeaconConfig): ReqRespTimeouts {
  const seconds = (key: string): number | undefined => {
    const value = (config as unknown as Record<string, unknown>)[key];
    return typeof value === "number" && value > 0 ? value * 1000 : undefined;
  };
  return {
    dialMs: DEFAULT_TIMEOUTS.dialMs,
    ttfbMs: seconds("TTFB_TIMEOUT") ?? DEFAULT_TIMEOUTS.ttfbMs,
    respMs: seconds("RESP_TIMEOUT") ?? DEFAULT_TIMEOUTS.respMs,
  };
}
