import type {ChainForkConfig} from "@lodestar/config";
import {computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {BeaconDb} from "../../db/beaconDb.ts";
import type {DbOp} from "../../db/repository.ts";
import {getLogger} from "../../log.ts";

const log = getLogger("chain");

/** Finalized slots whose sidecars are deleted in one batch (a first prune of an old database is a long backlog). */
const SLOTS_PER_PRUNE_BATCH = 256;

/**
 * The first epoch whose sidecars the node must keep and serve: deneb's
 * `max(current_epoch - MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS, DENEB_FORK_EPOCH)` for blobs and
 * fulu's counterpart for data columns; the earlier of the two, so neither rule loses data.
 */
export function sidecarRetentionStartEpoch(config: ChainForkConfig, currentEpoch: number): number {
  const blobs = Math.max(currentEpoch - config.MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS, config.DENEB_FORK_EPOCH);
  const columns = Math.max(currentEpoch - config.MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS, config.FULU_FORK_EPOCH);
  return Math.min(blobs, columns);
}

/**
 * Deletes the blob and data column sidecars of finalized blocks once their retention window has
 * passed, as deneb's and fulu's p2p specs let a node do. The slot it has pruned up to is written
 * in the same batch as each slice of deletes, so a crash leaves a database that opens and at
 * worst sidecars still to prune; each finalization takes up where the last stopped.
 */
export class SidecarRetention {
  private readonly config: ChainForkConfig;
  private readonly db: BeaconDb;
  private running: Promise<void> | null = null;

  constructor(config: ChainForkConfig, db: BeaconDb) {
    this.config = config;
    this.db = db;
  }

  /** Prunes up to the retention window of `currentEpoch`, never past `finalizedSlot`; one run at a time. */
  prune(currentEpoch: number, finalizedSlot: number): Promise<void> {
    this.running ??= this.pruneNow(currentEpoch, finalizedSlot)
      .catch((e: Error) => log.warn({err: e.message}, "sidecar pruning failed; it is retried at the next finalization"))
      .finally(() => (this.running = null));
    return this.running;
  }

  /** Resolves once no prune is under way (before the database closes). */
  whenIdle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async pruneNow(currentEpoch: number, finalizedSlot: number): Promise<void> {
    const keepFrom = Math.min(computeStartSlotAtEpoch(sidecarRetentionStartEpoch(this.config, currentEpoch)), finalizedSlot);
    const denebStart = Number.isFinite(this.config.DENEB_FORK_EPOCH) ? computeStartSlotAtEpoch(this.config.DENEB_FORK_EPOCH) : Infinity;
    let from = Math.max((await this.db.chainMeta.sidecarsPrunedBefore.get()) ?? 0, denebStart);
    let blocks = 0;
    while (from < keepFrom) {
      const to = Math.min(from + SLOTS_PER_PRUNE_BATCH, keepFrom);
      const ops: DbOp[] = [];
      for (const {blockRoot} of await this.db.canonicalBlocks.getRange(from, to - 1)) {
        ops.push(this.db.blobSidecars.deleteOp(blockRoot), ...(await this.db.dataColumnSidecars.deleteOps(blockRoot)));
        blocks++;
      }
      ops.push(this.db.chainMeta.sidecarsPrunedBefore.putOp(to));
      await this.db.batch(ops);
      from = to;
      // the chain's own work goes first between slices
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (blocks > 0) log.debug({blocks, keepFromSlot: keepFrom}, "pruned sidecars past their retention window");
  }
}
