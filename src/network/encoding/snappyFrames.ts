import crc32c from "@chainsafe/fast-crc32c";
import {compressSync, uncompressSync} from "snappy";
import {Uint8ArrayList} from "uint8arraylist";

/**
 * Snappy framing format (google/snappy framing_format.txt), as the p2p spec's ssz_snappy encoding
 * uses it: a stream identifier chunk, then compressed (0x00) and uncompressed (0x01) chunks of at
 * most 65536 bytes of data each, every one carrying the masked CRC-32C of its uncompressed data.
 * Padding (0xfe) and reserved skippable chunks (0x80-0xfd) are skipped; reserved unskippable
 * chunks (0x02-0x7f) are errors.
 */

export const CHUNK_STREAM_IDENTIFIER = 0xff;
export const CHUNK_COMPRESSED = 0x00;
export const CHUNK_UNCOMPRESSED = 0x01;
export const CHUNK_PADDING = 0xfe;
/** the whole stream identifier chunk: type 0xff, length 6, "sNaPpY" */
export const STREAM_IDENTIFIER = Uint8Array.of(0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59);
/** the most uncompressed data one chunk may carry */
export const MAX_CHUNK_DATA = 65536;

const HEADER_LEN = 4;
const CRC_LEN = 4;
/** snappy's worst case for a block of n bytes (the p2p spec's max_compressed_len) */
const maxRawCompressedLen = (n: number): number => 32 + n + Math.floor(n / 6);
/** the largest body a compressed chunk can have: the CRC and a raw block of MAX_CHUNK_DATA bytes */
const MAX_COMPRESSED_CHUNK_BODY = CRC_LEN + maxRawCompressedLen(MAX_CHUNK_DATA);

export class SnappyFramesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnappyFramesError";
  }
}

/** The framing format's checksum: CRC-32C of the uncompressed data, rotated right by 15 bits plus a constant. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c.calculate(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** Frames `data` as one snappy stream: the identifier, then one chunk per 64 KiB; an empty input is the identifier alone. */
export function encodeSnappyFrames(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [STREAM_IDENTIFIER];
  for (let offset = 0; offset < data.length; offset += MAX_CHUNK_DATA) {
    const raw = data.subarray(offset, Math.min(offset + MAX_CHUNK_DATA, data.length));
    const compressed = compressSync(raw);
    // the reference encoder's rule: keep the compressed form only when it saves at least 1/8
    const useCompressed = compressed.length < raw.length - Math.floor(raw.length / 8);
    const body = useCompressed ? compressed : raw;
    const header = new Uint8Array(HEADER_LEN + CRC_LEN);
    const view = new DataView(header.buffer);
    const chunkLength = CRC_LEN + body.length;
    header[0] = useCompressed ? CHUNK_COMPRESSED : CHUNK_UNCOMPRESSED;
    header[1] = chunkLength & 0xff;
    header[2] = (chunkLength >>> 8) & 0xff;
    header[3] = (chunkLength >>> 16) & 0xff;
    view.setUint32(HEADER_LEN, maskedCrc32c(raw), true);
    parts.push(header, body);
  }
  return concat(parts);
}

/**
 * Incremental decoder of one framed stream whose uncompressed length is known in advance (the
 * ssz_snappy length prefix). Feed it the input buffer as bytes arrive: it consumes whole chunks
 * and leaves anything it does not need (a partial chunk, or the bytes after its payload). It fails
 * as soon as a chunk header declares more than the payload or the input budget allows, before
 * the chunk body arrives, so it never holds more than one chunk of input.
 */
export class SnappyFramesDecoder {
  private readonly uncompressedLength: number;
  private readonly maxInputBytes: number;
  private readonly parts: Uint8Array[] = [];
  private produced = 0;
  private consumed = 0;
  private sawIdentifier = false;
  /** bytes still to drop of a skippable chunk already started */
  private skipping = 0;

  /**
   * @param uncompressedLength the exact payload length expected
   * @param maxInputBytes the most framed bytes that may be read for it (max_compressed_len in the p2p spec)
   */
  constructor(uncompressedLength: number, maxInputBytes = Number.POSITIVE_INFINITY) {
    this.uncompressedLength = uncompressedLength;
    this.maxInputBytes = maxInputBytes;
  }

  /** Consumes what it can from `input`; the payload once complete, else null (more input needed). */
  push(input: Uint8ArrayList): Uint8Array | null {
    for (;;) {
      if (this.skipping > 0) {
        const n = Math.min(this.skipping, input.byteLength);
        input.consume(n);
        this.skipping -= n;
        if (this.skipping > 0) return null;
      }
      if (this.produced === this.uncompressedLength) {
        // An empty payload may be sent as the identifier alone; anything else after a complete payload belongs to the caller.
        if (this.uncompressedLength > 0 || this.sawIdentifier) return this.result();
        if (input.byteLength === 0) return null;
        if (input.get(0) !== CHUNK_STREAM_IDENTIFIER) return this.result();
      }
      if (input.byteLength < HEADER_LEN) return null;
      const type = input.get(0);
      const length = input.get(1) | (input.get(2) << 8) | (input.get(3) << 16);
      this.checkChunkHeader(type, length);
      if (this.consumed + HEADER_LEN + length > this.maxInputBytes) {
        throw new SnappyFramesError(`framed input exceeds ${this.maxInputBytes} bytes for a ${this.uncompressedLength}-byte payload`);
      }
      if (type === CHUNK_PADDING || (type >= 0x80 && type <= 0xfd)) {
        input.consume(HEADER_LEN);
        this.consumed += HEADER_LEN + length;
        this.skipping = length;
        continue;
      }
      if (input.byteLength < HEADER_LEN + length) return null;
      const body = input.subarray(HEADER_LEN, HEADER_LEN + length);
      input.consume(HEADER_LEN + length);
      this.consumed += HEADER_LEN + length;
      this.readChunk(type, body);
    }
  }

