import {afterAll, beforeAll, describe, expect, it, jest} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type deneb, type fulu, type phase0, type SignedBeaconBlock} from "@lodestar/types";
import {buildBlobSidecars, buildDataColumnSidecars} from "../../../../../src/chain/blobs/sidecars.ts";
import type {BlobsBundle} from "../../../../../src/execution/engine.ts";
import {loadKzg} from "../../../../../src/kzg/kzg.ts";
import {type ChainEnv, createChainEnv} from "./chainEnv.ts";

/**
 * Sidecars of blocks the chain really produced (the mock engine's blobs, with KZG commitments and
 * proofs computed by c-kzg), checked rule by rule as deneb's and fulu's p2p-interface.md list them.
 */

function copy<T>(type: {clone(v: T): T}, value: T): T {
  return type.clone(value);
}

/** Signs an edited header with `signer`'s key (the proposer's by default). */
function resign(env: ChainEnv, header: phase0.BeaconBlockHeader, signer = header.proposerIndex): phase0.SignedBeaconBlockHeader {
  const root = computeSigningRoot(ssz.phase0.BeaconBlockHeader, header, env.config.getDomain(header.slot, DOMAIN_BEACON_PROPOSER, header.slot));
  return {message: header, signature: env.sign(signer, root)};
}

/** Publishes a block with its blobs the way the REST API does, and imports it. */
async function publish(env: ChainEnv, slot: number): Promise<void> {
  const {block, blobsBundle} = await env.produceBlockContents(slot);
  env.chain.acceptPublishedBlobs(block, blobsBundle.blobs, blobsBundle.proofs);
  await env.chain.importBlock(block);
}

// KZG work (cells, proofs, batch verification) is slow on a loaded 2-core machine
jest.setTimeout(30_000);

