import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createChainForkConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {SidecarRetention, sidecarRetentionStartEpoch} from "../../../src/chain/blobs/retention.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {makeTempDir, removeDir, testRoot} from "../db/helpers.ts";

// minimal preset: 8 slots an epoch. deneb from epoch 1 (slot 8), fulu from epoch 3 (slot 24);
// short retention windows so that pruning shows within a few epochs
const config = createChainForkConfig({
  ...devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {altair: 0, bellatrix: 0, capella: 0, deneb: 1, electra: 2, fulu: 3}}),
  MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS: 2,
  MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS: 3,
});
const FIRST_SLOT = 8;
const LAST_SLOT = 63;
const FULU_SLOT = 24;

/** deneb p2p-interface.md and fulu p2p-interface.md, written out: the first epoch whose sidecars are kept */
const specKeepEpoch = (currentEpoch: number) => Math.min(Math.max(currentEpoch - 2, 1), Math.max(currentEpoch - 3, 3));

describe("sidecar retention", () => {
  let dir: string;
  let db: BeaconDb;
  beforeAll(async () => {
    dir = await makeTempDir();
    db = await BeaconDb.open(dir, config);
    const ops = [];
    for (let slot = FIRST_SLOT; slot <= LAST_SLOT; slot++) {
      const root = testRoot(slot);
      ops.push(db.canonicalBlocks.putOp(slot, root));
      if (slot < FULU_SLOT) ops.push(db.blobSidecars.putOp(root, [ssz.deneb.BlobSidecar.defaultValue()]));
      else for (const index of [3, 70]) ops.push(db.dataColumnSidecars.putOp({...ssz.fulu.DataColumnSidecar.defaultValue(), index}, root));
    }
    await db.batch(ops);
  });
  afterAll(async () => {
    await db.close();
    await removeDir(dir);
  });

  const kept = async (slot: number) =>
    slot < FULU_SLOT ? (await db.blobSidecars.get(testRoot(slot))) !== null : (await db.dataColumnSidecars.columnsOf(testRoot(slot))).length === 2;

  it("starts where the earlier of the blob and column windows starts, and never before the fork", () => {
    for (const epoch of [0, 3, 5, 7, 20]) expect(sidecarRetentionStartEpoch(config, epoch)).toBe(specKeepEpoch(epoch));
  });

  it("deletes the sidecars of finalized blocks before the window and keeps the rest", async () => {
    const retention = new SidecarRetention(config, db);
    await retention.prune(7, 48);
    const keepFrom = specKeepEpoch(7) * 8; // slot 32
    for (let slot = FIRST_SLOT; slot <= LAST_SLOT; slot++) expect([slot, await kept(slot)]).toEqual([slot, slot >= keepFrom]);
    expect(await db.chainMeta.sidecarsPrunedBefore.get()).toBe(keepFrom);
  });

  it("never prunes past the finalized slot, and goes on from where it stopped after a restart", async () => {
    await new SidecarRetention(config, db).prune(20, 40);
    for (let slot = 32; slot <= LAST_SLOT; slot++) expect([slot, await kept(slot)]).toEqual([slot, slot >= 40]);
    // the blocks themselves are not the retention's to delete
    expect(await db.canonicalBlocks.get(20)).toEqual(testRoot(20));
  });
});
