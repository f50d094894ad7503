import type {Stream} from "@libp2p/interface";
import type {BeaconConfig} from "@lodestar/config";
import type {ForkName} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ssz, type altair, type deneb, type fulu} from "@lodestar/types";
import {getLogger} from "../../log.ts";
import {ByteSource} from "./byteSource.ts";
import {encodeErrorChunk, encodeSuccessChunk, readPayload, sszBounds} from "./encoding.ts";
import {deadline, InvalidPayloadError, ResponseError, RespStatus} from "./errors.ts";
import type {ProtocolVersion} from "./protocols.ts";
import type {RateLimiter} from "./rateLimiter.ts";
import type {BlocksByRangeRequest, ReqRespHandlers, ReqRespServing, SlotBytes, Status} from "./types.ts";

const log = getLogger("network");

export interface ResponderContext {
  config: BeaconConfig;
  handlers: ReqRespHandlers;
  rateLimiter: RateLimiter;
  /** the fork of the wall-clock epoch */
  currentFork(): ForkName;
  respTimeoutMs: number;
  onPeerMisbehaved: ReqRespServing["onPeerMisbehaved"];
}

/**
 * Serves one incoming request stream: reads and validates the request (within RESP_TIMEOUT),
 * applies the peer's rate limit, streams the handler's answer chunk by chunk with back-pressure
 * and closes. Never throws: every failure ends in an error chunk or a reset stream.
 */
export async function serveRequest(ctx: ResponderContext, protocol: ProtocolVersion, stream: Stream, peer: string): Promise<void> {
  const fork = ctx.currentFork();
  let request: unknown = null;
  try {
    request = await readRequest(ctx, protocol, stream, fork);
  } catch (e) {
    if (e instanceof InvalidPayloadError) {
      ctx.onPeerMisbehaved(peer, `invalid ${protocol.name} request: ${e.message}`, "mid");
      await sendChunksAndClose(ctx, stream, [encodeErrorChunk(RespStatus.INVALID_REQUEST, e.message)]);
    } else {
      log.debug({peer, protocol: protocol.id, err: (e as Error).message}, "req/resp request not received");
      stream.abort(e as Error);
    }
    return;
  }

  const maxChunks = protocol.maxResponseChunks(ctx.config, fork, request);
  const waitMs = ctx.rateLimiter.take(peer, protocol.name, Math.max(1, maxChunks));
  if (waitMs === null) {
    ctx.onPeerMisbehaved(peer, `over the ${protocol.name} rate limit`, "mid");
    await sendChunksAndClose(ctx, stream, [encodeErrorChunk(RespStatus.RESOURCE_UNAVAILABLE, "rate limited")]);
    return;
  }
  if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));

  await sendChunksAndClose(ctx, stream, responseChunks(ctx, protocol, peer, request, fork, maxChunks));
}

async function readRequest(ctx: ResponderContext, protocol: ProtocolVersion, stream: Stream, fork: ForkName): Promise<unknown> {
  // a request without content (metadata) is answered at once, whatever the requester still sends
  if (!protocol.requestType) return null;
  const type = protocol.requestType(ctx.config, fork);
  const source = new ByteSource(stream);
  const timer = deadline(ctx.respTimeoutMs, "RESP_TIMEOUT", "request");
  try {
    const bytes = await readPayload(source, sszBounds(type, ctx.config.MAX_PAYLOAD_SIZE), timer.signal);
    if (bytes === null) throw new InvalidPayloadError("stream ended without a request");
    if (!(await source.atEnd(timer.signal))) throw new InvalidPayloadError("bytes after the request");
    let request: unknown;
    try {
      request = type.deserialize(bytes);
    } catch (e) {
      throw new InvalidPayloadError(`request is not a valid ${type.typeName}: ${(e as Error).message}`);
    }
    const problem = protocol.invalidRequest?.(request);
    if (problem) throw new InvalidPayloadError(problem);
    return request;
  } finally {
    timer.clear();
  }
}