  /** The input ended: the payload if it is complete, else an error. */
  end(): Uint8Array {
    if (this.skipping > 0) throw new SnappyFramesError("input ended inside a skippable chunk");
    if (this.produced < this.uncompressedLength) {
      throw new SnappyFramesError(`input ended after ${this.produced} of ${this.uncompressedLength} bytes`);
    }
    return this.result();
  }

  private checkChunkHeader(type: number, length: number): void {
    if (!this.sawIdentifier && type !== CHUNK_STREAM_IDENTIFIER) {
      throw new SnappyFramesError(`stream does not start with the stream identifier (chunk type 0x${type.toString(16)})`);
    }
    if (type >= 0x02 && type <= 0x7f) throw new SnappyFramesError(`reserved unskippable chunk type 0x${type.toString(16)}`);
    if (type === CHUNK_STREAM_IDENTIFIER && length !== STREAM_IDENTIFIER.length - HEADER_LEN) {
      throw new SnappyFramesError(`stream identifier chunk of length ${length}`);
    }
    if (type === CHUNK_COMPRESSED || type === CHUNK_UNCOMPRESSED) {
      if (length < CRC_LEN) throw new SnappyFramesError(`data chunk of length ${length} has no checksum`);
      const remaining = this.uncompressedLength - this.produced;
      if (type === CHUNK_UNCOMPRESSED && length - CRC_LEN > Math.min(MAX_CHUNK_DATA, remaining)) {
        throw new SnappyFramesError(`uncompressed chunk of ${length - CRC_LEN} bytes exceeds ${Math.min(MAX_CHUNK_DATA, remaining)}`);
      }
      if (type === CHUNK_COMPRESSED && length > MAX_COMPRESSED_CHUNK_BODY) {
        throw new SnappyFramesError(`compressed chunk of ${length} bytes exceeds ${MAX_COMPRESSED_CHUNK_BODY}`);
      }
    }
  }

  private readChunk(type: number, body: Uint8Array): void {
    if (type === CHUNK_STREAM_IDENTIFIER) {
      for (let i = 0; i < body.length; i++) {
        if (body[i] !== STREAM_IDENTIFIER[HEADER_LEN + i]) throw new SnappyFramesError("bad stream identifier");
      }
      this.sawIdentifier = true;
      return;
    }
    const expectedCrc = new DataView(body.buffer, body.byteOffset, CRC_LEN).getUint32(0, true);
    let data = body.subarray(CRC_LEN);
    if (type === CHUNK_COMPRESSED) {
      const declared = rawUncompressedLength(data);
      const remaining = this.uncompressedLength - this.produced;
      if (declared > Math.min(MAX_CHUNK_DATA, remaining)) {
        throw new SnappyFramesError(`compressed chunk declares ${declared} bytes, more than ${Math.min(MAX_CHUNK_DATA, remaining)}`);
      }
      try {
        data = uncompressSync(data, {asBuffer: true}) as Buffer;
      } catch (e) {
        throw new SnappyFramesError(`corrupt compressed chunk: ${(e as Error).message}`);
      }
      if (data.length !== declared) throw new SnappyFramesError("compressed chunk decoded to a length other than it declared");
    }
    if (maskedCrc32c(data) !== expectedCrc) throw new SnappyFramesError("chunk checksum mismatch");
    this.parts.push(data);
    this.produced += data.length;
  }

  private result(): Uint8Array {
    // a copy, so that the payload does not keep alive the larger network buffer it may be a view of
    return concat(this.parts, true);
  }
}

/** Decodes a whole framed stream that must hold exactly `uncompressedLength` bytes and nothing after them. */
export function decodeSnappyFrames(framed: Uint8Array, uncompressedLength: number): Uint8Array {
  const input = new Uint8ArrayList(framed);
  const decoder = new SnappyFramesDecoder(uncompressedLength);
  const out = decoder.push(input) ?? decoder.end();
  if (input.byteLength > 0) throw new SnappyFramesError(`${input.byteLength} bytes after the payload`);
  return out;
}

/** The length a raw snappy block declares in its varint preamble. */
function rawUncompressedLength(block: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    value += (block[i] & 0x7f) * 2 ** (7 * i);
    if ((block[i] & 0x80) === 0) return value;
  }
  throw new SnappyFramesError("compressed chunk has a malformed length preamble");
}

function concat(parts: Uint8Array[], copy = false): Uint8Array {
  if (parts.length === 1 && !copy) return parts[0];
  const total = parts.reduce((sum, p) => sum + p.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
