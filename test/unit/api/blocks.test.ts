import {beforeAll, beforeEach, describe, expect, it} from "@jest/globals";
import {BitArray, ListCompositeType} from "@chainsafe/ssz";
import {MAX_ATTESTATIONS} from "@lodestar/params";
import {signedBeaconBlockToBlinded} from "@lodestar/state-transition";
import {ssz, type SignedBeaconBlock, type electra, type fulu} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApiClient, httpTransport} from "../../../src/api/client.ts";
import {createApp, inProcessTransport, startRestServer} from "../../../src/api/server/index.ts";
import {blockError, createTestContext, type TestContext} from "./testContext.ts";
import {binary} from "./binary.ts";

/** Block routes beyond the block itself: attestations, blinded blocks, blob sidecars and blobs. */

const RANDAO = "0x" + "ab".repeat(96);
const GENESIS_META = {execution_optimistic: false, finalized: true};
/** blocks after genesis: the double finalizes only genesis */
const BLOCK_META = {execution_optimistic: false, finalized: false};


function electraAttestation(slot: number, committee: number, fill: number) {
  const att = ssz.electra.Attestation.defaultValue();
  att.data.slot = slot;
  att.data.beaconBlockRoot = new Uint8Array(32).fill(fill);
  att.aggregationBits = BitArray.fromSingleBit(8, fill % 8);
  att.committeeBits = BitArray.fromSingleBit(att.committeeBits.bitLen, committee);
  att.signature = new Uint8Array(96).fill(fill);
  return att;
}

/** A signed fulu block at `slot` on genesis, with `edit` applied to it. */
function fuluBlock(t: TestContext, slot: number, edit: (b: fulu.SignedBeaconBlock) => void = () => {}): fulu.SignedBeaconBlock {
  const block = ssz.fulu.SignedBeaconBlock.defaultValue();
  block.message.slot = slot;
  block.message.proposerIndex = 5;
  block.message.parentRoot = t.chain.genesisRoot;
  block.signature = new Uint8Array(96).fill(3);
  edit(block);
  return block;
}

