import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {Libp2p} from "@libp2p/interface";
import {ForkName} from "@lodestar/params";
import {ssz, type fulu, type SignedBeaconBlock} from "@lodestar/types";
import {ByteSource} from "../../../../src/network/reqresp/byteSource.ts";
import {encodePayload, readResponseChunk} from "../../../../src/network/reqresp/encoding.ts";
import {PROTOCOLS, protocolId} from "../../../../src/network/reqresp/protocols.ts";
import type {ReqResp} from "../../../../src/network/reqresp/reqResp.ts";
import {
  BLOCK_SLOTS,
  blockAt,
  chainHandlers,
  config,
  createNode,
  digestAtSlot,
  metadataOf,
  reqRespOn,
  statusOf,
  type Misbehaviour,
} from "./wireSetup.ts";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const blocks = BLOCK_SLOTS.map((slot) => blockAt(slot));
/** the block as its own fork's type serializes it: equal bytes mean the requester typed it by the right fork */
const bytesOf = (block: SignedBeaconBlock): Uint8Array => config.getForkTypes(block.message.slot).SignedBeaconBlock.serialize(block as never);

let a: Libp2p;
let b: Libp2p;
let reqA: ReqResp;
let reqB: ReqResp;
const reports: Misbehaviour[] = [];
const nodeA = chainHandlers([], statusOf(60, 0), 7);
const nodeB = chainHandlers(blocks, statusOf(57, 3), 42);
let inFlight = 0;
let maxInFlight = 0;

beforeAll(async () => {
  [a, b] = await Promise.all([createNode(), createNode()]);
  nodeB.handlers.onBlobSidecarsByRange = async function* (_peer, {startSlot, count}) {
    for (const slot of [33, 41]) {
      if (slot < startSlot || slot >= startSlot + count) continue;
      const sidecar = ssz.deneb.BlobSidecar.defaultValue();
      sidecar.signedBlockHeader.message.slot = slot;
      yield {slot, bytes: ssz.deneb.BlobSidecar.serialize(sidecar)};
    }
  };
  nodeB.handlers.onDataColumnSidecarsByRoot = async function* (_peer, ids) {
    for (const id of ids) {
      for (const index of id.columns) {
        const sidecar = ssz.fulu.DataColumnSidecar.defaultValue();
        sidecar.index = index;
        sidecar.signedBlockHeader.message.slot = 57;
        yield {slot: 57, bytes: ssz.fulu.DataColumnSidecar.serialize(sidecar)};
      }
    }
  };
  const byRange = nodeB.handlers.onBeaconBlocksByRange;
  nodeB.handlers.onBeaconBlocksByRange = async function* (peer, request) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield* byRange(peer, request);
    } finally {
      inFlight--;
    }
  };
  reqA = reqRespOn(a, nodeA.handlers, reports);
  reqB = reqRespOn(b, nodeB.handlers, reports);
  await Promise.all([reqA.start(), reqB.start()]);
  await a.dial(b.getMultiaddrs()[0]);
});

afterAll(async () => {
  await Promise.all([reqA.stop(), reqB.stop()]);
  await Promise.all([a.stop(), b.stop()]);
});

const B = (): string => b.peerId.toString();

