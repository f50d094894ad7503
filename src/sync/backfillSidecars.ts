import type {BeaconConfig} from "@lodestar/config";
import {toRootHex} from "@lodestar/utils";
import {DataAvailability} from "../chain/blobs/dataAvailability.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {DbOp} from "../db/repository.ts";
import {BackfillBatchError, type LinkedBlock} from "./backfillChecks.ts";
import {SidecarSync, type SidecarSyncDeps} from "./sidecarSync.ts";

export interface BackfillSidecarsDeps extends Omit<SidecarSyncDeps, "dataAvailability" | "config"> {
  config: BeaconConfig;
  db: BeaconDb;
  currentSlot(): number;
  /** the data columns the node custodies now (fulu) */
  samplingColumns(): number[];
}

/**
 * The sidecars of backfilled blocks: the blobs (deneb, electra) and the custodied data columns
 * (fulu) of the blocks still in their retention window (MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS,
 * MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS), fetched and checked against the blocks as range
 * sync's are (by range from the peer that served the blocks, then by root from the others). They
 * are gathered apart from the chain's own pending sidecars and stored with their blocks.
 */
export class BackfillSidecars {
  private readonly deps: BackfillSidecarsDeps;
  private readonly availability: DataAvailability;
  private readonly sync: SidecarSync;

  constructor(deps: BackfillSidecarsDeps) {
    this.deps = deps;
    this.availability = new DataAvailability({config: deps.config, db: deps.db, currentSlot: () => deps.currentSlot()});
    this.sync = new SidecarSync({...deps, dataAvailability: this.availability});
  }

  /** The writes storing the sidecars of `blocks` (newest first); throws DATA_UNAVAILABLE when some could not be had. */
  async fetch(peer: string, blocks: LinkedBlock[]): Promise<DbOp[]> {
    this.availability.setSamplingColumns(this.deps.samplingColumns());
    const needing = blocks.filter(({block}) => this.availability.requirement(block).kind !== "none");
    if (needing.length === 0) return [];
    await this.sync.fetchForBlocks(peer, needing.map(({block}) => block).reverse());
    const missing = needing.find(({block, root}) => this.availability.missing(block, toRootHex(root)) !== null);
    if (missing) {
      this.availability.pruneBefore(Number.MAX_SAFE_INTEGER);
      throw new BackfillBatchError("DATA_UNAVAILABLE", `the sidecars of the block at slot ${missing.block.message.slot} are not to be had from the peers`);
    }
    return needing.flatMap(({block, root}) => this.availability.takeStoreOps(block, root));
  }
}
