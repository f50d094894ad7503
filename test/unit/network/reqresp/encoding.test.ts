import {describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {encodeSnappyFrames, STREAM_IDENTIFIER} from "../../../../src/network/encoding/snappyFrames.ts";
import {
  encodeErrorChunk,
  encodePayload,
  encodeSuccessChunk,
  encodeVarint,
  maxCompressedLen,
  readPayload,
  readResponseChunk,
  readVarint,
  sszBounds,
} from "../../../../src/network/reqresp/encoding.ts";
import {InvalidPayloadError} from "../../../../src/network/reqresp/errors.ts";
import {sourceOf} from "./fakeStream.ts";

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const fromHex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/\s/g, ""), "hex"));
const concat = (...parts: Uint8Array[]): Uint8Array => Buffer.concat(parts);
const MAX_PAYLOAD_SIZE = 10 * 2 ** 20;

/**
 * Lodestar's ssz_snappy fixtures (packages/reqresp test data): the same objects encoded by another
 * client, length prefix then frames.
 */
const status = {
  forkDigest: new Uint8Array(4).fill(0xda),
  finalizedRoot: new Uint8Array(32).fill(0xda),
  finalizedEpoch: 9,
  headRoot: new Uint8Array(32).fill(0xda),
  headSlot: 9,
};
const LODESTAR_STATUS = "54 ff060000734e61507059 001b0000097802c15400da8a010004090009017e2b001c0900000000000000";
const LODESTAR_PING_1 = "08 ff060000734e61507059 010c00000175de410100000000000000";
const LODESTAR_ALTAIR_METADATA_SEQ_8 = "11 ff060000734e61507059 01150000ff4669fc0800000000000000000000000000000000";

async function expectInvalid(promise: Promise<unknown>, message: RegExp | string): Promise<void> {
  await expect(promise).rejects.toThrow(InvalidPayloadError);
  await expect(promise).rejects.toThrow(message);
}

