import type {Libp2p, Stream} from "@libp2p/interface";
import {peerIdFromString} from "@libp2p/peer-id";
import type {BeaconConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import {ByteSource} from "./byteSource.ts";
import {encodePayload, readResponseChunk, sszBounds} from "./encoding.ts";
import {deadline, errorCodeOfStatus, InvalidPayloadError, ReqRespError} from "./errors.ts";
import {protocolById, versionsToOffer, type ProtocolName, type ProtocolVersion} from "./protocols.ts";
import type {ReqRespServing, ReqRespTimeouts} from "./types.ts";

/** The p2p spec's MAX_CONCURRENT_REQUESTS: per peer and protocol, a requester MUST NOT exceed it. */
export const MAX_CONCURRENT_REQUESTS = 2;

/** A success chunk as received: its payload, and the fork its context bytes name (phase0 without context bytes). */
export interface ReceivedChunk {
  fork: ForkName;
  contextBytes: Uint8Array | null;
  bytes: Uint8Array;
}

export interface OutgoingRequest<T> {
  name: ProtocolName;
  /** the SSZ request for the negotiated version; null for a request without content */
  body(version: ProtocolVersion): Uint8Array | null;
  /** the most success chunks the request allows (1 for single-chunk protocols) */
  maxChunks: number;
  /** a single-chunk protocol whose peers may close without answering (goodbye) */
  responseOptional?: boolean;
  /** deserializes and checks one chunk; a throw makes the response invalid */
  decode(chunk: ReceivedChunk, version: ProtocolVersion): T;
}

export interface RequesterContext {
  libp2p: Libp2p;
  config: BeaconConfig;
  currentFork(): ForkName;
  timeouts: ReqRespTimeouts;
  onPeerMisbehaved: ReqRespServing["onPeerMisbehaved"];
}

/**
 * Sends requests: negotiates the newest version both sides have, writes the request, half-closes,
 * then reads chunks under TTFB_TIMEOUT (first byte) and RESP_TIMEOUT (each chunk, and the end
 * after the last allowed one). At most MAX_CONCURRENT_REQUESTS run per peer and protocol; more wait.
 */
export class Requester {
  private readonly slots = new Map<string, {active: number; waiting: (() => void)[]}>();

  private readonly ctx: RequesterContext;

  constructor(ctx: RequesterContext) {
    this.ctx = ctx;
  }

  async request<T>(peer: string, req: OutgoingRequest<T>, signal?: AbortSignal): Promise<T[]> {
    const fork = this.ctx.currentFork();
    const versions = versionsToOffer(req.name, fork);
    if (versions.length === 0) throw new ReqRespError("BAD_REQUEST_ARGUMENT", `${req.name} is not in use at ${fork}`);
    const key = `${peer}/${req.name}`;
    await this.acquire(key, signal);
    let stream: Stream | null = null;
    try {
      stream = await this.open(peer, versions, signal);
      const version = protocolById(stream.protocol);
      if (!version) throw new ReqRespError("DIAL_ERROR", `negotiated an unknown protocol ${stream.protocol}`);
      const source = new ByteSource(stream);
      await this.writeRequest(stream, req.body(version), signal);
      const items = await this.readResponse(source, version, req, signal);
      await stream.close({signal: AbortSignal.timeout(this.ctx.timeouts.respMs)}).catch(() => undefined);
      return items;
    } catch (e) {
      const error = this.toReqRespError(e, signal);
      stream?.abort(error);
      if (error.code === "INVALID_RESPONSE") this.ctx.onPeerMisbehaved(peer, `${req.name}: ${error.message}`, "high");
      throw error;
    } finally {
      this.release(key);
    }
  }

  private async open(peer: string, versions: ProtocolVersion[], signal?: AbortSignal): Promise<Stream> {
    const timer = deadline(this.ctx.timeouts.dialMs, "DIAL_TIMEOUT", "dial and protocol negotiation");
    const combined = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
    try {
      // only over a connection the peer manager knows: dialing the peer again here (at an address
      // it announced) would go round the peer manager's choices, and round a network that is down
      const connection = this.ctx.libp2p.getConnections(peerIdFromString(peer)).find((c) => c.status === "open");
      if (!connection) throw new ReqRespError("DIAL_ERROR", "not connected to the peer");
      return await connection.newStream(
        versions.map((v) => v.id),
        {signal: combined}
      );
    } catch (e) {
      if (e instanceof ReqRespError) throw e;
      if (signal?.aborted) throw new ReqRespError("ABORTED", "request aborted");
      if (timer.signal.aborted) throw timer.signal.reason;
      if ((e as Error).name === "UnsupportedProtocolError") {
        throw new ReqRespError("UNSUPPORTED_PROTOCOL", `peer supports none of ${versions.map((v) => v.id).join(", ")}`);
      }
      throw new ReqRespError("DIAL_ERROR", `dial failed: ${(e as Error).message}`);
    } finally {
      timer.clear();
    }
  }

  private async writeRequest(stream: Stream, body: Uint8Array | null, signal?: AbortSignal): Promise<void> {
    const timer = deadline(this.ctx.timeouts.respMs, "RESP_TIMEOUT", "sending the request");
    const combined = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
    try {
      if (body !== null && !stream.send(encodePayload(body))) await stream.onDrain({signal: combined});
      // the spec: the requester closes its write side once the request is written
      await stream.close({signal: combined});
    } finally {
      timer.clear();
    }
  }

  private async readResponse<T>(source: ByteSource, version: ProtocolVersion, req: OutgoingRequest<T>, signal?: AbortSignal): Promise<T[]> {
    const items: T[] = [];
    const ttfb = deadline(this.ctx.timeouts.ttfbMs, "TTFB_TIMEOUT", "first byte of the response");
    try {
      await source.need(1, signal ? AbortSignal.any([signal, ttfb.signal]) : ttfb.signal);
    } finally {
      ttfb.clear();
    }
    for (;;) {
      const timer = deadline(this.ctx.timeouts.respMs, "RESP_TIMEOUT", `response chunk ${items.length}`);
      const chunkSignal = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
      try {
        if (items.length === req.maxChunks) {
          // everything asked for is here; a peer that then keeps the stream open costs it nothing
          const ended = await source.atEnd(chunkSignal).catch((e: unknown) => {
            if (timer.signal.aborted && !signal?.aborted) return true;
            throw e;
          });
          if (!ended) throw new InvalidPayloadError(`more than the ${req.maxChunks} chunks the request allows`);
          return items;
        }
        let fork: ForkName = ForkName.phase0;
        const chunk = await readResponseChunk(
          source,
          version.contextBytes,
          (contextBytes) => {
            if (contextBytes) fork = this.forkOfContext(contextBytes, version);
            return sszBounds(version.responseType(fork), this.ctx.config.MAX_PAYLOAD_SIZE);
          },
          chunkSignal
        );
        if (chunk === null) {
          if (!version.multiChunk && !req.responseOptional) throw new InvalidPayloadError("no response chunk");
          return items;
        }
        if (chunk.kind === "error") {
          throw new ReqRespError(errorCodeOfStatus(chunk.status), `peer answered ${chunk.status}: ${chunk.message}`, chunk.status, chunk.message);
        }
        try {
          items.push(req.decode({fork, contextBytes: chunk.contextBytes, bytes: chunk.bytes}, version));
        } catch (e) {
          throw new InvalidPayloadError(`chunk ${items.length}: ${(e as Error).message}`);
        }
      } finally {
        timer.clear();
      }
    }
  }

  private forkOfContext(contextBytes: Uint8Array, version: ProtocolVersion): ForkName {
    const boundary = this.ctx.config.forkDigest2ForkBoundaryOption(contextBytes);
    if (!boundary) throw new InvalidPayloadError(`unknown fork digest ${Buffer.from(contextBytes).toString("hex")}`);
    if (!version.carriesFork(boundary.fork)) throw new InvalidPayloadError(`${version.id} cannot carry ${boundary.fork} objects`);
    return boundary.fork;
  }

  private toReqRespError(e: unknown, signal?: AbortSignal): ReqRespError {
    if (e instanceof ReqRespError) return e;
    if (e instanceof InvalidPayloadError) return new ReqRespError("INVALID_RESPONSE", e.message);
    if (signal?.aborted) return new ReqRespError("ABORTED", "request aborted");
    return new ReqRespError("STREAM_ERROR", (e as Error).message ?? String(e));
  }

  private async acquire(key: string, signal?: AbortSignal): Promise<void> {
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {active: 0, waiting: []};
      this.slots.set(key, slot);
    }
    while (slot.active >= MAX_CONCURRENT_REQUESTS) {
      if (signal?.aborted) throw new ReqRespError("ABORTED", "request aborted");
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = (): void => {
          slot.waiting.splice(slot.waiting.indexOf(wake), 1);
          resolve();
        };
        slot.waiting.push(wake);
        signal?.addEventListener("abort", onAbort, {once: true});
      });
    }
    slot.active++;
  }

  private release(key: string): void {
    const slot = this.slots.get(key);
    if (!slot) return;
    slot.active--;
    const next = slot.waiting.shift();
    if (next) next();
    else if (slot.active === 0) this.slots.delete(key);
  }
}