describe("data_column_sidecar gossip validation (fulu)", () => {
  let env: ChainEnv;
  let block: SignedBeaconBlock;
  let bundle: BlobsBundle;
  let columns: fulu.DataColumnSidecar[];
  beforeAll(async () => {
    loadKzg(); // the trusted setup: a second or two, once per test file
    env = await createChainEnv("fulu", {}, {blobsPerBlock: 2, dataAvailabilityWaitMs: 20});
    env.setTime(1, 100);
    await publish(env, 1);
    env.setTime(2, 100);
    ({block, blobsBundle: bundle} = await env.produceBlockContents(2));
    columns = buildDataColumnSidecars(env.config, block, bundle.blobs, bundle.proofs);
  }, 60_000);
  afterAll(() => env.close());

  const column = (index: number) => copy(ssz.fulu.DataColumnSidecar, columns[index]);
  const validate = (s: fulu.DataColumnSidecar, subnet = s.index % 128) => env.validators.data_column_sidecar(env.topic("data_column_sidecar", subnet), s, "peer");

  it("ACCEPTs a valid column once, IGNOREs it after", async () => {
    expect(await validate(column(5))).toMatchObject({result: "ACCEPT"});
    expect(await validate(column(5))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/seen already/)});
  });

  it("REJECTs a malformed sidecar, the wrong subnet, a bad inclusion proof, bad KZG proofs, a bad header signature or proposer", async () => {
    const tooHigh = column(10);
    tooHigh.index = 128;
    expect(await validate(tooHigh, 0)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/column index 128/)});
    const noCommitments = column(10);
    Object.assign(noCommitments, {kzgCommitments: [], column: [], kzgProofs: []});
    expect(await validate(noCommitments)).toMatchObject({result: "REJECT", reason: "sidecar has no KZG commitments"});
    const short = column(10);
    short.column = short.column.slice(0, 1);
    expect(await validate(short)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/1 cells and 2 proofs for 2 commitments/)});
    expect(await validate(column(10), 11)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/belongs to subnet 10, not 11/)});
    const swapped = column(10);
    swapped.kzgCommitments = [swapped.kzgCommitments[1], swapped.kzgCommitments[0]];
    expect(await validate(swapped)).toMatchObject({result: "REJECT", reason: "invalid KZG commitments inclusion proof"});
    const badProofs = column(10);
    badProofs.kzgProofs = [badProofs.kzgProofs[1], badProofs.kzgProofs[0]];
    expect(await validate(badProofs)).toMatchObject({result: "REJECT", reason: "invalid KZG cell proofs in column 10"});
    const badCell = column(10);
    badCell.column[0] = column(11).column[0];
    expect(await validate(badCell)).toMatchObject({result: "REJECT", reason: "invalid KZG cell proofs in column 10"});
    const wrongSigner = column(10);
    wrongSigner.signedBlockHeader = resign(env, wrongSigner.signedBlockHeader.message, (wrongSigner.signedBlockHeader.message.proposerIndex + 1) % 64);
    expect(await validate(wrongSigner)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/invalid proposer signature/)});
    const otherProposer = column(10);
    const header = otherProposer.signedBlockHeader.message;
    otherProposer.signedBlockHeader = resign(env, {...header, proposerIndex: (header.proposerIndex + 1) % 64});
    expect(await validate(otherProposer)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/is not the proposer of slot 2/)});
    // none of these counted as the first sidecar of its kind: the real one is still accepted
    expect(await validate(column(10))).toMatchObject({result: "ACCEPT"});
  });

  it("IGNOREs an unknown parent (flagged for sync) and a future slot", async () => {
    const orphan = column(20);
    orphan.signedBlockHeader = resign(env, {...orphan.signedBlockHeader.message, parentRoot: new Uint8Array(32).fill(0xaa)});
    expect(await validate(orphan)).toMatchObject({result: "IGNORE", parentUnknown: true, unknownBlockRoot: "0x" + "aa".repeat(32)});
    env.setTime(1, 100);
    expect(await validate(column(20))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/future/)});
    env.setTime(2, 100);
  });

  it("keeps a column whose block's parent is unknown for that block when its proofs hold, and not otherwise", async () => {
    const orphanOf = (index: number) => {
      const orphan = column(index);
      orphan.signedBlockHeader = resign(env, {...orphan.signedBlockHeader.message, parentRoot: new Uint8Array(32).fill(0xbb)});
      return orphan;
    };
    const rootOf = (s: fulu.DataColumnSidecar) => "0x" + Buffer.from(ssz.phase0.BeaconBlockHeader.hashTreeRoot(s.signedBlockHeader.message)).toString("hex");
    const good = orphanOf(21);
    expect(await validate(good)).toMatchObject({result: "IGNORE", parentUnknown: true});
    expect(env.chain.dataAvailability.hasColumnSidecar(rootOf(good), 21)).toBe(true);
    const badProofs = orphanOf(22);
    badProofs.kzgProofs = [badProofs.kzgProofs[1], badProofs.kzgProofs[0]];
    expect(await validate(badProofs)).toMatchObject({result: "IGNORE", parentUnknown: true});
    expect(env.chain.dataAvailability.hasColumnSidecar(rootOf(badProofs), 22)).toBe(false);
  });

  it("imports the block once the columns it samples are accepted, and stores them with it", async () => {
    env.chain.dataAvailability.setSamplingColumns([5, 10, 30]);
    await expect(env.chain.importBlock(block)).rejects.toMatchObject({code: "DATA_UNAVAILABLE", message: expect.stringMatching(/data column sidecars 30 of block/)});
    expect(await validate(column(30))).toMatchObject({result: "ACCEPT"});
    const imported = await env.chain.importBlock(block);
    expect((await env.chain.getDataColumnSidecars(imported.blockRoot)).map((s) => s.index)).toEqual([5, 10, 30]);
    expect(ssz.fulu.DataColumnSidecar.equals((await env.chain.getDataColumnSidecars(imported.blockRoot, [30]))[0], columns[30])).toBe(true);
  });

  it("IGNOREs a column the node holds already from elsewhere (the execution engine's blobs, reconstruction): it counts as seen", async () => {
    env.chain.dataAvailability.addColumnSidecars([column(50)]);
    expect(await validate(column(50))).toMatchObject({result: "IGNORE", reason: "column 50 of slot 2 is held already"});
    expect(await validate(column(51))).toMatchObject({result: "ACCEPT"});
  });

  it("REJECTs blob sidecars from fulu on", async () => {
    const blob = ssz.deneb.BlobSidecar.defaultValue();
    blob.signedBlockHeader.message.slot = 2;
    expect(await env.validators.blob_sidecar(env.topic("blob_sidecar", 0), blob, "peer")).toMatchObject({result: "REJECT", reason: expect.stringMatching(/no blob sidecars at fulu/)});
  });
});