describe("ssz_snappy encoding", () => {
  it("encodes as another client does: varint SSZ length, then snappy frames", () => {
    expect(hex(encodePayload(ssz.phase0.Ping.serialize(BigInt(1))))).toBe(LODESTAR_PING_1.replace(/ /g, ""));
    expect(hex(encodePayload(ssz.phase0.Status.serialize(status)))).toBe(LODESTAR_STATUS.replace(/ /g, ""));
  });

  it("decodes another client's payloads", async () => {
    const ping = await readPayload(sourceOf(fromHex(LODESTAR_PING_1)), sszBounds(ssz.phase0.Ping, MAX_PAYLOAD_SIZE));
    expect(ssz.phase0.Ping.deserialize(ping as Uint8Array)).toBe(BigInt(1));
    const decoded = await readPayload(sourceOf(fromHex(LODESTAR_STATUS), {pieceSize: 1}), sszBounds(ssz.phase0.Status, MAX_PAYLOAD_SIZE));
    expect(ssz.phase0.Status.equals(ssz.phase0.Status.deserialize(decoded as Uint8Array), status)).toBe(true);
    const metadata = await readPayload(sourceOf(fromHex(LODESTAR_ALTAIR_METADATA_SEQ_8)), sszBounds(ssz.altair.Metadata, MAX_PAYLOAD_SIZE));
    expect(ssz.altair.Metadata.deserialize(metadata as Uint8Array).seqNumber).toBe(BigInt(8));
  });

  it("writes and reads unsigned protobuf varints", async () => {
    // the protobuf encoding guide's example: 300 is ac 02
    expect(hex(encodeVarint(300))).toBe("ac02");
    expect(hex(encodeVarint(0))).toBe("00");
    expect(hex(encodeVarint(MAX_PAYLOAD_SIZE))).toBe("80808005");
    expect(await readVarint(sourceOf(fromHex("ac02")))).toBe(300);
    expect(await readVarint(sourceOf(new Uint8Array()))).toBeNull();
  });

  it("refuses a length prefix over 10 bytes, beyond uint64, or not minimal", async () => {
    await expectInvalid(readVarint(sourceOf(fromHex("ffffffffffffffffffff01"))), "longer than 10 bytes");
    await expectInvalid(readVarint(sourceOf(fromHex("ffffffffffffffffff02"))), "exceeds uint64");
    await expectInvalid(readVarint(sourceOf(fromHex("8000"))), "not minimally encoded");
    await expectInvalid(readVarint(sourceOf(fromHex("8080"))), "ended inside the length prefix");
    // the largest uint64 is a valid prefix, just far too large for any type
    const max = fromHex("ffffffffffffffffff01");
    expect(await readVarint(sourceOf(max))).toBeGreaterThan(2 ** 63);
    await expectInvalid(readPayload(sourceOf(max), sszBounds(ssz.phase0.Status, MAX_PAYLOAD_SIZE)), "outside the type's bounds");
  });

  it("holds the length prefix to the SSZ type's bounds and MAX_PAYLOAD_SIZE", async () => {
    const statusBytes = ssz.phase0.Status.serialize(status);
    for (const n of [83, 85]) {
      const bytes = concat(encodeVarint(n), encodeSnappyFrames(new Uint8Array(n)));
      await expectInvalid(readPayload(sourceOf(bytes), sszBounds(ssz.phase0.Status, MAX_PAYLOAD_SIZE)), `length prefix ${n} outside the type's bounds [84, 84]`);
    }
    expect(await readPayload(sourceOf(encodePayload(statusBytes)), sszBounds(ssz.phase0.Status, MAX_PAYLOAD_SIZE))).toEqual(statusBytes);
    // a fulu block's SSZ bound is above MAX_PAYLOAD_SIZE: the payload limit applies (the prefix alone is refused)
    expect(ssz.fulu.SignedBeaconBlock.maxSize).toBeGreaterThan(MAX_PAYLOAD_SIZE);
    const bounds = sszBounds(ssz.fulu.SignedBeaconBlock, MAX_PAYLOAD_SIZE);
    expect(bounds.max).toBe(MAX_PAYLOAD_SIZE);
    await expectInvalid(readPayload(sourceOf(encodeVarint(MAX_PAYLOAD_SIZE + 1), {open: true}), bounds), "outside the type's bounds");
  });

  it("refuses a payload longer or shorter than its prefix, and anything but snappy frames", async () => {
    const bounds = {min: 0, max: 100};
    await expectInvalid(readPayload(sourceOf(concat(encodeVarint(8), encodeSnappyFrames(new Uint8Array(9)))), bounds), "exceeds");
    await expectInvalid(readPayload(sourceOf(concat(encodeVarint(8), encodeSnappyFrames(new Uint8Array(7)))), bounds), "ended after 7 of 8");
    await expectInvalid(readPayload(sourceOf(concat(encodeVarint(8), new Uint8Array(8))), bounds), "stream identifier");
  });

  it("reads at most max_compressed_len(n) framed bytes for an n-byte payload", async () => {
    expect(maxCompressedLen(8)).toBe(41);
    expect(maxCompressedLen(MAX_PAYLOAD_SIZE)).toBe(32 + MAX_PAYLOAD_SIZE + Math.floor(MAX_PAYLOAD_SIZE / 6));
    const data = encodeSnappyFrames(new Uint8Array(8)).subarray(STREAM_IDENTIFIER.length);
    const padding = (n: number): Uint8Array => concat(Uint8Array.of(0xfe, n, 0, 0), new Uint8Array(n));
    // identifier 10 + padding + data chunk 16: 41 bytes pass, 42 do not
    const ok = concat(encodeVarint(8), STREAM_IDENTIFIER, padding(11), data);
    expect(await readPayload(sourceOf(ok), {min: 8, max: 8})).toEqual(new Uint8Array(8));
    const over = concat(encodeVarint(8), STREAM_IDENTIFIER, padding(12), data);
    await expectInvalid(readPayload(sourceOf(over), {min: 8, max: 8}), "framed input exceeds 41");
  });

  it("reads response chunks: result, context bytes, payload; errors as ErrorMessage", async () => {
    const digest = fromHex("deadbeef");
    const ping = ssz.phase0.Ping.serialize(BigInt(5));
    const longMessage = "é".repeat(200); // 400 bytes of UTF-8
    const error = encodeErrorChunk(2, longMessage);
    const source = sourceOf(concat(encodeSuccessChunk(ping, digest), encodeSuccessChunk(new Uint8Array(), digest), error), {pieceSize: 3});
    const contexts: (Uint8Array | null)[] = [];
    const bounds = (context: Uint8Array | null): {min: number; max: number} => {
      contexts.push(context);
      return {min: 0, max: 8};
    };
    expect(await readResponseChunk(source, true, bounds)).toEqual({kind: "success", contextBytes: digest, bytes: ping});
    // an empty payload is its prefix and the stream identifier alone
    expect(await readResponseChunk(source, true, bounds)).toEqual({kind: "success", contextBytes: digest, bytes: new Uint8Array()});
    // cut to 256 bytes at a character boundary; no context bytes on an error chunk
    expect(await readResponseChunk(source, true, bounds)).toEqual({kind: "error", status: 2, message: "é".repeat(128)});
    expect(contexts).toEqual([digest, digest]);
    expect(await readResponseChunk(source, true, bounds)).toBeNull();
    expect(await readResponseChunk(sourceOf(new Uint8Array()), true, bounds)).toBeNull();
  });

  it("keeps a peer's error text printable, and an oversized ErrorMessage is still an error response", async () => {
    const raw = concat(Uint8Array.of(1), encodePayload(Uint8Array.of(0x62, 0x61, 0x64, 0x0a, 0x07, 0xff)));
    expect(await readResponseChunk(sourceOf(raw), false, () => ({min: 0, max: 0}))).toEqual({kind: "error", status: 1, message: "bad??\ufffd"});
    const oversized = concat(Uint8Array.of(3), encodePayload(new Uint8Array(257).fill(0x61)));
    const chunk = await readResponseChunk(sourceOf(oversized), false, () => ({min: 0, max: 0}));
    expect(chunk).toMatchObject({kind: "error", status: 3, message: expect.stringContaining("malformed error message")});
  });
});
