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
   * chain's fingerprint; a data dir of another chain is refused with ChainMismatchError.
   */
  static async open(dir: string, config: ChainForkConfig): Promise<BeaconDb> {
    const level: LevelDb = new Level<Uint8Array, Uint8Array>(dir, {keyEncoding: "view", valueEncoding: "view"});
    await level.open();
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

  async close(): Promise<void> {
    if (this.db.status === "closed") return;
    await this.db.close();
    log.debug({dir: this.dir}, "database closed");
  }
}
