import type {Level} from "level";
import {Bucket} from "./buckets.ts";
import {bucketKey, bucketRange, keySuffix} from "./keys.ts";
import {DbDamagedError, describeLevelDamage, markDamaged, recordedDamage} from "./damage.ts";
import {getLogger} from "../log.ts";
import {guardedBatch} from "./diskFull.ts";

const log = getLogger("db");

/** The name of a bucket in the bucket table (buckets.ts), for messages. */
export function bucketName(bucket: number): string {
  return Object.entries(Bucket).find(([, n]) => n === bucket)?.[0] ?? `bucket ${bucket}`;
}

/** The node's LevelDB: binary keys and values ("view" encoding). */
export type LevelDb = Level<Uint8Array, Uint8Array>;

/** One write of a batch; `BeaconDb.batch` applies a list of them atomically. */
export type DbOp = {type: "put"; key: Uint8Array; value: Uint8Array} | {type: "del"; key: Uint8Array};

export interface DbEntry {
  /** the key without its bucket byte */
  key: Uint8Array;
  value: Uint8Array;
}

/** Key bounds inside one bucket (bucket byte not included). */
export interface KeyRange {
  gte?: Uint8Array;
  lte?: Uint8Array;
  lt?: Uint8Array;
  reverse?: boolean;
  limit?: number;
}

/** Writes `ops` in one LevelDB batch: all of them are stored, or (after a crash) none. */
export async function writeBatch(db: LevelDb, ops: readonly DbOp[]): Promise<void> {
  if (ops.length === 0) return;
  // a full disk pauses writes (DiskFullError) until space returns: diskFull.ts
  await guardedBatch(db, ops as DbOp[]);
}

/**
 * Byte-level access to one bucket. The typed repositories build on it: they turn their ids and
 * values into bytes and back, and produce `DbOp`s for atomic batches.
 */
export abstract class Repository {
  protected readonly db: LevelDb;
  protected readonly bucket: Bucket;

  constructor(db: LevelDb, bucket: Bucket) {
    this.db = db;
    this.bucket = bucket;
  }

  protected putRawOp(suffix: Uint8Array, value: Uint8Array): DbOp {
    return {type: "put", key: bucketKey(this.bucket, suffix), value};
  }

  protected deleteRawOp(suffix: Uint8Array): DbOp {
    return {type: "del", key: bucketKey(this.bucket, suffix)};
  }

  protected async getRaw(suffix: Uint8Array): Promise<Uint8Array | null> {
    try {
      return (await this.db.get(bucketKey(this.bucket, suffix))) ?? null;
    } catch (err) {
      throw this.damaged(err, `reading ${bucketName(this.bucket)} key 0x${Buffer.from(suffix).toString("hex")}`);
    }
  }

  protected hasRaw(suffix: Uint8Array): Promise<boolean> {
    return this.db.has(bucketKey(this.bucket, suffix));
  }

  protected write(ops: readonly DbOp[]): Promise<void> {
    return writeBatch(this.db, ops);
  }

  /** Entries of this bucket within `range`, in key order (or reversed). */
  protected async entries(range: KeyRange = {}): Promise<DbEntry[]> {
    const out: DbEntry[] = [];
    try {
      for await (const [key, value] of this.db.iterator(this.levelRange(range))) {
        out.push({key: keySuffix(key), value});
      }
    } catch (err) {
      throw this.damaged(err, `reading ${bucketName(this.bucket)}`);
    }
    return out;
  }

  /** Keys (bucket byte removed) of this bucket within `range`. */
  protected async keys(range: KeyRange = {}): Promise<Uint8Array[]> {
    const out: Uint8Array[] = [];
    try {
      for await (const key of this.db.keys(this.levelRange(range))) out.push(keySuffix(key));
    } catch (err) {
      throw this.damaged(err, `reading ${bucketName(this.bucket)}`);
    }
    return out;
  }

  /** The entry with the highest key at or below `lte` (or the highest of the bucket), or null. */
  protected async lastEntry(lte?: Uint8Array): Promise<DbEntry | null> {
    const [entry] = await this.entries({lte, reverse: true, limit: 1});
    return entry ?? null;
  }

  /** A LevelDB read error that reports damage becomes a DbDamagedError naming what was read; others pass unchanged. */
  private damaged(err: unknown, reading: string): unknown {
    const damage = describeLevelDamage(err);
    if (damage === null) return err;
    const found = new DbDamagedError(this.db.location, [`${damage}, ${reading}`]);
    // said once per damaged database, and remembered so that the next start refuses until `db repair`
    if (recordedDamage(this.db.location) === null) {
      markDamaged(this.db.location, found.damage);
      log.error({dir: this.db.location, damage: found.damage[0]}, "the database is damaged; stop the node and run `beacon-gateway db check`, then `db repair`");
    }
    return found;
  }

  private levelRange(range: KeyRange): {gte?: Uint8Array; lte?: Uint8Array; lt?: Uint8Array; reverse: boolean; limit: number} {
    const whole = bucketRange(this.bucket);
    const bounds: {gte?: Uint8Array; lte?: Uint8Array; lt?: Uint8Array} = {};
    bounds.gte = range.gte ? bucketKey(this.bucket, range.gte) : whole.gte;
    if (range.lte) bounds.lte = bucketKey(this.bucket, range.lte);
    else if (range.lt) bounds.lt = bucketKey(this.bucket, range.lt);
    else bounds.lt = whole.lt;
    return {...bounds, reverse: range.reverse ?? false, limit: range.limit ?? -1};
  }
}
