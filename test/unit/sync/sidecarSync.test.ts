import {afterAll, beforeAll, describe, expect, it, jest} from "@jest/globals";
import {ssz, type deneb, type fulu, type SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {buildBlobSidecars, buildDataColumnSidecars} from "../../../src/chain/blobs/sidecars.ts";
import {SidecarSync, type SidecarSyncDeps} from "../../../src/sync/sidecarSync.ts";
import {loadKzg} from "../../../src/kzg/kzg.ts";
import {type ChainEnv, createChainEnv} from "../network/gossip/validation/chainEnv.ts";

/** Sidecars fetched from peers are checked against their block before data availability takes them. */

function syncWith(env: ChainEnv, answers: Partial<SidecarSyncDeps>, reports: string[]): SidecarSync {
  const none = async () => [];
  return new SidecarSync({
    config: env.config,
    dataAvailability: env.chain.dataAvailability,
    peers: () => ["bad", "good"],
    report: (peer, _action, reason) => reports.push(`${peer}: ${reason}`),
    blobSidecarsByRange: none,
    blobSidecarsByRoot: none,
    dataColumnSidecarsByRange: none,
    dataColumnSidecarsByRoot: none,
    ...answers,
  });
}

// KZG work (cells, proofs, batch verification) is slow on a loaded 2-core machine
jest.setTimeout(30_000);

describe("sidecar sync: blob sidecars (electra)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    loadKzg(); // the trusted setup: a second or two, once per test file
    env = await createChainEnv("electra", {}, {blobsPerBlock: 2, dataAvailabilityWaitMs: 10});
    env.setTime(2, 100);
  }, 60_000);
  afterAll(() => env.close());

  it("reports a peer whose sidecars fail their checks, and takes the blobs from one whose pass", async () => {
    const {block, blobsBundle} = await env.produceBlockContents(2);
    const sidecars = buildBlobSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
    const forged = sidecars.map((s) => ssz.deneb.BlobSidecar.clone(s));
    forged[1].blob = sidecars[0].blob;
    const reports: string[] = [];
    const askedByRoot: string[] = [];
    const sync = syncWith(env, {
      blobSidecarsByRange: async (peer) => (peer === "bad" ? forged : []),
      blobSidecarsByRoot: async (peer, ids) => {
        askedByRoot.push(`${peer}:${ids.map((id) => id.index).join(",")}`);
        return peer === "good" ? sidecars.filter((s) => ids.some((id) => id.index === s.index)) : forged;
      },
    }, reports);
    await sync.fetchForBlocks("bad", [block]);
    expect(reports).toEqual(["bad: blob sidecars with invalid KZG proofs", "bad: blob sidecars with invalid KZG proofs"]);
    expect(askedByRoot).toEqual(["bad:0,1", "good:0,1"]);
    const imported = await env.chain.importBlock(block);
    expect(ssz.deneb.BlobSidecars.equals((await env.chain.getBlobSidecars(imported.blockRoot))!, sidecars)).toBe(true);
  });

  it("refuses sidecars of another block, or with another signature, without asking KZG", async () => {
    env.setTime(3, 100);
    const {block, blobsBundle} = await env.produceBlockContents(3);
    const sidecars = buildBlobSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
    const resigned = sidecars.map((s) => ssz.deneb.BlobSidecar.clone(s));
    resigned[0].signedBlockHeader.signature = new Uint8Array(96);
    const reports: string[] = [];
    const sync = syncWith(env, {blobSidecarsByRoot: async (peer) => (peer === "bad" ? resigned : [])}, reports);
    const root = env.config.getForkTypes(3).BeaconBlock.hashTreeRoot(block.message);
    await sync.fetchMissing(block, root, {kind: "blobs", indices: [0, 1]});
    expect(reports).toEqual([expect.stringMatching(/^bad: blob sidecar 0 of slot 3 does not belong to the block it names/)]);
    expect(env.chain.dataAvailability.missing(block, toRootHex(root))).toEqual({kind: "blobs", indices: [0, 1]});
  });

  it("a range that also holds a block whose blobs we have: the peer's answer for it is not held against it, and the others' blobs are taken", async () => {
    const made: Array<{block: SignedBeaconBlock; sidecars: deneb.BlobSidecar[]}> = [];
    for (const slot of [4, 5, 6]) {
      env.setTime(slot, 100);
      const {block, blobsBundle} = await env.produceBlockContents(slot);
      const sidecars = buildBlobSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
      env.chain.dataAvailability.addBlobSidecars(sidecars);
      await env.chain.importBlock(block);
      made.push({block, sidecars});
    }
    const rootOf = (block: SignedBeaconBlock) => toRootHex(env.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message));
    // imported, their blobs are no longer pending: as for blocks a batch brings, but the middle one's came by gossip
    env.chain.dataAvailability.addBlobSidecars(made[1].sidecars);
    expect(made.map(({block}) => env.chain.dataAvailability.missing(block, rootOf(block)) === null)).toEqual([false, true, false]);
    const reports: string[] = [];
    const sync = syncWith(env, {blobSidecarsByRange: async (_peer, req) => made.filter(({block}) => block.message.slot >= req.startSlot && block.message.slot < req.startSlot + req.count).flatMap((m) => m.sidecars)}, reports);
    await sync.fetchForBlocks("good", made.map(({block}) => block));
    expect(reports).toEqual([]);
    expect(made.map(({block}) => env.chain.dataAvailability.missing(block, rootOf(block)))).toEqual([null, null, null]);
  });
});

