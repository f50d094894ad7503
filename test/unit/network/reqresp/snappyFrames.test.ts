import {describe, expect, it} from "@jest/globals";
import {Compressor, Decompressor} from "snappy";
import {Uint8ArrayList} from "uint8arraylist";
import {
  decodeSnappyFrames,
  encodeSnappyFrames,
  maskedCrc32c,
  SnappyFramesDecoder,
  STREAM_IDENTIFIER,
} from "../../../../src/network/encoding/snappyFrames.ts";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s/g, ""), "hex"));

/** CRC-32C bit by bit from the Castagnoli polynomial (reflected 0x82f63b78): independent of the library under test. */
function referenceCrc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** framing_format.txt section 3: ((crc >> 15) | (crc << 17)) + 0xa282ead8, in 32 bits */
const referenceMask = (crc: number): number => ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;

/** the Rust snap crate's frame encoder and decoder, exposed by the snappy package */
async function theirEncode(data: Uint8Array): Promise<Uint8Array> {
  const c = new Compressor();
  return Buffer.concat([c.update(data), await c.finish()]);
}
async function theirDecode(framed: Uint8Array): Promise<Uint8Array> {
  const d = new Decompressor();
  return Buffer.concat([d.update(framed), await d.finish()]);
}

function pseudoRandom(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** a chunk of `type` around `body` (header: type, 24-bit little-endian length) */
function chunk(type: number, body: Uint8Array): Uint8Array {
  return Uint8Array.from([type, body.length & 0xff, (body.length >> 8) & 0xff, body.length >> 16, ...body]);
}
function uncompressedChunk(data: Uint8Array, crc = maskedCrc32c(data)): Uint8Array {
  const body = new Uint8Array(4 + data.length);
  new DataView(body.buffer).setUint32(0, crc, true);
  body.set(data, 4);
  return chunk(0x01, body);
}
const concat = (...parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);
/** byte equality (jest's toEqual walks large arrays element by element) */
const expectSameBytes = (actual: Uint8Array | null, expected: Uint8Array): void => {
  expect(actual).not.toBeNull();
  expect(actual?.length).toBe(expected.length);
  expect(Buffer.compare(actual as Uint8Array, expected)).toBe(0);
};

describe("snappy framing format", () => {
  it("starts every stream with the stream identifier of the framing format", () => {
    expect(hex(STREAM_IDENTIFIER)).toBe("ff060000734e61507059");
    expect(hex(encodeSnappyFrames(new Uint8Array()))).toBe("ff060000734e61507059");
  });

  it("masks CRC-32C as the framing format says", () => {
    // the CRC-32C check value (CRC catalogue: "123456789" -> 0xe3069283)
    expect(referenceCrc32c(new TextEncoder().encode("123456789"))).toBe(0xe3069283);
    for (const data of [new Uint8Array(), new TextEncoder().encode("hello"), pseudoRandom(70_000, 7)]) {
      expect(maskedCrc32c(data)).toBe(referenceMask(referenceCrc32c(data)));
    }
  });

  // byte vectors of the gingersnap crate's tests (another implementation of the format)
  it("matches another implementation's frames: an uncompressed and a compressed chunk", () => {
    const hello = new TextEncoder().encode("hello");
    const nines = new TextEncoder().encode("9".repeat(24));
    expect(hex(encodeSnappyFrames(hello))).toBe("ff060000734e61507059" + "01090000" + "bb1f1c19" + "68656c6c6f");
    expect(hex(encodeSnappyFrames(nines))).toBe("ff060000734e61507059" + "000a0000" + "59772563" + "1800395a0100");
    expect(decodeSnappyFrames(fromHex("ff060000734e61507059 01090000 bb1f1c19 68656c6c6f"), 5)).toEqual(hello);
    expect(decodeSnappyFrames(fromHex("ff060000734e61507059 000a0000 59772563 1800395a0100"), 24)).toEqual(nines);
    const zeros32 = "000a0000 faffd70f 2000007a0100";
    expect(decodeSnappyFrames(fromHex(`ff060000734e61507059 ${zeros32} ${zeros32} ${zeros32}`), 96)).toEqual(new Uint8Array(96));
  });

  it("round-trips with the snap crate's frame encoder and decoder", async () => {
    const inputs = [
      new Uint8Array(),
      Uint8Array.of(42),
      pseudoRandom(65_535, 1),
      pseudoRandom(65_536, 2),
      pseudoRandom(65_537, 3),
      new Uint8Array(200_000).fill(7),
      concat(pseudoRandom(100_000, 4), new Uint8Array(100_000)),
    ];
    for (const data of inputs) {
      expectSameBytes(await theirDecode(encodeSnappyFrames(data)), data);
      expectSameBytes(decodeSnappyFrames(await theirEncode(data), data.length), data);
    }
  });

  it("decodes input fed a byte at a time, leaving the bytes after the payload", () => {
    const data = pseudoRandom(70_000, 5);
    const input = new Uint8ArrayList();
    const decoder = new SnappyFramesDecoder(data.length);
    let out: Uint8Array | null = null;
    for (const byte of concat(encodeSnappyFrames(data), Uint8Array.of(0xaa, 0xbb))) {
      input.append(Uint8Array.of(byte));
      out ??= decoder.push(input);
    }
    expectSameBytes(out, data);
    expect(hex(input.subarray())).toBe("aabb");
  });

  it("skips padding and reserved skippable chunks", () => {
    const data = new TextEncoder().encode("payload");
    const framed = concat(STREAM_IDENTIFIER, chunk(0xfe, new Uint8Array(3)), chunk(0x80, Uint8Array.of(1)), chunk(0xfd, new Uint8Array()), uncompressedChunk(data));
    expect(decodeSnappyFrames(framed, data.length)).toEqual(data);
  });

  it("rejects a corrupted checksum, in uncompressed and compressed chunks", () => {
    const data = new TextEncoder().encode("hello");
    expect(() => decodeSnappyFrames(concat(STREAM_IDENTIFIER, uncompressedChunk(data, maskedCrc32c(data) ^ 1)), 5)).toThrow("checksum");
    const framed = fromHex("ff060000734e61507059 000a0000 59772564 1800395a0100");
    expect(() => decodeSnappyFrames(framed, 24)).toThrow("checksum");
  });

  it("rejects truncated input and a stream without its identifier", () => {
    const framed = encodeSnappyFrames(pseudoRandom(1000, 6));
    for (const cut of [3, 10, 13, framed.length - 1]) {
      expect(() => decodeSnappyFrames(framed.subarray(0, cut), 1000)).toThrow(/ended/);
    }
    expect(() => decodeSnappyFrames(uncompressedChunk(Uint8Array.of(1)), 1)).toThrow("stream identifier");
    expect(() => decodeSnappyFrames(concat(fromHex("ff060000734e61507058"), uncompressedChunk(Uint8Array.of(1))), 1)).toThrow("identifier");
  });

  it("rejects reserved unskippable chunk types", () => {
    for (const type of [0x02, 0x40, 0x7f]) {
      expect(() => decodeSnappyFrames(concat(STREAM_IDENTIFIER, chunk(type, Uint8Array.of(0))), 1)).toThrow("reserved unskippable");
    }
  });

  it("stops at a chunk header that declares more than the payload, before the chunk body arrives", () => {
    // 10 bytes announced where 5 are expected: the header alone is enough to fail
    const header = uncompressedChunk(new Uint8Array(10)).subarray(0, 8);
    const decoder = new SnappyFramesDecoder(5);
    expect(() => decoder.push(new Uint8ArrayList(STREAM_IDENTIFIER, header))).toThrow("exceeds");
    // an uncompressed chunk may not hold more than 65536 bytes, whatever the payload length
    const big = Uint8Array.of(0x01, 0x05, 0x00, 0x01); // 65541 = 4 + 65537
    expect(() => new SnappyFramesDecoder(1_000_000).push(new Uint8ArrayList(STREAM_IDENTIFIER, big))).toThrow("exceeds 65536");
    // a compressed chunk whose block declares more than the payload is refused before decompression
    const bomb = encodeSnappyFrames(new Uint8Array(60_000)); // one compressed chunk of 60000 zeros
    expect(() => decodeSnappyFrames(bomb, 100)).toThrow("declares 60000");
    // and the whole framed input is bounded (max_compressed_len in the p2p spec)
    const padded = concat(STREAM_IDENTIFIER, chunk(0xfe, new Uint8Array(100)), uncompressedChunk(Uint8Array.of(1)));
    expect(() => new SnappyFramesDecoder(1, 41).push(new Uint8ArrayList(padded))).toThrow("framed input exceeds 41");
  });

  it("rejects a payload longer or shorter than declared", () => {
    const framed = encodeSnappyFrames(pseudoRandom(9, 8));
    expect(() => decodeSnappyFrames(framed, 8)).toThrow("exceeds");
    expect(() => decodeSnappyFrames(framed, 10)).toThrow("ended after 9 of 10");
  });
});
