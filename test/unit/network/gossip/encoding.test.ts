import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {createHash} from "node:crypto";
import {compressSync} from "snappy";
import {devChainConfig} from "../../../../src/config/chainConfig.ts";
import {
  GossipEncodingError,
  computeMessageIdFromRaw,
  createGossipDataTransform,
  createMsgIdFn,
  decompressGossipData,
  fastMsgIdFn,
  genericPayloadLimits,
  maxCompressedLen,
  maxMessageSize,
  snappyDeclaredLength,
} from "../../../../src/network/gossip/encoding.ts";
import {stringifyTopic} from "../../../../src/network/gossip/topics.ts";

const config = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "phase0", forkEpochs: {altair: 1}}), new Uint8Array(32).fill(3));
const phase0Topic = stringifyTopic(config, {type: "voluntary_exit", boundary: config.getForkBoundaryAtEpoch(0)});
const altairTopic = stringifyTopic(config, {type: "voluntary_exit", boundary: config.getForkBoundaryAtEpoch(1)});
const blockTopic = stringifyTopic(config, {type: "beacon_block", boundary: config.getForkBoundaryAtEpoch(1)});

/** SHA256(parts)[:20], by the spec's formula. */
function specId(...parts: Uint8Array[]): string {
  return createHash("sha256").update(Buffer.concat(parts)).digest().subarray(0, 20).toString("hex");
}
const VALID = Buffer.from("01000000", "hex");
const INVALID = Buffer.from("00000000", "hex");
function lengthLE(topic: string): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(Buffer.byteLength(topic)));
  return b;
}
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

const exit = ssz.phase0.SignedVoluntaryExit.serialize({message: {epoch: 3, validatorIndex: 7}, signature: new Uint8Array(96).fill(1)});

describe("gossip size limits", () => {
  it("follow max_compressed_len and max_message_size of MAX_PAYLOAD_SIZE", () => {
    expect(config.MAX_PAYLOAD_SIZE).toBe(10485760);
    expect(maxCompressedLen(10485760)).toBe(32 + 10485760 + 1747626);
    expect(maxCompressedLen(6)).toBe(39);
    expect(maxMessageSize(config)).toBe(32 + 10485760 + 1747626 + 1024);
    expect(maxMessageSize({MAX_PAYLOAD_SIZE: 1000})).toBe(1024 * 1024);
    const legacy = {GOSSIP_MAX_SIZE: 1 << 20} as unknown as {MAX_PAYLOAD_SIZE: number};
    expect(genericPayloadLimits(legacy).maxUncompressed).toBe(1 << 20);
  });

  it("read the snappy preamble: a little-endian base-128 varint of at most 32 bits", () => {
    expect(snappyDeclaredLength(Uint8Array.of(0x00))).toBe(0);
    expect(snappyDeclaredLength(Uint8Array.of(0x7f, 0xff))).toBe(127);
    expect(snappyDeclaredLength(Uint8Array.of(0x80, 0x01))).toBe(128);
    expect(snappyDeclaredLength(Uint8Array.of(0xfe, 0xff, 0x7f))).toBe(2097150);
    expect(snappyDeclaredLength(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f))).toBe(0xffffffff);
    expect(snappyDeclaredLength(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x1f))).toBeNull();
    expect(snappyDeclaredLength(Uint8Array.of(0x80, 0x80))).toBeNull();
    expect(snappyDeclaredLength(new Uint8Array())).toBeNull();
    expect(snappyDeclaredLength(compressSync(Buffer.alloc(300_000, 7)))).toBe(300_000);
  });

  it("refuse oversized and invalid data before decompressing", () => {
    const limits = genericPayloadLimits(config);
    const refused = (data: Uint8Array, message: RegExp, l = limits) => {
      expect(() => decompressGossipData(data, l)).toThrow(GossipEncodingError);
      expect(() => decompressGossipData(data, l)).toThrow(message);
    };
    // a valid block of MAX_PAYLOAD_SIZE + 1 zeros: small on the wire, refused from its preamble
    const bomb = compressSync(Buffer.alloc(config.MAX_PAYLOAD_SIZE + 1));
    expect(bomb.length).toBeLessThan(limits.maxCompressed);
    refused(bomb, /declared uncompressed size 10485761 exceeds the limit 10485760/);
    // garbage claiming 4 GiB: the preamble says too much, nothing is allocated
    refused(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3), /declared uncompressed size 4294967295 exceeds/);
    refused(new Uint8Array(limits.maxCompressed + 1), /compressed size \d+ exceeds max_compressed_len/);
    refused(Uint8Array.of(0x80), /malformed snappy length preamble/);
    refused(Uint8Array.of(0x05, 0xff, 0xff), /invalid snappy block/);
    // the topic's type bounds: a beacon block is at least its fixed part
    const transform = createGossipDataTransform(config);
    expect(() => transform.inboundTransform(blockTopic, compressSync(Buffer.alloc(10)))).toThrow(/below the type's minimum/);
    expect(() => transform.inboundTransform(altairTopic, compressSync(Buffer.alloc(200)))).toThrow(/exceeds the limit 112/);
    expect(() => transform.inboundTransform("/eth2/00000000/voluntary_exit/ssz_snappy", compressSync(exit))).toThrow(/unknown topic/);
  });

  it("compress outbound and decompress inbound as raw snappy blocks", () => {
    const transform = createGossipDataTransform(config);
    const wire = transform.outboundTransform(altairTopic, exit);
    expect(hex(wire)).toBe(hex(compressSync(exit)));
    expect(hex(transform.inboundTransform(altairTopic, wire))).toBe(hex(exit));
    expect(() => transform.outboundTransform(altairTopic, new Uint8Array(113))).toThrow(/exceeds the limit 112/);
  });
});

