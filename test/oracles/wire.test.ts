import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {ListCompositeType} from "@chainsafe/ssz";
import {getJson} from "../e2e/nodeProcess.ts";
import {ssz} from "../../node_modules/@lodestar/api/node_modules/@lodestar/types/lib/index.js";
import {PROTOCOL, hex, parseChunks, startWireSession, type WireSession} from "./wirePeer.ts";

/**
 * The wire after bellatrix, against another team's types: a fulu node (a blob in every payload,
 * so data columns) is asked status v2, metadata v3, beacon_blocks_by_range v2 and
 * data_column_sidecars_by_range/by_root v1 over raw libp2p streams. Each answer is taken apart
 * here without the node's code: the response chunk by hand (result byte, context bytes, varint
 * length), the snappy frames by the snappy package (the Rust snap crate), the payload by the types
 * of @lodestar/types 1.50 (the copy under @lodestar/api 1.48.0, not the node's 1.46) and the
 * context bytes by that release's config (@lodestar/config 1.48.0). Each payload must re-serialize
 * to the bytes sent, and name what the REST API names (roots, commitments, custody group count).
 * blob_sidecars_by_range/by_root are asked of a deneb and electra chain in wireBlobs.test.ts.
 */

/** the slots the by_range requests ask for */
const RANGE = {startSlot: 1, count: 5};
let wire: WireSession;
const request = (protocol: string, payload: Uint8Array | null) => wire.request(protocol, payload);
const digestAt = (slot: number) => wire.digestAt(slot);

beforeAll(async () => {
  wire = await startWireSession("oracle-wire", "fulu", {}, RANGE.startSlot + RANGE.count + 3);
}, 90_000);

afterAll(async () => {
  await wire?.stop();
});

describe("the node's req/resp answers, read with @lodestar/types 1.50 and the snappy package", () => {
  it("status v2: a fulu Status of the node's chain", async () => {
    const url = wire.view.url;
    const mine = await wire.view.chainStatus(digestAt(Math.floor(Date.now() / 1000 - wire.genesisTime)));
    const chunks = await parseChunks(await request(PROTOCOL("status", 2), ssz.fulu.Status.serialize({...mine, earliestAvailableSlot: 0})), false);
    expect(chunks.map((c) => c.result)).toEqual([0]);
    const status = ssz.fulu.Status.deserialize(chunks[0]!.payload);
    expect(ssz.fulu.Status.serialize(status)).toEqual(chunks[0]!.payload);
    expect(hex(status.forkDigest)).toBe(hex(mine.forkDigest));
    const finalized = (await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized;
    expect({epoch: status.finalizedEpoch, root: "0x" + hex(status.finalizedRoot)}).toEqual({epoch: Number(finalized.epoch), root: finalized.root});
    const headRoot = (await getJson(url, `/eth/v1/beacon/blocks/${status.headSlot}/root`)).body.data.root;
    expect("0x" + hex(status.headRoot)).toBe(headRoot);
  }, 20_000);

  it("metadata v3: a fulu MetaData with the custody group count the REST API reports", async () => {
    const chunks = await parseChunks(await request(PROTOCOL("metadata", 3), null), false);
    expect(chunks.map((c) => c.result)).toEqual([0]);
    const metadata = ssz.fulu.Metadata.deserialize(chunks[0]!.payload);
    expect(ssz.fulu.Metadata.serialize(metadata)).toEqual(chunks[0]!.payload);
    const identity = (await getJson(wire.view.url, "/eth/v1/node/identity")).body.data.metadata;
    expect(String(metadata.custodyGroupCount)).toBe(identity.custody_group_count);
    expect("0x" + hex(metadata.attnets.uint8Array)).toBe(identity.attnets);
  }, 20_000);

  it("beacon_blocks_by_range v2: fulu blocks under their fork digest, the chain's roots", async () => {
    const chunks = await parseChunks(await request(PROTOCOL("beacon_blocks_by_range", 2), ssz.phase0.BeaconBlocksByRangeRequest.serialize({...RANGE, step: 1})), true);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) {
      expect(chunk.result).toBe(0);
      const block = ssz.fulu.SignedBeaconBlock.deserialize(chunk.payload);
      expect(ssz.fulu.SignedBeaconBlock.serialize(block)).toEqual(chunk.payload);
      expect(hex(chunk.context!)).toBe(hex(digestAt(block.message.slot)));
      const answer = await getJson(wire.view.url, `/eth/v1/beacon/blocks/${block.message.slot}/root`);
      expect({slot: block.message.slot, status: answer.status, body: answer.status === 200 ? undefined : answer.body}).toEqual({slot: block.message.slot, status: 200, body: undefined});
      expect("0x" + hex(ssz.fulu.BeaconBlock.hashTreeRoot(block.message))).toBe(answer.body.data.root);
    }
  }, 20_000);

  it("data_column_sidecars by range and by root: fulu sidecars of the columns asked, naming their blocks", async () => {
    // the custody columns the node names in its ENR-derived metadata are not exposed over REST: ask a few, take what comes
    const columns = [0, 1, 2, 3, 64, 127];
    const byRange = await parseChunks(
      await request(PROTOCOL("data_column_sidecars_by_range", 1), ssz.fulu.DataColumnSidecarsByRangeRequest.serialize({...RANGE, columns})),
      true
    );
    expect(byRange.length).toBeGreaterThan(0);
    const custody = new Set<number>();
    const blocks = new Map<string, {status: number; body: any}>();
    for (const chunk of byRange) {
      expect(chunk.result).toBe(0);
      const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.payload);
      expect(ssz.fulu.DataColumnSidecar.serialize(sidecar)).toEqual(chunk.payload);
      const slot = sidecar.signedBlockHeader.message.slot;
      expect(hex(chunk.context!)).toBe(hex(digestAt(slot)));
      // the sidecar's header is a block of the node's, and its commitments that block's
      const root = "0x" + hex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message));
      const answer = blocks.get(root) ?? (await getJson(wire.view.url, `/eth/v2/beacon/blocks/${root}`));
      blocks.set(root, answer);
      expect({slot, status: answer.status}).toEqual({slot, status: 200});
      const block = answer.body.data.message;
      expect(Number(block.slot)).toBe(slot);
      expect(sidecar.kzgCommitments.map((c) => "0x" + hex(c))).toEqual(block.body.blob_kzg_commitments);
      expect(sidecar.column.length).toBe(block.body.blob_kzg_commitments.length);
      expect(columns).toContain(sidecar.index);
      custody.add(sidecar.index);
    }
    // at least its own custody's share of what was asked (the proposer of every block keeps them all)
    expect(custody.size).toBeGreaterThan(0);

    const first = ssz.fulu.DataColumnSidecar.deserialize(byRange[0]!.payload);
    const blockRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(first.signedBlockHeader.message);
    const byRoot = await parseChunks(
      await request(PROTOCOL("data_column_sidecars_by_root", 1), new ListCompositeType(ssz.fulu.DataColumnsByRootIdentifier, 128).serialize([{blockRoot, columns: [...custody]}])),
      true
    );
    expect(byRoot.map((c) => c.result)).toEqual([...custody].map(() => 0));
    for (const chunk of byRoot) {
      const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.payload);
      expect(hex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message))).toBe(hex(blockRoot));
      expect(ssz.fulu.DataColumnSidecar.serialize(sidecar)).toEqual(chunk.payload);
    }
  }, 30_000);
});
