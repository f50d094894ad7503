import type {BeaconConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import type {Message} from "@libp2p/gossipsub";
import type {RPC} from "@libp2p/gossipsub/message";
import type {DataTransform} from "@libp2p/gossipsub/types";
import {createHash} from "node:crypto";
import {compressSync, uncompressSync} from "snappy";
import {gossipSszType, parseTopic} from "./topics.ts";

/**
 * The gossip message encoding of the consensus p2p spec: message data is an SSZ value compressed
 * as one raw snappy block (not framed), within the spec's size limits, and the message id is a
 * SHA256 over a domain, (from altair) the topic, and the decompressed data.
 */

export const MESSAGE_DOMAIN_INVALID_SNAPPY = Uint8Array.from([0x00, 0x00, 0x00, 0x00]);
export const MESSAGE_DOMAIN_VALID_SNAPPY = Uint8Array.from([0x01, 0x00, 0x00, 0x00]);
export const GOSSIP_MSG_ID_LENGTH = 20;
const DEFAULT_MAX_PAYLOAD_SIZE = 10 * 2 ** 20;

export class GossipEncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GossipEncodingError";
  }
}

/** MAX_PAYLOAD_SIZE of the config (GOSSIP_MAX_SIZE in configs from before it was renamed). */
export function maxPayloadSize(config: Pick<BeaconConfig, "MAX_PAYLOAD_SIZE">): number {
  const legacy = (config as {GOSSIP_MAX_SIZE?: number}).GOSSIP_MAX_SIZE;
  return config.MAX_PAYLOAD_SIZE ?? legacy ?? DEFAULT_MAX_PAYLOAD_SIZE;
}

/** max_compressed_len: snappy's worst case for `n` input bytes (uint64 division). */
export function maxCompressedLen(n: number): number {
  return 32 + n + Math.floor(n / 6);
}

/** max_message_size: the limit on a whole gossipsub RPC frame. */
export function maxMessageSize(config: Pick<BeaconConfig, "MAX_PAYLOAD_SIZE">): number {
  return Math.max(maxCompressedLen(maxPayloadSize(config)) + 1024, 1024 * 1024);
}

/**
 * The uncompressed length a raw snappy block declares in its preamble (a little-endian base-128
 * varint of at most 32 bits), or null when the preamble is malformed.
 */
export function snappyDeclaredLength(data: Uint8Array): number | null {
  let value = 0;
  for (let i = 0; i < 5 && i < data.length; i++) {
    const byte = data[i];
    if (i === 4 && byte > 0x0f) return null;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return value;
  }
  return null;
}

export interface PayloadLimits {
  /** the most bytes the message data may have on the wire */
  maxCompressed: number;
  /** the most bytes the decompressed payload may have: MAX_PAYLOAD_SIZE or the type's SSZ bound */
  maxUncompressed: number;
  /** the fewest bytes a value of the topic's type has */
  minUncompressed: number;
}

export function genericPayloadLimits(config: Pick<BeaconConfig, "MAX_PAYLOAD_SIZE">): PayloadLimits {
  const max = maxPayloadSize(config);
  return {maxCompressed: maxCompressedLen(max), maxUncompressed: max, minUncompressed: 0};
}

/** The limits of a topic's messages (its fork's SSZ type bounds), or null for an unknown topic. */
export function topicPayloadLimits(config: BeaconConfig, topicStr: string): PayloadLimits | null {
  const topic = parseTopic(config, topicStr);
  if (!topic) return null;
  const type = gossipSszType(topic.type, topic.boundary.fork);
  const generic = genericPayloadLimits(config);
  return {...generic, maxUncompressed: Math.min(generic.maxUncompressed, type.maxSize), minUncompressed: type.minSize};
}

/**
 * Decompresses message data, checking the compressed size and the length the snappy preamble
 * declares before anything is decompressed. Throws GossipEncodingError.
 */
export function decompressGossipData(data: Uint8Array, limits: PayloadLimits): Uint8Array {
  if (data.length > limits.maxCompressed) {
    throw new GossipEncodingError(`compressed size ${data.length} exceeds max_compressed_len ${limits.maxCompressed}`);
  }
  const declared = snappyDeclaredLength(data);
  if (declared === null) throw new GossipEncodingError("malformed snappy length preamble");
  if (declared > limits.maxUncompressed) {
    throw new GossipEncodingError(`declared uncompressed size ${declared} exceeds the limit ${limits.maxUncompressed}`);
  }
  if (declared < limits.minUncompressed) {
    throw new GossipEncodingError(`declared uncompressed size ${declared} is below the type's minimum ${limits.minUncompressed}`);
  }
  let out: Uint8Array;
  try {
    out = uncompressSync(data, {asBuffer: true}) as Buffer;
  } catch (e) {
    throw new GossipEncodingError(`invalid snappy block: ${(e as Error).message}`);
  }
  if (out.length !== declared) throw new GossipEncodingError(`snappy block decompressed to ${out.length} bytes, declared ${declared}`);
  return out;
}

