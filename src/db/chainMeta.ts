import {ContainerType} from "@chainsafe/ssz";
import {ssz, type Root, type phase0} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";

/** How a named value turns into bytes and back (SSZ types fit this shape). */
export interface ValueCodec<T> {
  serialize(value: T): Uint8Array;
  deserialize(bytes: Uint8Array): T;
}

const utf8Codec: ValueCodec<string> = {
  serialize: (value) => new TextEncoder().encode(value),
  deserialize: (bytes) => new TextDecoder().decode(bytes),
};

/** One named value of the chain-meta bucket, stored under its name (utf8). */
export class MetaField<T> extends Repository {
  readonly name: string;
  private readonly nameKey: Uint8Array;
  private readonly codec: ValueCodec<T>;

  constructor(db: LevelDb, name: string, codec: ValueCodec<T>) {
    super(db, Bucket.chainMeta);
    this.name = name;
    this.nameKey = new TextEncoder().encode(name);
    this.codec = codec;
  }

  async get(): Promise<T | null> {
    const bytes = await this.getRaw(this.nameKey);
    return bytes ? this.codec.deserialize(bytes) : null;
  }

  put(value: T): Promise<void> {
    return this.write([this.putOp(value)]);
  }

  putOp(value: T): DbOp {
    return this.putRawOp(this.nameKey, this.codec.serialize(value));
  }

  deleteOp(): DbOp {
    return this.deleteRawOp(this.nameKey);
  }
}

/** The lowest block backfill has stored: its slot and root (its parent is the next block to fetch). */
export interface BackfillPoint {
  slot: number;
  root: Root;
}

const BackfillPointType = new ContainerType({slot: ssz.UintNum64, root: ssz.Root}, {typeName: "BackfillPoint"});

/**
 * Small named values of the chain. Each field has typed `get()`, `put(v)`, `putOp(v)` and `deleteOp()`.
 * The stored names are part of the data format: never rename one, add a new name instead.
 */
export class ChainMetaRepository {
  readonly genesisTime: MetaField<number>;
  readonly genesisValidatorsRoot: MetaField<Root>;
  /** the checkpoint the node's history starts from (genesis, or a checkpoint-synced state) */
  readonly anchorCheckpoint: MetaField<phase0.Checkpoint>;
  readonly finalizedCheckpoint: MetaField<phase0.Checkpoint>;
  readonly justifiedCheckpoint: MetaField<phase0.Checkpoint>;
  readonly headRoot: MetaField<Root>;
  /** 32 bytes */
  readonly graffiti: MetaField<Uint8Array>;
  /** network, preset and fork schedule the data dir belongs to (see chainFingerprint.ts) */
  readonly chainFingerprint: MetaField<string>;
  /** the highest data column custody group count the node has advertised (fulu: it never goes down, restarts included) */
  readonly custodyGroupCount: MetaField<number>;
  /** sidecars of finalized blocks before this slot were pruned (their retention window had passed) */
  readonly sidecarsPrunedBefore: MetaField<number>;
  /** how far back backfill has stored the chain before the checkpoint-sync anchor (absent: not started) */
  readonly backfilledTo: MetaField<BackfillPoint>;

  constructor(db: LevelDb) {
    this.genesisTime = new MetaField(db, "genesisTime", ssz.UintNum64);
    this.genesisValidatorsRoot = new MetaField(db, "genesisValidatorsRoot", ssz.Root);
    this.anchorCheckpoint = new MetaField(db, "anchorCheckpoint", ssz.phase0.Checkpoint);
    this.finalizedCheckpoint = new MetaField(db, "finalizedCheckpoint", ssz.phase0.Checkpoint);
    this.justifiedCheckpoint = new MetaField(db, "justifiedCheckpoint", ssz.phase0.Checkpoint);
    this.headRoot = new MetaField(db, "headRoot", ssz.Root);
    this.graffiti = new MetaField(db, "graffiti", ssz.Bytes32);
    this.chainFingerprint = new MetaField(db, "chainFingerprint", utf8Codec);
    this.custodyGroupCount = new MetaField(db, "custodyGroupCount", ssz.UintNum64);
    this.sidecarsPrunedBefore = new MetaField(db, "sidecarsPrunedBefore", ssz.UintNum64);
    this.backfilledTo = new MetaField(db, "backfilledTo", BackfillPointType);
  }
}
