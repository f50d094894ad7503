import {afterAll, beforeAll, describe, expect, it, jest} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {ssz, type fulu, type SignedBeaconBlock} from "@lodestar/types";
import {buildBlobSidecars, buildDataColumnSidecars} from "../../../src/chain/blobs/sidecars.ts";
import {loadKzg} from "../../../src/kzg/kzg.ts";
import type {LinkedBlock} from "../../../src/sync/backfillChecks.ts";
import {BackfillSidecars} from "../../../src/sync/backfillSidecars.ts";
import {Backfill} from "../../../src/sync/backfill.ts";
import {verifyOnThisThread} from "../../../src/bls/verifier.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {ChainForkConfig} from "@lodestar/config";
import {type ChainEnv, createChainEnv} from "../network/gossip/validation/chainEnv.ts";

/**
 * The sidecars of backfilled blocks: the columns the node custodies, checked against the block
 * (a peer whose columns fail is reported and the others asked), stored with the block; none
 * for blocks past the retention window; a batch whose columns no peer has is refused.
 */

// KZG work (cells, proofs, batch verification) is slow on a loaded 2-core machine
jest.setTimeout(30_000);

const CUSTODY = [3, 64, 100];

describe("backfill sidecars: data columns (fulu)", () => {
  let env: ChainEnv;
  let block: SignedBeaconBlock;
  let linked: LinkedBlock;
  let columns: fulu.DataColumnSidecar[];
  beforeAll(async () => {
    loadKzg();
    env = await createChainEnv("fulu", {}, {blobsPerBlock: 1});
    env.setTime(2, 100);
    const contents = await env.produceBlockContents(2);
    block = contents.block;
    linked = {block, root: env.config.getForkTypes(2).BeaconBlock.hashTreeRoot(block.message)};
    columns = buildDataColumnSidecars(env.config, block, contents.blobsBundle.blobs, contents.blobsBundle.proofs);
  }, 60_000);
  afterAll(() => env?.close());

  function sidecarsWith(answers: {byRange: (peer: string) => fulu.DataColumnSidecar[]; byRoot: (peer: string) => fulu.DataColumnSidecar[]}, currentSlot = 10) {
    const reports: string[] = [];
    const asked: string[] = [];
    const none = async () => [];
    const sidecars = new BackfillSidecars({
      config: env.config,
      db: env.chain.db,
      currentSlot: () => currentSlot,
      samplingColumns: () => CUSTODY,
      peers: () => ["bad", "good"],
      report: (peer, _action, reason) => void reports.push(`${peer}: ${reason}`),
      blobSidecarsByRange: none,
      blobSidecarsByRoot: none,
      dataColumnSidecarsByRange: async (peer, req) => {
        asked.push(`${peer} range ${req.startSlot}+${req.count} [${req.columns.join(",")}]`);
        return answers.byRange(peer);
      },
      dataColumnSidecarsByRoot: async (peer, ids) => {
        asked.push(`${peer} root [${ids[0].columns.join(",")}]`);
        return answers.byRoot(peer);
      },
    });
    return {sidecars, reports, asked};
  }
  const custodied = () => columns.filter((c) => CUSTODY.includes(c.index));

  it("takes the custodied columns from a peer whose columns pass, after reporting one whose columns fail", async () => {
    const forged = custodied().map((c) => ssz.fulu.DataColumnSidecar.clone(c));
    forged[0].column = custodied()[1].column;
    const {sidecars, reports, asked} = sidecarsWith({byRange: (peer) => (peer === "bad" ? forged : []), byRoot: (peer) => (peer === "good" ? custodied() : forged)});
    const ops = await sidecars.fetch("bad", [linked]);
    expect(asked).toEqual(["bad range 2+1 [3,64,100]", "bad root [3,64,100]", "good root [3,64,100]"]);
    expect(reports).toEqual(["bad: data column sidecars with invalid KZG proofs", "bad: data column sidecars with invalid KZG proofs"]);
    await env.chain.db.batch(ops);
    expect(await env.chain.db.dataColumnSidecars.columnsOf(linked.root)).toEqual(CUSTODY);
    const stored = await env.chain.db.dataColumnSidecars.get(linked.root, 64);
    expect(ssz.fulu.DataColumnSidecar.equals(stored!, columns[64])).toBe(true);
  });

  it("refuses the batch when no peer has them", async () => {
    const {sidecars} = sidecarsWith({byRange: () => [], byRoot: () => []});
    await expect(sidecars.fetch("good", [linked])).rejects.toMatchObject({code: "DATA_UNAVAILABLE"});
  });

  it("asks nothing for a block past the retention window", async () => {
    const beyond = (env.config.MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS + 2) * SLOTS_PER_EPOCH;
    const {sidecars, asked} = sidecarsWith({byRange: () => [], byRoot: () => []}, beyond);
    expect(await sidecars.fetch("good", [linked])).toEqual([]);
    expect(asked).toEqual([]);
  });
});

