import type {ChainForkConfig} from "@lodestar/config";
import {Level} from "level";
import {getLogger} from "../log.ts";
import {BlockRepository} from "./blocks.ts";
import {CanonicalBlockIndex} from "./canonicalBlocks.ts";
import {checkChainFingerprint} from "./chainFingerprint.ts";
import {ChainMetaRepository} from "./chainMeta.ts";
import {type DbOp, type LevelDb, writeBatch} from "./repository.ts";
import {StateArchiveRepository} from "./stateArchive.ts";
import {HotBlockIndex} from "./hotBlocks.ts";
import {DiskFullError, forgetPause, isWritePaused} from "./diskFull.ts";
import {DbDamagedError, describeOpenDamage, droppedLogRecords, markDamaged, recordedDamage} from "./damage.ts";
import {BlobSidecarRepository, DataColumnSidecarRepository} from "./sidecars.ts";
import {LightClientBootstrapRepository, LightClientUpdateRepository} from "./lightClient.ts";

const log = getLogger("db");

/**
 * The node's storage: one LevelDB (key = bucket byte + id, binary values) with one repository
 * per stored type. Writes that must land together go through `batch`.
 */
export class BeaconDb {
  readonly dir: string;
  readonly blocks: BlockRepository;
  readonly canonicalBlocks: CanonicalBlockIndex;
  readonly stateArchive: StateArchiveRepository;
  readonly chainMeta: ChainMetaRepository;
  readonly hotBlocks: HotBlockIndex;
  readonly blobSidecars: BlobSidecarRepository;
  readonly dataColumnSidecars: DataColumnSidecarRepository;
  readonly lightClientUpdates: LightClientUpdateRepository;
  readonly lightClientBootstraps: LightClientBootstrapRepository;
  private readonly db: LevelDb;

  private constructor(db: LevelDb, dir: string, config: ChainForkConfig) {
    this.db = db;
    this.dir = dir;
    this.blocks = new BlockRepository(db, config);
    this.canonicalBlocks = new CanonicalBlockIndex(db);
    this.stateArchive = new StateArchiveRepository(db, config);
    this.chainMeta = new ChainMetaRepository(db);
    this.hotBlocks = new HotBlockIndex(db);
    this.blobSidecars = new BlobSidecarRepository(db);
    this.dataColumnSidecars = new DataColumnSidecarRepository(db);
    this.lightClientUpdates = new LightClientUpdateRepository(db);
    this.lightClientBootstraps = new LightClientBootstrapRepository(db);
  }

  /**
   * Opens (creating if missing) the database in `dir`. A fresh data dir is stamped with the
   * chain's fingerprint; a data dir of another chain is refused with ChainMismatchError. A damaged
   * database (a table, manifest or log LevelDB cannot read or had to skip) is refused with
   * DbDamagedError naming the file, until `db repair` has run.
   */
  static async open(dir: string, config: ChainForkConfig): Promise<BeaconDb> {
    const level = await openLevel(dir);
    const db = new BeaconDb(level, dir, config);
    try {
      const fingerprint = await checkChainFingerprint(db.chainMeta, config);
      log.info({dir, fingerprint}, "database opened");
    } catch (err) {
      await level.close();
      throw err;
    }
    return db;
  }

  /**
   * Writes all `ops` in one LevelDB batch: after a crash either all of them are stored or none.
   * Accepts single ops and the op lists some repositories produce, e.g.
   * `db.batch([db.blocks.putOp(root, block), db.canonicalBlocks.putOp(slot, root), ...db.stateArchive.putOp(state)])`.
   */
  batch(ops: ReadonlyArray<DbOp | readonly DbOp[]>): Promise<void> {
    return writeBatch(this.db, ops.flat() as DbOp[]);
  }

  /** Why nothing can be written now (the disk is full: diskFull.ts), or null. */
  writesPausedError(): DiskFullError | null {
    return isWritePaused(this.db) ? new DiskFullError(this.db.location) : null;
  }

  /** The raw store, for `db check` and `db repair` only (check.ts, repair.ts). */
  get level(): LevelDb {
    return this.db;
  }

  async close(): Promise<void> {
    forgetPause(this.db);
    if (this.db.status === "closed") return;
    await this.db.close();
    log.debug({dir: this.dir}, "database closed");
  }
}

/**
 * Opens the LevelDB in `dir`, refusing it with DbDamagedError when it is damaged: recorded so
 * by an earlier open, unreadable now, or opened only by dropping part of its write-ahead log.
 */
export async function openLevel(dir: string, opts: {createIfMissing?: boolean} = {}): Promise<LevelDb> {
  const recorded = recordedDamage(dir);
  if (recorded) throw new DbDamagedError(dir, recorded);
  const level: LevelDb = new Level<Uint8Array, Uint8Array>(dir, {keyEncoding: "view", valueEncoding: "view", createIfMissing: opts.createIfMissing ?? true});
  try {
    await level.open();
  } catch (err) {
    const damage = describeOpenDamage(err, dir);
    if (damage === null) throw err;
    markDamaged(dir, [damage]);
    throw new DbDamagedError(dir, [damage]);
  }
  const dropped = droppedLogRecords(dir);
  if (dropped.length > 0) {
    await level.close();
    markDamaged(dir, dropped);
    throw new DbDamagedError(dir, dropped);
  }
  return level;
}