/** Compresses an SSZ payload for publishing; refuses what peers would have to reject. */
export function compressGossipData(payload: Uint8Array, limits: PayloadLimits): Uint8Array {
  if (payload.length > limits.maxUncompressed) {
    throw new GossipEncodingError(`payload size ${payload.length} exceeds the limit ${limits.maxUncompressed}`);
  }
  const out = compressSync(payload);
  if (out.length > limits.maxCompressed) throw new GossipEncodingError(`compressed size ${out.length} exceeds ${limits.maxCompressed}`);
  return out;
}

/** gossipsub's dataTransform: snappy in both directions, with each topic's limits; unknown topics are refused. */
export function createGossipDataTransform(config: BeaconConfig): DataTransform {
  const limitsOf = (topic: string) => {
    const limits = topicPayloadLimits(config, topic);
    if (!limits) throw new GossipEncodingError(`unknown topic ${topic}`);
    return limits;
  };
  return {
    inboundTransform: (topic, data) => decompressGossipData(data, limitsOf(topic)),
    outboundTransform: (topic, data) => compressGossipData(data, limitsOf(topic)),
  };
}

function sha256Prefix(parts: Uint8Array[]): Uint8Array {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest().subarray(0, GOSSIP_MSG_ID_LENGTH));
}

/**
 * The message id from the payload: `payload` is the decompressed data when `validSnappy`, the raw
 * message data otherwise. Phase0 topics hash domain + payload; from altair the topic's byte length
 * (uint64 little-endian) and bytes come between.
 */
export function messageId(fork: ForkName, topic: string, payload: Uint8Array, validSnappy: boolean): Uint8Array {
  const domain = validSnappy ? MESSAGE_DOMAIN_VALID_SNAPPY : MESSAGE_DOMAIN_INVALID_SNAPPY;
  if (fork === ForkName.phase0) return sha256Prefix([domain, payload]);
  const topicBytes = Buffer.from(topic, "utf8");
  const topicLength = Buffer.alloc(8);
  topicLength.writeBigUInt64LE(BigInt(topicBytes.length));
  return sha256Prefix([domain, topicLength, topicBytes, payload]);
}

const DIGEST_RE = /^\/eth2\/([0-9a-f]{8})\//;

/** The fork whose message-id rule applies to a topic: that of its digest; the altair rule for unknown digests. */
export function messageIdForkOf(config: BeaconConfig, topic: string): ForkName {
  const digest = DIGEST_RE.exec(topic)?.[1];
  const boundary = digest ? config.forkDigest2ForkBoundaryOption(digest) : null;
  return boundary ? boundary.fork : ForkName.altair;
}

/**
 * The spec's message id from the raw message data: over the decompressed data when it is a valid
 * snappy block within the topic's limits, over the raw data (invalid-snappy domain) otherwise.
 * A block over the size limits is not decompressed and counts as invalid.
 */
export function computeMessageIdFromRaw(config: BeaconConfig, topic: string, rawData: Uint8Array): Uint8Array {
  const fork = messageIdForkOf(config, topic);
  try {
    const payload = decompressGossipData(rawData, topicPayloadLimits(config, topic) ?? genericPayloadLimits(config));
    return messageId(fork, topic, payload, true);
  } catch {
    return messageId(fork, topic, rawData, false);
  }
}

/**
 * gossipsub's msgIdFn when the dataTransform above is installed: gossipsub hands it the message
 * with its data already decompressed (a message that fails to decompress is rejected before any
 * id is computed), so the valid-snappy rule applies.
 */
export function createMsgIdFn(config: BeaconConfig): (msg: Message) => Uint8Array {
  return (msg) => messageId(messageIdForkOf(config, msg.topic), msg.topic, msg.data, true);
}

/** gossipsub's fastMsgIdFn: a cheap local id of the raw message (topic and data) for its duplicate cache. */
export function fastMsgIdFn(msg: RPC.Message): string {
  const hash = createHash("sha1").update(msg.topic).update(Uint8Array.of(0));
  if (msg.data) hash.update(msg.data);
  return hash.digest("base64");
}
