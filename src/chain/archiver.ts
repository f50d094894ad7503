import type {BeaconConfig} from "@lodestar/config";
import {type CachedBeaconStateAllForks, createCachedBeaconState, processSlots, type PubkeyCache} from "@lodestar/state-transition";
import type {Root, phase0} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {DbOp} from "../db/repository.ts";
import type {CheckpointHex, ProtoBlock} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import {replayBlock} from "./regen.ts";

const log = getLogger("chain");
/** Older archived states are thinned to one every this many slots (the rest can be replayed). */
const ARCHIVE_KEEP_EVERY_SLOTS = 256;

/**
 * Moves finality into storage: the finalized state, the canonical slot index of the newly
 * finalized blocks, the end of abandoned forks, and the new checkpoints, in one batch, so a
 * crash leaves either the old or the new finalized view. Also serves finalized history.
 */
export class Archiver {
  private readonly config: BeaconConfig;
  private readonly db: BeaconDb;
  private readonly pubkeyCache: () => PubkeyCache;

  constructor(config: BeaconConfig, db: BeaconDb, pubkeyCache: () => PubkeyCache) {
    this.config = config;
    this.db = db;
    this.pubkeyCache = pubkeyCache;
  }

  async onFinalized(
    finalized: CheckpointHex,
    finalizedState: CachedBeaconStateAllForks,
    newlyFinalized: {slot: number; root: Root}[],
    pruned: ProtoBlock[],
    abandoned: Root[],
    justified: CheckpointHex
  ): Promise<void> {
    const ops: DbOp[] = [];
    for (const {slot, root} of newlyFinalized) ops.push(this.db.canonicalBlocks.putOp(slot, root));
    ops.push(...this.db.stateArchive.putOp(finalizedState));
    for (const node of pruned) ops.push(this.db.hotBlocks.deleteOp(node.slot, fromHex(node.blockRoot)));
    for (const root of abandoned) ops.push(this.db.blocks.deleteOp(root), this.db.blobSidecars.deleteOp(root), ...(await this.db.dataColumnSidecars.deleteOps(root)));
    ops.push(this.db.chainMeta.finalizedCheckpoint.putOp({epoch: finalized.epoch, root: fromHex(finalized.root)}));
    ops.push(this.db.chainMeta.justifiedCheckpoint.putOp({epoch: justified.epoch, root: fromHex(justified.root)}));
    ops.push(...(await this.db.stateArchive.pruneOps(finalizedState.slot, ARCHIVE_KEEP_EVERY_SLOTS)));
    await this.db.batch(ops);
    log.debug({epoch: finalized.epoch, blocks: newlyFinalized.length, abandoned: abandoned.length}, "archived finalized chain");
  }

  /** The canonical state at a finalized `slot`: nearest archived state, canonical blocks replayed, empty slots processed. */
  async getHistoricalState(slot: number): Promise<CachedBeaconStateAllForks | null> {
    const archived = await this.db.stateArchive.getAtOrBefore(slot);
    if (!archived) return null;
    let state = createCachedBeaconState(archived, {config: this.config, pubkeyCache: this.pubkeyCache()}, {skipSyncPubkeys: true});
    for (const {blockRoot: root} of await this.db.canonicalBlocks.getRange(archived.slot + 1, slot)) {
      const block = await this.db.blocks.get(root);
      if (!block) throw new Error(`canonical block ${Buffer.from(root).toString("hex")} is missing from the database`);
      state = replayBlock(state, block);
    }
    if (state.slot < slot) state = processSlots(state, slot, {dontTransferCache: true});
    return state;
  }

  async getStateByRoot(stateRoot: Root): Promise<CachedBeaconStateAllForks | null> {
    const slot = await this.db.stateArchive.getSlotByRoot(stateRoot);
    return slot === null ? null : this.getHistoricalState(slot);
  }

  /** Checkpoints as last stored, for start-up. */
  async storedCheckpoints(): Promise<{finalized: phase0.Checkpoint | null; justified: phase0.Checkpoint | null}> {
    return {finalized: await this.db.chainMeta.finalizedCheckpoint.get(), justified: await this.db.chainMeta.justifiedCheckpoint.get()};
  }
}