describe("block attestations and blinded blocks (fulu)", () => {
  let t: TestContext;
  let app: ReturnType<typeof createApp>;
  let withAttestations: fulu.SignedBeaconBlock;
  let rootHex: string;

  beforeAll(() => {
    t = createTestContext();
    app = createApp({}, t.ctx);
    withAttestations = fuluBlock(t, 1, (b) => {
      b.message.body.attestations = [electraAttestation(0, 1, 1), electraAttestation(0, 2, 2)];
      b.message.body.executionPayload.blockHash = new Uint8Array(32).fill(0x44);
      b.message.body.executionPayload.transactions = [Uint8Array.from([1, 2, 3]), Uint8Array.from([4])];
    });
    rootHex = toHex(t.chain.addBlock(withAttestations));
  });

  it("getBlockAttestationsV2 gives the block's attestations with version, by slot and by root", async () => {
    const res = await request(app).get("/eth/v2/beacon/blocks/1/attestations").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", ...BLOCK_META, data: withAttestations.message.body.attestations.map((a) => ssz.electra.Attestation.toJson(a))});
    expect(res.body.data[1].committee_bits).toBe(toHex(withAttestations.message.body.attestations[1].committeeBits.uint8Array));
    expect((await request(app).get(`/eth/v2/beacon/blocks/${rootHex}/attestations`).expect(200)).body).toEqual(res.body);
    expect((await request(app).get("/eth/v2/beacon/blocks/genesis/attestations").expect(200)).body).toEqual({version: "fulu", ...GENESIS_META, data: []});
  });

  it("getBlockAttestationsV2: 404 for an unknown block, 400 for a malformed id", async () => {
    expect((await request(app).get("/eth/v2/beacon/blocks/5/attestations").expect(404)).body).toEqual({code: 404, message: "Block not found"});
    expect((await request(app).get("/eth/v2/beacon/blocks/current/attestations").expect(400)).body).toEqual({code: 400, message: "Invalid block ID: current"});
  });

  it("getBlockAttestations (v1) on a fulu block: the fork's JSON with Eth-Consensus-Version, as v2; SSZ is a 406 naming v2", async () => {
    const res = await request(app).get("/eth/v1/beacon/blocks/1/attestations").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", ...BLOCK_META, data: withAttestations.message.body.attestations.map((a) => ssz.electra.Attestation.toJson(a))});
    const asSsz = await request(app).get("/eth/v1/beacon/blocks/1/attestations").set("Accept", "application/octet-stream").expect(406);
    expect(asSsz.body).toEqual({
      code: 406,
      message: "SSZ of a fulu Attestation list does not fit this route's pre-electra type: use GET /eth/v2/beacon/blocks/{block_id}/attestations (getBlockAttestationsV2)",
    });
    await request(app).get(`/eth/v1/beacon/blocks/0x${"11".repeat(32)}/attestations`).expect(404);
  });

  it("getBlindedBlock replaces the execution payload by its header (JSON)", async () => {
    const res = await request(app).get(`/eth/v1/beacon/blinded_blocks/${rootHex}`).expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    const blinded = signedBeaconBlockToBlinded(t.chain.config, withAttestations);
    expect(res.body).toEqual({version: "fulu", ...BLOCK_META, data: ssz.electra.SignedBlindedBeaconBlock.toJson(blinded as electra.SignedBlindedBeaconBlock)});
    const body = res.body.data.message.body;
    expect(body.execution_payload).toBeUndefined();
    expect(body.execution_payload_header.block_hash).toBe("0x" + "44".repeat(32));
    expect(body.execution_payload_header.transactions_root).toBe(toHex(ssz.bellatrix.Transactions.hashTreeRoot(withAttestations.message.body.executionPayload.transactions)));
    expect(body.attestations).toHaveLength(2);
  });

  it("getBlockV2 as SSZ sends the stored bytes as they are: no decode and re-encode", async () => {
    const stored = ssz.fulu.SignedBeaconBlock.serialize(withAttestations as fulu.SignedBeaconBlock);
    const getBytes = t.chain.getBlockBytesByRoot;
    // bytes the store holds, which a decode and re-encode would not give back unchanged: a spare byte after the block
    t.chain.getBlockBytesByRoot = async () => Uint8Array.from([...stored, 0x99]);
    try {
      const res = await binary(request(app).get(`/eth/v2/beacon/blocks/${rootHex}`).set("Accept", "application/octet-stream")).expect(200);
      expect(res.headers["eth-consensus-version"]).toBe("fulu");
      expect(new Uint8Array(res.body)).toEqual(Uint8Array.from([...stored, 0x99]));
    } finally {
      t.chain.getBlockBytesByRoot = getBytes;
    }
    const json = await request(app).get(`/eth/v2/beacon/blocks/${rootHex}`).expect(200);
    expect(json.body).toEqual({version: "fulu", ...BLOCK_META, data: ssz.fulu.SignedBeaconBlock.toJson(withAttestations as fulu.SignedBeaconBlock)});
    await request(app).get("/eth/v2/beacon/blocks/7").expect(404);
  });

  it("getBlindedBlock as SSZ: a blinded block with the full block's root", async () => {
    const res = await binary(request(app).get("/eth/v1/beacon/blinded_blocks/1").set("Accept", "application/octet-stream")).expect(200);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    const blinded = ssz.electra.SignedBlindedBeaconBlock.deserialize(new Uint8Array(res.body));
    expect(toHex(ssz.fulu.BlindedBeaconBlock.hashTreeRoot(blinded.message))).toBe(rootHex);
    expect(blinded.message.body.executionPayloadHeader.blockHash).toEqual(new Uint8Array(32).fill(0x44));
  });

  it("getBlindedBlock: 404 unknown, 400 malformed, 406 unservable Accept", async () => {
    expect((await request(app).get("/eth/v1/beacon/blinded_blocks/7").expect(404)).body).toEqual({code: 404, message: "Block not found"});
    expect((await request(app).get("/eth/v1/beacon/blinded_blocks/0x12").expect(400)).body).toEqual({code: 400, message: "Invalid block ID: 0x12"});
    await request(app).get("/eth/v1/beacon/blinded_blocks/head").set("Accept", "text/html").expect(406);
  });
});

