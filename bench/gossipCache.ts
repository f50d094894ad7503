// The messages of `bench:gossip` as kept on disk (bench/gossipMessages.ts makes them): each one's
// topic, subnet, slot and moment in the slot, its bytes as they go on the wire (SSZ, snappy
// compressed), and the signature sets a node checks for it (signing root, public key
// uncompressed, aggregated for an aggregate set, and signature), for the blst ceiling.
import {closeSync, existsSync, openSync, readdirSync, readFileSync, renameSync, writeSync} from "node:fs";
import {dirname, join} from "node:path";

/** The gossip topics a node with all subnets receives on a bellatrix chain (no blobs), in the report's order. */
export const GOSSIP_KINDS = ["beacon_block", "beacon_aggregate_and_proof", "beacon_attestation", "sync_committee_contribution_and_proof", "sync_committee"] as const;
export type GossipKind = (typeof GOSSIP_KINDS)[number];

export interface SignatureSetBytes {
  /** signing root, 32 bytes */
  msg: Uint8Array;
  /** the public key (aggregated for an aggregate set), uncompressed: 96 bytes */
  pk: Uint8Array;
  /** the signature as sent, compressed: 96 bytes */
  sig: Uint8Array;
}

export interface GossipRecord {
  kind: GossipKind;
  /** the attestation or sync committee subnet; 0 for the global topics */
  subnet: number;
  slot: number;
  /** when in its slot it is published, in ms from the slot's start */
  atMs: number;
  /** SSZ, snappy compressed (block format): what gossipsub carries */
  data: Uint8Array;
  sets: SignatureSetBytes[];
}

const SET_BYTES = 32 + 96 + 96;

export function encodeRecord(r: GossipRecord): Buffer {
  const head = Buffer.alloc(1 + 1 + 4 + 4 + 4);
  head.writeUInt8(GOSSIP_KINDS.indexOf(r.kind), 0);
  head.writeUInt8(r.subnet, 1);
  head.writeUInt32LE(r.slot, 2);
  head.writeUInt32LE(r.atMs, 6);
  head.writeUInt32LE(r.data.length, 10);
  const sets = Buffer.alloc(2 + r.sets.length * SET_BYTES);
  sets.writeUInt16LE(r.sets.length, 0);
  r.sets.forEach((s, i) => {
    const at = 2 + i * SET_BYTES;
    sets.set(s.msg, at);
    sets.set(s.pk, at + 32);
    sets.set(s.sig, at + 128);
  });
  return Buffer.concat([head, r.data, sets]);
}

/** The records of `bytes` (a whole file), those of slots up to `maxSlot`. */
export function decodeRecords(bytes: Buffer, maxSlot: number): GossipRecord[] {
  const records: GossipRecord[] = [];
  let at = 0;
  while (at < bytes.length) {
    const kind = GOSSIP_KINDS[bytes.readUInt8(at)];
    const subnet = bytes.readUInt8(at + 1);
    const slot = bytes.readUInt32LE(at + 2);
    const atMs = bytes.readUInt32LE(at + 6);
    const length = bytes.readUInt32LE(at + 10);
    at += 14;
    const data = bytes.subarray(at, at + length);
    at += length;
    const count = bytes.readUInt16LE(at);
    at += 2;
    const sets: SignatureSetBytes[] = [];
    for (let i = 0; i < count; i++, at += SET_BYTES) {
      sets.push({msg: bytes.subarray(at, at + 32), pk: bytes.subarray(at + 32, at + 128), sig: bytes.subarray(at + 128, at + 224)});
    }
    // records are written slot by slot
    if (slot > maxSlot) break;
    records.push({kind, subnet, slot, atMs, data, sets});
  }
  return records;
}

/** The file of `slots` slots under `prefix` (`<prefix>-<slots>slots.bin`). */
export const cacheFile = (prefix: string, slots: number): string => `${prefix}-${slots}slots.bin`;

/** A kept file with at least `slots` slots (the smallest such), or null. */
export function findCache(prefix: string, slots: number): string | null {
  const dir = dirname(prefix);
  const base = prefix.slice(dir.length + 1);
  if (!existsSync(dir)) return null;
  const found = readdirSync(dir)
    .map((name) => ({name, slots: Number(new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-(\\d+)slots\\.bin$`).exec(name)?.[1] ?? NaN)}))
    .filter((f) => f.slots >= slots)
    .sort((a, b) => a.slots - b.slots);
  return found.length > 0 ? join(dir, found[0].name) : null;
}

export function readCache(file: string, slots: number): GossipRecord[] {
  return decodeRecords(readFileSync(file), slots);
}

/** Writes records as they come; the file appears whole (renamed) only once `close` is called. */
export class CacheWriter {
  private readonly fd: number;
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
    this.fd = openSync(`${file}.partial`, "w");
  }

  write(records: GossipRecord[]): void {
    for (const r of records) writeSync(this.fd, encodeRecord(r));
  }

  close(): void {
    closeSync(this.fd);
    renameSync(`${this.file}.partial`, this.file);
  }
}