describe("blob_sidecar gossip validation (electra)", () => {
  let env: ChainEnv;
  let block: SignedBeaconBlock;
  let sidecars: deneb.BlobSidecar[];
  beforeAll(async () => {
    env = await createChainEnv("electra", {}, {blobsPerBlock: 3, dataAvailabilityWaitMs: 20});
    env.setTime(2, 100);
    const contents = await env.produceBlockContents(2);
    block = contents.block;
    sidecars = buildBlobSidecars(env.config, block, contents.blobsBundle.blobs, contents.blobsBundle.proofs);
  }, 60_000);
  afterAll(() => env.close());

  const sidecar = (index: number) => copy(ssz.deneb.BlobSidecar, sidecars[index]);
  const validate = (s: deneb.BlobSidecar, subnet = s.index % env.config.BLOB_SIDECAR_SUBNET_COUNT_ELECTRA) => env.validators.blob_sidecar(env.topic("blob_sidecar", subnet), s, "peer");

  it("verifies the index, subnet, inclusion proof and KZG proof, and ACCEPTs each blob once", async () => {
    const badInclusion = sidecar(2);
    badInclusion.kzgCommitmentInclusionProof[0] = new Uint8Array(32).fill(7);
    expect(await validate(badInclusion)).toMatchObject({result: "REJECT", reason: "invalid KZG commitment inclusion proof"});
    const badProof = sidecar(2);
    badProof.kzgProof = sidecars[1].kzgProof;
    expect(await validate(badProof)).toMatchObject({result: "REJECT", reason: "invalid KZG proof of blob 2"});
    const otherBlob = sidecar(2);
    otherBlob.blob = sidecars[1].blob;
    expect(await validate(otherBlob)).toMatchObject({result: "REJECT", reason: "invalid KZG proof of blob 2"});
    expect(await validate(sidecar(1), 2)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/belongs to subnet 1, not 2/)});
    const tooHigh = sidecar(0);
    tooHigh.index = env.config.MAX_BLOBS_PER_BLOCK_ELECTRA;
    expect(await validate(tooHigh, 0)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/blob index 9 is not below 9/)});
    expect(await validate(sidecar(2))).toMatchObject({result: "ACCEPT"});
    expect(await validate(sidecar(2))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/seen already/)});
  });

  it("imports the block only with all its blobs, and stores them with it", async () => {
    await expect(env.chain.importBlock(block)).rejects.toMatchObject({code: "DATA_UNAVAILABLE", message: expect.stringMatching(/blob sidecars 0,1 of block/)});
    expect(await validate(sidecar(0))).toMatchObject({result: "ACCEPT"});
    expect(await validate(sidecar(1))).toMatchObject({result: "ACCEPT"});
    const imported = await env.chain.importBlock(block);
    const stored = await env.chain.getBlobSidecars(imported.blockRoot);
    expect(stored?.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(ssz.deneb.BlobSidecars.equals(stored!, sidecars)).toBe(true);
  });
});