describe("gossip message ids", () => {
  it("phase0 topics: SHA256(MESSAGE_DOMAIN_VALID_SNAPPY + decompressed)[:20]", () => {
    const id = computeMessageIdFromRaw(config, phase0Topic, compressSync(exit));
    expect(id).toHaveLength(20);
    expect(hex(id)).toBe(specId(VALID, exit));
    expect(hex(createMsgIdFn(config)({type: "unsigned", topic: phase0Topic, data: exit}))).toBe(specId(VALID, exit));
  });

  it("from altair: the topic's length (uint64 little-endian) and bytes come between domain and data", () => {
    const expected = specId(VALID, lengthLE(altairTopic), Buffer.from(altairTopic), exit);
    expect(hex(computeMessageIdFromRaw(config, altairTopic, compressSync(exit)))).toBe(expected);
    expect(hex(createMsgIdFn(config)({type: "unsigned", topic: altairTopic, data: exit}))).toBe(expected);
    expect(expected).not.toBe(specId(VALID, exit));
  });

  it("invalid snappy: the invalid domain over the raw data", () => {
    const raw = Uint8Array.of(0x05, 0xff, 0xff);
    expect(hex(computeMessageIdFromRaw(config, phase0Topic, raw))).toBe(specId(INVALID, raw));
    expect(hex(computeMessageIdFromRaw(config, altairTopic, raw))).toBe(specId(INVALID, lengthLE(altairTopic), Buffer.from(altairTopic), raw));
    // beyond the size limit counts as invalid: it is never decompressed
    const bomb = compressSync(Buffer.alloc(config.MAX_PAYLOAD_SIZE + 1));
    expect(hex(computeMessageIdFromRaw(config, altairTopic, bomb))).toBe(specId(INVALID, lengthLE(altairTopic), Buffer.from(altairTopic), bomb));
  });

  it("fast ids tell apart topics and data, and match for equal messages", () => {
    const a = fastMsgIdFn({topic: altairTopic, data: compressSync(exit)});
    expect(fastMsgIdFn({topic: altairTopic, data: compressSync(exit)})).toBe(a);
    expect(fastMsgIdFn({topic: phase0Topic, data: compressSync(exit)})).not.toBe(a);
    expect(fastMsgIdFn({topic: altairTopic, data: Uint8Array.of(1)})).not.toBe(a);
  });
});
