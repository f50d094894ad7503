import type {Bucket} from "./buckets.ts";

/** `bucket || suffix`: the full LevelDB key of `suffix` in `bucket`. */
export function bucketKey(bucket: Bucket, suffix: Uint8Array): Uint8Array {
  const key = new Uint8Array(1 + suffix.length);
  key[0] = bucket;
  key.set(suffix, 1);
  return key;
}

/** The part of a full key after its bucket byte. */
export function keySuffix(key: Uint8Array): Uint8Array {
  return key.subarray(1);
}

/** The key range holding all of `bucket` (for iterators): `gte` the bucket byte, `lt` the next one. */
export function bucketRange(bucket: Bucket): {gte: Uint8Array; lt: Uint8Array} {
  return {gte: Uint8Array.of(bucket), lt: Uint8Array.of(bucket + 1)};
}

/** A slot or other uint64 as 8 big-endian bytes, so that key order is numeric order. */
export function encodeUint64BE(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a uint64 key: ${value}`);
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return bytes;
}

export function decodeUint64BE(bytes: Uint8Array): number {
  if (bytes.length !== 8) throw new Error(`uint64 key must be 8 bytes, got ${bytes.length}`);
  return Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0));
}

/** A little-endian uint64 inside SSZ bytes (slots in serialized blocks and states). */
export function readUint64LE(bytes: Uint8Array, offset: number): number {
  if (bytes.length < offset + 8) throw new Error(`SSZ bytes too short (${bytes.length}) to read a uint64 at ${offset}`);
  return Number(new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0, true));
}