describe("req/resp between two libp2p nodes", () => {
  it("registers every protocol version under the spec's protocol ids", () => {
    expect(PROTOCOLS.map((p) => p.id)).toEqual(
      expect.arrayContaining([
        "/eth2/beacon_chain/req/status/1/ssz_snappy",
        "/eth2/beacon_chain/req/status/2/ssz_snappy",
        "/eth2/beacon_chain/req/goodbye/1/ssz_snappy",
        "/eth2/beacon_chain/req/ping/1/ssz_snappy",
        "/eth2/beacon_chain/req/metadata/1/ssz_snappy",
        "/eth2/beacon_chain/req/metadata/2/ssz_snappy",
        "/eth2/beacon_chain/req/metadata/3/ssz_snappy",
        "/eth2/beacon_chain/req/beacon_blocks_by_range/1/ssz_snappy",
        "/eth2/beacon_chain/req/beacon_blocks_by_range/2/ssz_snappy",
        "/eth2/beacon_chain/req/beacon_blocks_by_root/1/ssz_snappy",
        "/eth2/beacon_chain/req/beacon_blocks_by_root/2/ssz_snappy",
        "/eth2/beacon_chain/req/blob_sidecars_by_range/1/ssz_snappy",
        "/eth2/beacon_chain/req/blob_sidecars_by_root/1/ssz_snappy",
        "/eth2/beacon_chain/req/data_column_sidecars_by_range/1/ssz_snappy",
        "/eth2/beacon_chain/req/data_column_sidecars_by_root/1/ssz_snappy",
        "/eth2/beacon_chain/req/light_client_bootstrap/1/ssz_snappy",
        "/eth2/beacon_chain/req/light_client_updates_by_range/1/ssz_snappy",
        "/eth2/beacon_chain/req/light_client_finality_update/1/ssz_snappy",
        "/eth2/beacon_chain/req/light_client_optimistic_update/1/ssz_snappy",
      ])
    );
    expect(PROTOCOLS).toHaveLength(19);
    expect(b.getProtocols()).toEqual(expect.arrayContaining(PROTOCOLS.map((p) => p.id)));
  });

  it("exchanges statuses both ways, v2 with earliest_available_slot once fulu is current", async () => {
    const theirs = await reqA.status(B(), statusOf(60, 0));
    expect(ssz.fulu.Status.equals(theirs as fulu.Status, statusOf(57, 3) as fulu.Status)).toBe(true);
    expect(nodeB.seen.statuses.at(-1)).toEqual(statusOf(60, 0));
    const back = await reqB.status(a.peerId.toString(), statusOf(57, 3));
    expect(back).toEqual(statusOf(60, 0));
  });

  it("uses status v1 before fulu: no earliest_available_slot either way", async () => {
    const phase0Requester = reqRespOn(a, nodeA.handlers, reports, {currentEpoch: () => 0});
    const theirs = await phase0Requester.status(B(), statusOf(60, 0));
    expect(theirs).toEqual(statusOf(57));
    expect(nodeB.seen.statuses.at(-1)).toEqual(statusOf(60));
  });

  it("pings with metadata sequence numbers, and says goodbye", async () => {
    expect(await reqA.ping(B(), BigInt(7))).toBe(BigInt(42));
    expect(nodeB.seen.pings.at(-1)).toBe(BigInt(7));
    await reqA.goodbye(B(), BigInt(1));
    expect(nodeB.seen.goodbyes).toEqual([BigInt(1)]);
  });

  it("gets metadata v1, v2 and v3, each with its own fields", async () => {
    const at = (epoch: number): ReqResp => reqRespOn(a, nodeA.handlers, reports, {currentEpoch: () => epoch});
    const full = metadataOf(42);
    const v1 = await at(0).metadata(B());
    expect(Object.keys(v1).sort()).toEqual(["attnets", "seqNumber"]);
    expect(ssz.phase0.Metadata.equals(v1, full)).toBe(true);
    const v2 = await at(1).metadata(B());
    expect(Object.keys(v2).sort()).toEqual(["attnets", "seqNumber", "syncnets"]);
    expect(ssz.altair.Metadata.equals(v2 as never, full)).toBe(true);
    const v3 = await at(6).metadata(B());
    expect(ssz.fulu.Metadata.equals(v3 as fulu.Metadata, full)).toBe(true);
    expect(v3.custodyGroupCount).toBe(8);
  });

  it("gets blocks by range across every fork, each typed by its context bytes", async () => {
    const got = await reqA.beaconBlocksByRange(B(), {startSlot: 0, count: 64, step: 1});
    expect(got.map((block) => block.message.slot)).toEqual(BLOCK_SLOTS);
    for (const [i, block] of got.entries()) expect(hex(bytesOf(block))).toBe(hex(blocks[i].bytes));
    // a fulu block has fields no earlier fork has
    expect("executionRequests" in got[6].message.body).toBe(true);
    expect("syncAggregate" in got[0].message.body).toBe(false);
    const middle = await reqA.beaconBlocksByRange(B(), {startSlot: 10, count: 20, step: 1});
    expect(middle.map((block) => block.message.slot)).toEqual([17, 25]);
  });

  it("gets blocks by root, skipping the roots the peer does not have", async () => {
    const got = await reqA.beaconBlocksByRoot(B(), [blocks[1].root, new Uint8Array(32).fill(9), blocks[7].root]);
    expect(got.map((block) => hex(bytesOf(block)))).toEqual([hex(blocks[1].bytes), hex(blocks[7].bytes)]);
  });

  it("serves v1 block requests with phase0 blocks only, then InvalidRequest (altair spec)", async () => {
    const stream = await a.dialProtocol(b.peerId, protocolId("beacon_blocks_by_range", 1));
    const source = new ByteSource(stream);
    stream.send(encodePayload(ssz.phase0.BeaconBlocksByRangeRequest.serialize({startSlot: 0, count: 64, step: 1})));
    await stream.close();
    const bounds = (): {min: number; max: number} => ({min: 0, max: 1 << 20});
    const first = await readResponseChunk(source, false, bounds);
    expect(first).toEqual({kind: "success", contextBytes: null, bytes: blocks[0].bytes});
    expect(await readResponseChunk(source, false, bounds)).toEqual({kind: "error", status: 1, message: "beacon_blocks_by_range v1 cannot carry altair objects"});
    expect(await readResponseChunk(source, false, bounds)).toBeNull();
  });

  it("gets blob sidecars by range and data column sidecars by root, and nothing where the peer has no handler", async () => {
    const blobs = await reqA.blobSidecarsByRange(B(), {startSlot: 32, count: 16});
    expect(blobs.map((s) => s.signedBlockHeader.message.slot)).toEqual([33, 41]);
    const header = ssz.fulu.DataColumnSidecar.defaultValue().signedBlockHeader.message;
    header.slot = 57;
    const blockRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(header);
    const columns = await reqA.dataColumnSidecarsByRoot(B(), [{blockRoot, columns: [5, 9]}]);
    expect(columns.map((s) => s.index)).toEqual([5, 9]);
    expect(await reqA.blobSidecarsByRoot(B(), [{blockRoot, index: 0}])).toEqual([]);
    expect(await reqA.dataColumnSidecarsByRange(B(), {startSlot: 48, count: 8, columns: [1]})).toEqual([]);
    expect(hex(digestAtSlot(57))).not.toBe(hex(digestAtSlot(49))); // the BPO boundary changed the digest
  });

  it("never runs more than MAX_CONCURRENT_REQUESTS (2) requests of a protocol to one peer at once", async () => {
    maxInFlight = 0;
    const all = await Promise.all(Array.from({length: 5}, () => reqA.beaconBlocksByRange(B(), {startSlot: 0, count: 8, step: 1})));
    expect(all.map((got) => got.length)).toEqual([1, 1, 1, 1, 1]);
    expect(maxInFlight).toBe(2);
  });

  it("reported no one", () => {
    expect(reports).toEqual([]);
    expect(config.getForkName(57)).toBe(ForkName.fulu);
  });
});