describe("publishing blinded blocks (fulu; the node has no builder)", () => {
  let t: TestContext;
  let app: ReturnType<typeof createApp>;
  /** a block the double produced (its payload kept), signed */
  let produced: SignedBeaconBlock;

  beforeAll(async () => {
    t = createTestContext();
    app = createApp({}, t.ctx);
    const {block} = await t.chain.produceBlock({slot: 2, randaoReveal: new Uint8Array(96).fill(0xab)});
    produced = {message: block, signature: new Uint8Array(96).fill(9)} as SignedBeaconBlock;
  });
  beforeEach(() => {
    t.chain.imported.length = 0;
    t.chain.importError = null;
  });

  const blinded = () => signedBeaconBlockToBlinded(t.chain.config, produced as fulu.SignedBeaconBlock) as electra.SignedBlindedBeaconBlock;
  const post = (path = "/eth/v2/beacon/blinded_blocks", fork: string | null = "fulu") => {
    const req = request(app).post(path);
    return fork === null ? req : req.set("Eth-Consensus-Version", fork);
  };
  const fullJson = (b: SignedBeaconBlock) => ssz.fulu.SignedBeaconBlock.toJson(b as fulu.SignedBeaconBlock);

  it("publishBlindedBlockV2 imports the block unblinded with the payload the node produced (JSON)", async () => {
    await post().send(ssz.electra.SignedBlindedBeaconBlock.toJson(blinded())).expect(200);
    expect(t.chain.imported.map(fullJson)).toEqual([fullJson(produced)]);
    expect(t.chain.imported[0].message.body).toMatchObject({executionPayload: {transactions: [Uint8Array.from([2, 2])]}});
  });

  it("publishBlindedBlockV2 takes SSZ bodies too", async () => {
    const bytes = ssz.electra.SignedBlindedBeaconBlock.serialize(blinded());
    await post().set("Content-Type", "application/octet-stream").send(Buffer.from(bytes)).expect(200);
    expect(t.chain.imported.map(fullJson)).toEqual([fullJson(produced)]);
  });

  it("publishBlindedBlock (v1) tells the fork by the slot when the header is absent", async () => {
    await post("/eth/v1/beacon/blinded_blocks", null).send(ssz.electra.SignedBlindedBeaconBlock.toJson(blinded())).expect(200);
    expect(t.chain.imported).toHaveLength(1);
  });

  it("a block the node already has is unblinded with its own payload (published again)", async () => {
    const known = fuluBlock(t, 3, (b) => {
      b.message.body.executionPayload.blockHash = new Uint8Array(32).fill(0x55);
      b.message.body.executionPayload.transactions = [Uint8Array.from([5, 5])];
    });
    t.chain.addBlock(known);
    const json = ssz.fulu.SignedBlindedBeaconBlock.toJson(signedBeaconBlockToBlinded(t.chain.config, known) as electra.SignedBlindedBeaconBlock);
    await post().send(json).expect(200);
    expect(t.chain.imported.map(fullJson)).toEqual([fullJson(known)]);
  });

  it("400 when the payload is not one the node produced, or its header differs from it", async () => {
    const foreign = blinded();
    foreign.message.body.executionPayloadHeader.blockHash = new Uint8Array(32).fill(0x77);
    const unknown = await post().send(ssz.electra.SignedBlindedBeaconBlock.toJson(foreign)).expect(400);
    expect(unknown.body).toEqual({
      code: 400,
      message: `Cannot publish blinded block: this node has no builder, and the execution payload 0x${"77".repeat(32)} is neither one it produced recently nor that of a block it has`,
    });
    const altered = blinded();
    altered.message.body.executionPayloadHeader.gasUsed = 21000;
    const mismatch = await post().send(ssz.electra.SignedBlindedBeaconBlock.toJson(altered)).expect(400);
    expect(mismatch.body.message).toBe(`Cannot publish blinded block: its execution payload header does not match the payload 0x${"02".repeat(32)} this node produced`);
    expect(t.chain.imported).toEqual([]);
  });

  it("checks Eth-Consensus-Version, and maps import failures as publishBlockV2 does", async () => {
    const json = ssz.electra.SignedBlindedBeaconBlock.toJson(blinded());
    expect((await post().set("Eth-Consensus-Version", "electra").send(ssz.electra.SignedBlindedBeaconBlock.toJson(blinded())).expect(400)).body.message).toMatch(
      /does not match the fork of slot 2 \(fulu\)/
    );
    expect((await post("/eth/v2/beacon/blinded_blocks", null).send(json).expect(400)).body.message).toBe("Missing required parameter Eth-Consensus-Version");
    t.chain.importError = blockError("STATE_TRANSITION_FAILED", "bad");
    await post().send(json).expect(202);
    await post("/eth/v2/beacon/blinded_blocks?broadcast_validation=consensus").send(json).expect(400);
    expect((await post().send({message: {}}).expect(400)).body.message).toMatch(/^Invalid request body/);
  });
});