async function* responseChunks(
  ctx: ResponderContext,
  protocol: ProtocolVersion,
  peer: string,
  request: unknown,
  fork: ForkName,
  maxChunks: number
): AsyncGenerator<Uint8Array> {
  const {handlers} = ctx;
  switch (protocol.name) {
    case "status": {
      const ours = await handlers.onStatus(peer, request as Status);
      const value = protocol.version === 2 ? {...ours, earliestAvailableSlot: ours.earliestAvailableSlot ?? 0} : ours;
      yield encodeSuccessChunk(protocol.responseType(fork).serialize(value));
      return;
    }
    case "goodbye":
      // answered before the handler disconnects: peers such as Lodestar wait for the answer
      try {
        yield encodeSuccessChunk(ssz.phase0.Goodbye.serialize(BigInt(0)));
      } finally {
        handlers.onGoodbye(peer, request as bigint);
      }
      return;
    case "ping":
      yield encodeSuccessChunk(ssz.phase0.Ping.serialize(handlers.onPing(peer, request as bigint)));
      return;
    case "metadata":
      // serializing with the version's own type keeps just the fields that version has
      yield encodeSuccessChunk(protocol.responseType(fork).serialize(handlers.onMetadata(peer)));
      return;
  }
  if (maxChunks === 0) return;
  const objects = objectsFor(handlers, protocol, peer, request, maxChunks);
  let sent = 0;
  // a single-chunk answer the node does not have (a light-client bootstrap, say): ResourceUnavailable
  const unavailable = () => new ResponseError(RespStatus.RESOURCE_UNAVAILABLE, `no ${protocol.name.replaceAll("_", " ")} available`);
  if (!objects) {
    if (!protocol.multiChunk) throw unavailable();
    return;
  }
  for await (const object of objects) {
    const objectFork = ctx.config.getForkName(object.slot);
    if (!protocol.carriesFork(objectFork)) {
      // altair p2p spec: a v1 request for an object of a later fork gets InvalidRequest
      throw new ResponseError(RespStatus.INVALID_REQUEST, `${protocol.name} v${protocol.version} cannot carry ${objectFork} objects`);
    }
    if (object.bytes.length > ctx.config.MAX_PAYLOAD_SIZE) throw new Error(`object at slot ${object.slot} exceeds MAX_PAYLOAD_SIZE`);
    const context = protocol.contextBytes
      ? ctx.config.forkBoundary2ForkDigest(ctx.config.getForkBoundaryAtEpoch(computeEpochAtSlot(object.slot)))
      : undefined;
    yield encodeSuccessChunk(object.bytes, context);
    if (++sent >= maxChunks) return;
  }
  if (sent === 0 && !protocol.multiChunk) throw unavailable();
}

function objectsFor(
  handlers: ReqRespHandlers,
  protocol: ProtocolVersion,
  peer: string,
  request: unknown,
  maxChunks: number
): AsyncIterable<SlotBytes> | undefined {
  switch (protocol.name) {
    case "beacon_blocks_by_range": {
      const {startSlot} = request as BlocksByRangeRequest;
      // the count capped to the protocol maximum; a step above 1 is answered with one block (phase0 spec)
      if (!Number.isSafeInteger(startSlot)) return undefined;
      return handlers.onBeaconBlocksByRange(peer, {startSlot, count: maxChunks, step: 1});
    }
    case "beacon_blocks_by_root":
      return handlers.onBeaconBlocksByRoot(peer, request as Uint8Array[]);
    case "blob_sidecars_by_range":
      return handlers.onBlobSidecarsByRange?.(peer, request as deneb.BlobSidecarsByRangeRequest);
    case "blob_sidecars_by_root":
      return handlers.onBlobSidecarsByRoot?.(peer, request as deneb.BlobIdentifier[]);
    case "data_column_sidecars_by_range":
      return handlers.onDataColumnSidecarsByRange?.(peer, request as fulu.DataColumnSidecarsByRangeRequest);
    case "data_column_sidecars_by_root":
      return handlers.onDataColumnSidecarsByRoot?.(peer, request as fulu.DataColumnsByRootIdentifier[]);
    case "light_client_bootstrap":
      return handlers.onLightClientBootstrap?.(peer, request as Uint8Array);
    case "light_client_updates_by_range":
      return handlers.onLightClientUpdatesByRange?.(peer, request as altair.LightClientUpdatesByRange);
    case "light_client_finality_update":
      return handlers.onLightClientFinalityUpdate?.(peer);
    case "light_client_optimistic_update":
      return handlers.onLightClientOptimisticUpdate?.(peer);
    default:
      return undefined;
  }
}

/**
 * Writes the chunks as they come, waiting for the stream to drain when it asks to (at most
 * RESP_TIMEOUT each time), then closes our side. A failure of the chunk source becomes the last
 * chunk: its ResponseError code, else ServerError with the error's first line.
 */
async function sendChunksAndClose(ctx: ResponderContext, stream: Stream, chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
  const send = async (bytes: Uint8Array): Promise<void> => {
    try {
      if (!stream.send(bytes)) await stream.onDrain({signal: AbortSignal.timeout(ctx.respTimeoutMs)});
    } catch (e) {
      throw new WriteFailure(`write failed: ${(e as Error).message}`);
    }
  };
  try {
    try {
      for await (const chunk of chunks) await send(chunk);
    } catch (e) {
      if (e instanceof WriteFailure) throw e;
      const status = e instanceof ResponseError ? e.status : RespStatus.SERVER_ERROR;
      if (!(e instanceof ResponseError)) log.debug({err: (e as Error).message}, "req/resp handler failed");
      await send(encodeErrorChunk(status, firstLine(e)));
    }
    await stream.close({signal: AbortSignal.timeout(ctx.respTimeoutMs)});
  } catch (e) {
    log.debug({protocol: stream.protocol, err: (e as Error).message}, "req/resp response not delivered");
    stream.abort(e instanceof Error ? e : new Error(String(e)));
  }
}

/** the stream could not take a chunk: the peer is gone or does not read */
class WriteFailure extends Error {}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n", 1)[0] || "server error";
}
