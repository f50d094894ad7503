import {encodeSnappyFrames, SnappyFramesDecoder, SnappyFramesError} from "../encoding/snappyFrames.ts";
import type {ByteSource} from "./byteSource.ts";
import {InvalidPayloadError, RespStatus} from "./errors.ts";

/**
 * The ssz_snappy encoding strategy of the p2p spec: each request and response chunk payload is
 * the unsigned protobuf varint of the SSZ length, then the SSZ bytes in snappy frames. A response
 * chunk starts with its result byte; success chunks of protocols with context bytes carry the
 * 4-byte fork digest next. Error chunks carry an ErrorMessage (List[byte, 256]) and no context.
 */

/** the most bytes an unsigned varint of a uint64 may take */
export const MAX_VARINT_BYTES = 10;
export const ERROR_MESSAGE_MAX_BYTES = 256;
export const CONTEXT_BYTES_LENGTH = 4;

export interface SizeBounds {
  min: number;
  max: number;
}

/** Worst-case snappy length of an n-byte payload (the p2p spec's max_compressed_len). */
export function maxCompressedLen(n: number): number {
  return 32 + n + Math.floor(n / 6);
}

export function encodeVarint(value: number): Uint8Array {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Uint8Array.from(out);
}

/** A payload as sent: varint length, then the framed snappy bytes. */
export function encodePayload(ssz: Uint8Array): Uint8Array {
  return concat([encodeVarint(ssz.length), encodeSnappyFrames(ssz)]);
}

export function encodeSuccessChunk(ssz: Uint8Array, contextBytes?: Uint8Array): Uint8Array {
  const head = contextBytes ? concat([Uint8Array.of(RespStatus.SUCCESS), contextBytes]) : Uint8Array.of(RespStatus.SUCCESS);
  return concat([head, encodePayload(ssz)]);
}

export function encodeErrorChunk(status: number, message: string): Uint8Array {
  return concat([Uint8Array.of(status), encodePayload(errorMessageBytes(message))]);
}

/** The message as an ErrorMessage: UTF-8, cut at a character boundary to at most 256 bytes. */
export function errorMessageBytes(message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message);
  if (bytes.length <= ERROR_MESSAGE_MAX_BYTES) return bytes;
  let end = ERROR_MESSAGE_MAX_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // do not split a multi-byte character
  return bytes.slice(0, end);
}

/** An ErrorMessage as printable text: any bytes are valid (spec), control characters are replaced. */
export function errorMessageText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", {fatal: false}).decode(bytes).replace(/[\u0000-\u001f\u007f]/g, "?");
}

/**
 * Reads the varint length prefix: at most 10 bytes, minimally encoded, within uint64.
 * Returns null at a clean end of the stream (no byte at all).
 */
export async function readVarint(source: ByteSource, signal?: AbortSignal): Promise<number | null> {
  for (let i = 0; ; i++) {
    if (!(await source.need(i + 1, signal))) {
      if (i === 0) return null;
      throw new InvalidPayloadError("stream ended inside the length prefix");
    }
    const byte = source.buffer.get(i);
    if ((byte & 0x80) !== 0) {
      if (i === MAX_VARINT_BYTES - 1) throw new InvalidPayloadError(`length prefix longer than ${MAX_VARINT_BYTES} bytes`);
      continue;
    }
    if (i === MAX_VARINT_BYTES - 1 && byte > 1) throw new InvalidPayloadError("length prefix exceeds uint64");
    if (i > 0 && byte === 0) throw new InvalidPayloadError("length prefix is not minimally encoded");
    let value = 0;
    for (let j = i; j >= 0; j--) value = value * 0x80 + (source.buffer.get(j) & 0x7f);
    source.buffer.consume(i + 1);
    // values beyond 2^53 lose precision here, but any such value is far above every bound
    return value;
  }
}

/**
 * Reads one payload: the length prefix (which must lie within `bounds`), then the framed snappy
 * bytes, at most max_compressed_len(n) of them, which must decode to exactly n bytes.
 * Null at a clean end of the stream, before any byte of the prefix.
 */
export async function readPayload(source: ByteSource, bounds: SizeBounds, signal?: AbortSignal): Promise<Uint8Array | null> {
  const n = await readVarint(source, signal);
  if (n === null) return null;
  if (n < bounds.min || n > bounds.max) {
    throw new InvalidPayloadError(`length prefix ${n} outside the type's bounds [${bounds.min}, ${bounds.max}]`);
  }
  const decoder = new SnappyFramesDecoder(n, maxCompressedLen(n));
  try {
    for (;;) {
      const out = decoder.push(source.buffer);
      if (out) return out;
      if (!(await source.fill(signal))) return decoder.end();
    }
  } catch (e) {
    if (e instanceof SnappyFramesError) throw new InvalidPayloadError(e.message);
    throw e;
  }
}

export type ResponseChunk =
  | {kind: "success"; contextBytes: Uint8Array | null; bytes: Uint8Array}
  | {kind: "error"; status: number; message: string};

/**
 * Reads one response chunk; null at the end of the stream before its first byte. For protocols
 * with context bytes, `boundsFor` receives the 4 bytes (and may reject them by throwing);
 * without, it receives null. It returns the size bounds of the chunk's SSZ type.
 */
export async function readResponseChunk(
  source: ByteSource,
  hasContextBytes: boolean,
  boundsFor: (contextBytes: Uint8Array | null) => SizeBounds,
  signal?: AbortSignal
): Promise<ResponseChunk | null> {
  if (!(await source.need(1, signal))) return null;
  const status = source.buffer.get(0);
  source.buffer.consume(1);
  if (status !== RespStatus.SUCCESS) {
    let message: string;
    try {
      message = errorMessageText((await readPayload(source, {min: 0, max: ERROR_MESSAGE_MAX_BYTES}, signal)) ?? new Uint8Array());
    } catch (e) {
      if (!(e instanceof InvalidPayloadError)) throw e;
      message = `(malformed error message: ${e.message})`;
    }
    return {kind: "error", status, message};
  }
  let contextBytes: Uint8Array | null = null;
  if (hasContextBytes) {
    if (!(await source.need(CONTEXT_BYTES_LENGTH, signal))) throw new InvalidPayloadError("stream ended inside the context bytes");
    contextBytes = source.buffer.slice(0, CONTEXT_BYTES_LENGTH);
    source.buffer.consume(CONTEXT_BYTES_LENGTH);
  }
  const bytes = await readPayload(source, boundsFor(contextBytes), signal);
  if (bytes === null) throw new InvalidPayloadError("stream ended before the chunk's payload");
  return {kind: "success", contextBytes, bytes};
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** The bounds a payload of `type` must lie in: its SSZ size bounds, and at most MAX_PAYLOAD_SIZE. */
export function sszBounds(type: {minSize: number; maxSize: number}, maxPayloadSize: number): SizeBounds {
  return {min: type.minSize, max: Math.min(type.maxSize, maxPayloadSize)};
}