describe("blocks before electra and before bellatrix", () => {
  it("deneb: getBlockAttestations (v1) and v2 give the block's phase0 attestations", async () => {
    const t = createTestContext(64, "deneb");
    const app = createApp({}, t.ctx);
    const block = ssz.deneb.SignedBeaconBlock.defaultValue();
    block.message.slot = 1;
    block.message.parentRoot = t.chain.genesisRoot;
    const att = ssz.phase0.Attestation.defaultValue();
    att.aggregationBits = BitArray.fromSingleBit(4, 2);
    att.data.index = 1;
    block.message.body.attestations = [att];
    t.chain.addBlock(block);
    const data = [ssz.phase0.Attestation.toJson(att)];
    expect((await request(app).get("/eth/v1/beacon/blocks/1/attestations").expect(200)).body).toEqual({version: "deneb", ...BLOCK_META, data});
    expect((await request(app).get("/eth/v2/beacon/blocks/1/attestations").expect(200)).body).toEqual({version: "deneb", ...BLOCK_META, data});
    // SSZ: the spec's List[Attestation, MAX_ATTESTATIONS] of phase0 attestations
    const bytes = await binary(request(app).get("/eth/v1/beacon/blocks/1/attestations").set("Accept", "application/octet-stream")).expect(200);
    expect(bytes.headers["eth-consensus-version"]).toBe("deneb");
    const list = new ListCompositeType(ssz.phase0.Attestation, MAX_ATTESTATIONS);
    expect(list.toJson(list.deserialize(new Uint8Array(bytes.body)))).toEqual(data);
  });

  it("phase0: getBlindedBlock gives the full block (there is no payload to blind)", async () => {
    const t = createTestContext(64, "phase0");
    const app = createApp({}, t.ctx);
    const block = ssz.phase0.SignedBeaconBlock.defaultValue();
    block.message.slot = 1;
    block.message.parentRoot = t.chain.genesisRoot;
    block.message.body.graffiti = new Uint8Array(32).fill(0x61);
    t.chain.addBlock(block);
    const res = await request(app).get("/eth/v1/beacon/blinded_blocks/1").expect(200);
    expect(res.body).toEqual({version: "phase0", ...BLOCK_META, data: ssz.phase0.SignedBeaconBlock.toJson(block)});
  });
});