describe("sidecar sync: data columns (fulu)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    env = await createChainEnv("fulu", {}, {blobsPerBlock: 1, dataAvailabilityWaitMs: 10});
    env.setTime(2, 100);
  }, 60_000);
  afterAll(() => env.close());

  it("asks for the sampled columns by range, then by root for the rest, from the other peers", async () => {
    env.chain.dataAvailability.setSamplingColumns([3, 64, 100]);
    const {block, blobsBundle} = await env.produceBlockContents(2);
    const columns = buildDataColumnSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs);
    const asked: string[] = [];
    const reports: string[] = [];
    const sync = syncWith(env, {
      dataColumnSidecarsByRange: async (peer, req) => {
        asked.push(`range ${peer}: ${req.columns.join(",")}`);
        return [columns[3]];
      },
      dataColumnSidecarsByRoot: async (peer, ids) => {
        asked.push(`root ${peer}: ${ids[0].columns.join(",")}`);
        return peer === "good" ? ids[0].columns.map((c) => columns[c]) : ([] as fulu.DataColumnSidecar[]);
      },
    }, reports);
    await sync.fetchForBlocks("bad", [block]);
    expect(asked).toEqual(["range bad: 3,64,100", "root bad: 64,100", "root good: 64,100"]);
    expect(reports).toEqual([]);
    const imported = await env.chain.importBlock(block);
    expect((await env.chain.getDataColumnSidecars(imported.blockRoot)).map((c) => c.index)).toEqual([3, 64, 100]);
  });

  it("a lookup's blocks by root: every block's missing columns in one request per peer, the serving peer first, until none is missing", async () => {
    env.chain.dataAvailability.setSamplingColumns([5, 70]);
    // two blocks on the head, at slots 3 and 4, neither imported: as a lookup fetches a branch's blocks
    env.setTime(4, 100);
    const made = await Promise.all([3, 4].map((slot) => env.produceBlockContents(slot)));
    const columnsOf = made.map(({block, blobsBundle}) => buildDataColumnSidecars(env.config, block, blobsBundle.blobs, blobsBundle.proofs));
    const roots = made.map(({block}) => toRootHex(env.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message)));
    const asked: string[] = [];
    const sync = syncWith(env, {
      dataColumnSidecarsByRoot: async (peer, ids) => {
        asked.push(`${peer}: ${ids.map((id) => `${roots.indexOf(toRootHex(id.blockRoot))}/${id.columns.join(",")}`).join(" ")}`);
        // "good" served the blocks and has block 0's columns; "bad" has only block 1's column 70
        if (peer === "good") return ids.filter((id) => toRootHex(id.blockRoot) === roots[0]).flatMap((id) => id.columns.map((c) => columnsOf[0][c]));
        return [columnsOf[1][70]];
      },
    }, []);
    await sync.fetchByRoot("good", made.map(({block}) => block));
    expect(asked).toEqual(["good: 0/5,70 1/5,70", "bad: 1/5,70"]);
    expect(env.chain.dataAvailability.missing(made[0].block, roots[0])).toBeNull();
    expect(env.chain.dataAvailability.missing(made[1].block, roots[1])).toEqual({kind: "columns", indices: [5]});
  });
});