describe("backfill sidecars: blob sidecars (electra)", () => {
  let env: ChainEnv;
  afterAll(() => env?.close());

  it("takes the block's blob sidecars by range from the peer that served the block, and stores them with it", async () => {
    loadKzg();
    env = await createChainEnv("electra", {}, {blobsPerBlock: 2});
    env.setTime(2, 100);
    const {block, blobsBundle} = await env.produceBlockContents(2);
    const root = env.config.getForkTypes(2).BeaconBlock.hashTreeRoot(block.message);
    const blobs = buildBlobSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
    const asked: string[] = [];
    const none = async () => [];
    const sidecars = new BackfillSidecars({
      config: env.config,
      db: env.chain.db,
      currentSlot: () => 10,
      samplingColumns: () => CUSTODY,
      peers: () => ["peer"],
      report: (peer, _action, reason) => {
        throw new Error(`${peer} reported: ${reason}`);
      },
      blobSidecarsByRange: async (peer, req) => {
        asked.push(`${peer} range ${req.startSlot}+${req.count}`);
        return blobs;
      },
      blobSidecarsByRoot: none,
      dataColumnSidecarsByRange: none,
      dataColumnSidecarsByRoot: none,
    });
    await env.chain.db.batch(await sidecars.fetch("peer", [{block, root}]));
    expect(asked).toEqual(["peer range 2+1"]);
    expect(ssz.deneb.BlobSidecars.equals((await env.chain.db.blobSidecars.get(root))!, blobs)).toBe(true);
  });
});

describe("backfill with sidecars (fulu)", () => {
  let env: ChainEnv;
  const dir = mkdtempSync(join(tmpdir(), "bg-backfill-sidecars-"));
  afterAll(async () => {
    await env?.close();
    rmSync(dir, {recursive: true, force: true});
  });

  it("stores the custodied columns of each backfilled block with the block", async () => {
    loadKzg();
    env = await createChainEnv("fulu", {}, {blobsPerBlock: 1});
    const ANCHOR = 4;
    const blocks: SignedBeaconBlock[] = [];
    const columnsBySlot = new Map<number, fulu.DataColumnSidecar[]>();
    for (let slot = 1; slot <= ANCHOR; slot++) {
      env.setTime(slot, 100);
      const {block, blobsBundle} = await env.produceBlockContents(slot);
      const columns = buildDataColumnSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
      env.chain.dataAvailability.addColumnSidecars(columns);
      await env.chain.importBlock(block);
      blocks.push(block);
      columnsBySlot.set(slot, columns);
    }
    const rootOf = (block: SignedBeaconBlock) => env.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
    const anchor = blocks[ANCHOR - 1];
    const db = await BeaconDb.open(join(dir, "beacon"), env.config as ChainForkConfig);
    await db.batch([db.blocks.putOp(rootOf(anchor), anchor), db.canonicalBlocks.putOp(ANCHOR, rootOf(anchor)), db.chainMeta.anchorCheckpoint.putOp({epoch: 0, root: rootOf(anchor)})]);
    const none = async () => [];
    const sidecars = new BackfillSidecars({
      config: env.config,
      db,
      currentSlot: () => ANCHOR + 1,
      samplingColumns: () => CUSTODY,
      peers: () => ["peer"],
      report: (peer, _action, reason) => {
        throw new Error(`${peer} reported: ${reason}`);
      },
      blobSidecarsByRange: none,
      blobSidecarsByRoot: none,
      dataColumnSidecarsByRange: async (_peer, req) =>
        [...columnsBySlot.entries()].filter(([slot]) => slot >= req.startSlot && slot < req.startSlot + req.count).flatMap(([, columns]) => columns.filter((c) => req.columns.includes(c.index))),
      dataColumnSidecarsByRoot: none,
    });
    const backfill = new Backfill({
      config: env.config,
      db,
      verifier: verifyOnThisThread,
      validators: () => ({pubkeyCache: env.chain.getHeadState().epochCtx.pubkeyCache, count: 64}),
      currentSlot: () => ANCHOR + 1,
      toGenesis: true,
      syncPeers: () => [{peerId: "peer", status: {forkDigest: new Uint8Array(4), finalizedRoot: new Uint8Array(32), finalizedEpoch: 0, headRoot: new Uint8Array(32), headSlot: ANCHOR}}],
      report: (peer, _action, reason) => {
        throw new Error(`${peer} reported: ${reason}`);
      },
      fetchBlocksByRange: async (_peer, start, count) => {
        const genesis = (await env.chain.getCanonicalBlockAtSlot(0))!;
        return [genesis, ...blocks].filter((b) => b.message.slot >= start && b.message.slot < start + count);
      },
      fetchSidecars: (peer, linked) => sidecars.fetch(peer, linked),
      busy: () => false,
    });
    await backfill.load();
    backfill.start();
    await backfill.finished();
    expect(backfill.earliestAvailableSlot()).toBe(0);
    for (const block of blocks.slice(0, ANCHOR - 1)) {
      const root = rootOf(block);
      expect(await db.dataColumnSidecars.columnsOf(root)).toEqual(CUSTODY);
      const stored = await db.dataColumnSidecars.get(root, 100);
      expect(ssz.fulu.DataColumnSidecar.equals(stored!, columnsBySlot.get(block.message.slot)![100])).toBe(true);
    }
    await db.close();
  }, 60_000);
});