describe("blob sidecars and blobs (the dev chain has none)", () => {
  let t: TestContext;
  let app: ReturnType<typeof createApp>;
  let withBlobsHex: string;

  beforeAll(() => {
    t = createTestContext();
    app = createApp({}, t.ctx);
    withBlobsHex = toHex(t.chain.addBlock(fuluBlock(t, 3, (b) => void (b.message.body.blobKzgCommitments = [new Uint8Array(48).fill(0xc0)]))));
  });

  it("getBlobSidecars on fulu blocks: 400 naming getBlobs (the deprecated route ends at electra)", async () => {
    const res = await request(app).get("/eth/v1/beacon/blob_sidecars/head").expect(400);
    expect(res.body.code).toBe(400);
    expect(res.body.message).toContain("getBlobs");
  });

  describe("on an electra chain", () => {
    let te: TestContext;
    let electraApp: ReturnType<typeof createApp>;
    beforeAll(() => {
      te = createTestContext(64, "electra");
      electraApp = createApp({}, te.ctx);
    });

    it("getBlobSidecars: an empty list for a known block, with version; indices filter nothing more", async () => {
      const res = await request(electraApp).get("/eth/v1/beacon/blob_sidecars/head").expect(200);
      expect(res.headers["eth-consensus-version"]).toBe("electra");
      expect(res.body).toEqual({version: "electra", ...GENESIS_META, data: []});
      expect((await request(electraApp).get("/eth/v1/beacon/blob_sidecars/0?indices=0,1").expect(200)).body.data).toEqual([]);
    });

    it("getBlobSidecars as SSZ: the empty BlobSidecars list", async () => {
      const res = await binary(request(electraApp).get("/eth/v1/beacon/blob_sidecars/genesis").set("Accept", "application/octet-stream")).expect(200);
      expect(res.headers["content-type"]).toBe("application/octet-stream");
      expect(res.headers["eth-consensus-version"]).toBe("electra");
      expect(ssz.deneb.BlobSidecars.deserialize(new Uint8Array(res.body))).toEqual([]);
    });

    it("the API client reads the empty sidecar list back from an SSZ answer", async () => {
      const client = createApiClient(inProcessTransport(te.ctx));
      const sidecars = await client.request("getBlobSidecars", {blockId: "head"}, {format: "ssz"});
      expect(sidecars).toEqual({data: [], meta: {version: "electra", executionOptimistic: false, finalized: true}});
    });
  });

  it("the API client reads the empty blob list back from SSZ answers", async () => {
    const client = createApiClient(inProcessTransport(t.ctx));
    expect((await client.request("getBlobs", {blockId: 0}, {format: "ssz"})).data).toEqual([]);
    // over HTTP the empty SSZ answer arrives as no body at all
    const server = await startRestServer({port: 0, address: "127.0.0.1"}, t.ctx);
    try {
      const overHttp = createApiClient(httpTransport(`http://127.0.0.1:${server.port}`));
      expect((await overHttp.request("getBlobs", {blockId: "head"}, {format: "ssz"})).data).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("getBlobSidecars: 400 for malformed, out of range or repeated indices and ids; 404 for unknown blocks", async () => {
    const max = t.chain.config.getMaxBlobsPerBlock(0);
    expect((await request(app).get("/eth/v1/beacon/blob_sidecars/head?indices=x").expect(400)).body).toEqual({code: 400, message: "Invalid indices: x"});
    expect((await request(app).get(`/eth/v1/beacon/blob_sidecars/head?indices=${max}`).expect(400)).body).toEqual({code: 400, message: `Invalid blob index ${max}: must be below ${max}`});
    expect((await request(app).get("/eth/v1/beacon/blob_sidecars/head?indices=1&indices=1").expect(400)).body).toEqual({code: 400, message: "Duplicate value in indices: 1"});
    expect((await request(app).get("/eth/v1/beacon/blob_sidecars/head2").expect(400)).body).toEqual({code: 400, message: "Invalid block ID: head2"});
    expect((await request(app).get("/eth/v1/beacon/blob_sidecars/9").expect(404)).body).toEqual({code: 404, message: "Block not found"});
  });

  it("a block that commits to blobs the node does not keep: 404", async () => {
    const res = await request(app).get(`/eth/v1/beacon/blob_sidecars/${withBlobsHex}`).expect(404);
    expect(res.body).toEqual({code: 404, message: `Blob sidecars of block ${withBlobsHex} are not available on this node`});
    await request(app).get("/eth/v1/beacon/blobs/3").expect(404);
  });

  it("getBlobs: an empty list (JSON and SSZ); 400 for a malformed versioned hash, 404 for an unknown block", async () => {
    expect((await request(app).get("/eth/v1/beacon/blobs/head").expect(200)).body).toEqual({...GENESIS_META, data: []});
    expect((await request(app).get(`/eth/v1/beacon/blobs/0?versioned_hashes=0x01${"00".repeat(31)}`).expect(200)).body.data).toEqual([]);
    const asSsz = await binary(request(app).get("/eth/v1/beacon/blobs/head").set("Accept", "application/octet-stream")).expect(200);
    expect(ssz.deneb.Blobs.deserialize(new Uint8Array(asSsz.body))).toEqual([]);
    expect(asSsz.headers["eth-execution-optimistic"]).toBe("false");
    expect((await request(app).get("/eth/v1/beacon/blobs/head?versioned_hashes=0x12").expect(400)).body).toEqual({code: 400, message: "Invalid versioned_hashes: 0x12"});
    expect((await request(app).get(`/eth/v1/beacon/blobs/0x${"11".repeat(32)}`).expect(404)).body).toEqual({code: 404, message: "Block not found"});
  });
});
