import {VALIDATOR_STATUSES, type ValidatorResponse, ValidatorResponseType, writeValidatorResponse} from "../../../src/api/routes/beacon.ts";
import {writtenList} from "../../../src/api/asciiJson.ts";
import {prng} from "../../../bench/seededRandom.ts";
import {describe, it, expect, beforeAll, beforeEach} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {blockError, createTestContext, type TestContext} from "./testContext.ts";
import {binary} from "./binary.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;
let genesisRootHex: string;
let stateRootHex: string;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
  genesisRootHex = toHex(t.chain.genesisRoot);
  stateRootHex = toHex(t.state.hashTreeRoot());
});


describe("genesis and states", () => {
  it("getGenesis", async () => {
    const res = await request(app).get("/eth/v1/beacon/genesis").expect(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      data: {genesis_time: String(t.state.genesisTime), genesis_validators_root: toHex(t.state.genesisValidatorsRoot), genesis_fork_version: "0x00000001"},
    });
  });

  it("the double's genesis block is the block the genesis state's header stands for", async () => {
    const {latestBlockRoot} = await import("../../../src/duties/index.ts");
    expect(toHex(latestBlockRoot(t.state))).toBe(genesisRootHex);
  });

  it.each(["head", "genesis", "finalized", "justified", "0"])("getStateRoot resolves %s", async (id) => {
    const res = await request(app).get(`/eth/v1/beacon/states/${id}/root`).expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: {root: stateRootHex}});
  });

  it("getStateRoot resolves a state root (uppercase hex too)", async () => {
    const res = await request(app).get(`/eth/v1/beacon/states/${stateRootHex.toUpperCase().replace("0X", "0x")}/root`).expect(200);
    expect(res.body.data.root).toBe(stateRootHex);
  });

  it.each(["current", "-1", "0x1234", "1.5", "Head"])("getStateRoot rejects the malformed id %s with 400", async (id) => {
    const res = await request(app).get(`/eth/v1/beacon/states/${id}/root`).expect(400);
    expect(res.body).toEqual({code: 400, message: `Invalid state ID: ${id}`});
  });

  it.each(["0x" + "ab".repeat(32), "100"])("getStateRoot answers 404 for the unknown state %s", async (id) => {
    const res = await request(app).get(`/eth/v1/beacon/states/${id}/root`).expect(404);
    expect(res.body).toEqual({code: 404, message: "State not found"});
  });

  it("getStateFork", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/fork").expect(200);
    expect(res.body.data).toEqual({previous_version: toHex(t.state.fork.previousVersion), current_version: "0x06000001", epoch: "0"});
  });

  it("getStateFinalityCheckpoints", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/finality_checkpoints").expect(200);
    const zero = {epoch: "0", root: "0x" + "00".repeat(32)};
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: {previous_justified: zero, current_justified: zero, finalized: zero}});
  });
});

describe("validators", () => {
  const pubkeyHex = (i: number) => toHex(t.state.validators.getReadonly(i).pubkey);

  it("getStateValidators lists every validator with index, balance, status and record", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/validators").expect(200);
    expect(res.body.data).toHaveLength(64);
    expect(res.body.data[5]).toEqual({
      index: "5",
      balance: "32000000000",
      status: "active_ongoing",
      validator: expect.objectContaining({pubkey: pubkeyHex(5), exit_epoch: "18446744073709551615", activation_epoch: "0", slashed: false}),
    });
  });

  it("getStateValidators filters by index and public key, in both list forms, ignoring unknown ids", async () => {
    const repeated = await request(app).get(`/eth/v1/beacon/states/head/validators?id=3&id=${pubkeyHex(9)}&id=9999`).expect(200);
    const commas = await request(app).get(`/eth/v1/beacon/states/head/validators?id=3,${pubkeyHex(9)},9999`).expect(200);
    expect(repeated.body.data.map((v: {index: string}) => v.index)).toEqual(["3", "9"]);
    expect(commas.body).toEqual(repeated.body);
  });

  it("getStateValidators filters by specific and general status", async () => {
    const active = await request(app).get("/eth/v1/beacon/states/head/validators?status=active").expect(200);
    const ongoing = await request(app).get("/eth/v1/beacon/states/head/validators?status=active_ongoing&id=1").expect(200);
    const pending = await request(app).get("/eth/v1/beacon/states/head/validators?status=pending,exited").expect(200);
    expect(active.body.data).toHaveLength(64);
    expect(ongoing.body.data).toHaveLength(1);
    expect(pending.body.data).toEqual([]);
  });

  it("getStateValidators rejects a bad status (400) and more than 64 ids (414)", async () => {
    const bad = await request(app).get("/eth/v1/beacon/states/head/validators?status=sleeping").expect(400);
    expect(bad.body).toEqual({code: 400, message: "Invalid status: sleeping"});
    const ids = Array.from({length: 65}, (_, i) => i).join(",");
    const tooMany = await request(app).get(`/eth/v1/beacon/states/head/validators?id=${ids}`).expect(414);
    expect(tooMany.body.code).toBe(414);
  });

  it("postStateValidators takes the filters in the body; empty or null lists mean no filter", async () => {
    const res = await request(app).post("/eth/v1/beacon/states/head/validators").send({ids: ["1", pubkeyHex(2)], statuses: ["active"]}).expect(200);
    expect(res.body.data.map((v: {index: string}) => v.index)).toEqual(["1", "2"]);
    const all = await request(app).post("/eth/v1/beacon/states/head/validators").send({ids: null}).expect(200);
    expect(all.body.data).toHaveLength(64);
  });

  it("postStateValidators rejects malformed ids and non-object bodies with 400", async () => {
    const res = await request(app).post("/eth/v1/beacon/states/head/validators").send({ids: ["0x12"]}).expect(400);
    expect(res.body.message).toMatch(/^Invalid request body: invalid ids item 0/);
    await request(app).post("/eth/v1/beacon/states/head/validators").send([1]).expect(400);
  });

  it("getStateValidator by index and by public key; 404 when unknown, 400 when malformed", async () => {
    const byIndex = await request(app).get("/eth/v1/beacon/states/head/validators/7").expect(200);
    const byKey = await request(app).get(`/eth/v1/beacon/states/head/validators/${pubkeyHex(7)}`).expect(200);
    expect(byKey.body).toEqual(byIndex.body);
    expect(byIndex.body.data.index).toBe("7");
    expect((await request(app).get("/eth/v1/beacon/states/head/validators/64").expect(404)).body).toEqual({code: 404, message: "Validator not found"});
    expect((await request(app).get("/eth/v1/beacon/states/head/validators/abc").expect(400)).body.message).toBe("Invalid validator ID: abc");
  });
});

describe("blocks", () => {
  it.each(["head", "genesis", "finalized", "0"])("getBlockRoot resolves %s to the genesis block", async (id) => {
    const res = await request(app).get(`/eth/v1/beacon/blocks/${id}/root`).expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: {root: genesisRootHex}});
  });

  it("getBlockRoot: 400 for a state-only id, 404 for an empty slot or unknown root", async () => {
    expect((await request(app).get("/eth/v1/beacon/blocks/justified/root").expect(400)).body.message).toBe("Invalid block ID: justified");
    await request(app).get("/eth/v1/beacon/blocks/5/root").expect(404);
    const res = await request(app).get(`/eth/v1/beacon/blocks/0x${"11".repeat(32)}/root`).expect(404);
    expect(res.body).toEqual({code: 404, message: "Block not found"});
  });

  it("getBlockHeader gives the signed header of the block", async () => {
    const res = await request(app).get(`/eth/v1/beacon/headers/${genesisRootHex}`).expect(200);
    expect(res.body.data).toEqual({
      root: genesisRootHex,
      canonical: true,
      header: {
        message: {
          slot: "0",
          proposer_index: "0",
          parent_root: "0x" + "00".repeat(32),
          state_root: stateRootHex,
          body_root: toHex(ssz.fulu.BeaconBlockBody.hashTreeRoot(t.chain.genesisBlock.message.body)),
        },
        signature: "0x" + "00".repeat(96),
      },
    });
  });

  it("getBlockHeaders: the head by default, by slot, by parent root", async () => {
    const head = await request(app).get("/eth/v1/beacon/headers").expect(200);
    expect(head.body.data.map((h: {root: string}) => h.root)).toEqual([genesisRootHex]);
    expect((await request(app).get("/eth/v1/beacon/headers?slot=0").expect(200)).body.data).toHaveLength(1);
    expect((await request(app).get("/eth/v1/beacon/headers?slot=3").expect(200)).body).toEqual({execution_optimistic: false, finalized: false, data: []});
    expect((await request(app).get(`/eth/v1/beacon/headers?parent_root=${genesisRootHex}`).expect(200)).body.data).toEqual([]);
    expect((await request(app).get("/eth/v1/beacon/headers?slot=x").expect(400)).body.message).toBe("Invalid slot: x");
  });

  it("getBlockV2 as JSON carries version in body and header", async () => {
    const res = await request(app).get("/eth/v2/beacon/blocks/head").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", execution_optimistic: false, finalized: true, data: ssz.fulu.SignedBeaconBlock.toJson(t.chain.genesisBlock)});
  });

  it("getBlockV2 as SSZ round-trips the block", async () => {
    const res = await binary(request(app).get("/eth/v2/beacon/blocks/0").set("Accept", "application/octet-stream;q=1.0,application/json;q=0.9")).expect(200);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    const block = ssz.fulu.SignedBeaconBlock.deserialize(new Uint8Array(res.body));
    expect(ssz.fulu.SignedBeaconBlock.toJson(block)).toEqual(ssz.fulu.SignedBeaconBlock.toJson(t.chain.genesisBlock));
  });

  it("getBlockV2 answers 406 to an Accept it cannot serve", async () => {
    const res = await request(app).get("/eth/v2/beacon/blocks/head").set("Accept", "text/html").expect(406);
    expect(res.body).toEqual({code: 406, message: "Accepted media type not supported"});
  });
});

describe("publishing blocks", () => {
  const signedBlock = () => {
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.slot = 1;
    block.message.parentRoot = t.chain.genesisRoot;
    return block;
  };
  const contentsJson = () => ssz.fulu.SignedBlockContents.toJson({signedBlock: signedBlock(), kzgProofs: [], blobs: []});

  beforeEach(() => {
    t.chain.importError = null;
    t.chain.imported.length = 0;
  });

  it("publishBlockV2 imports a JSON block (200)", async () => {
    await request(app).post("/eth/v2/beacon/blocks").set("Eth-Consensus-Version", "fulu").send(contentsJson()).expect(200);
    expect(t.chain.imported).toEqual([signedBlock()]);
  });

  it("publishBlockV2 imports an SSZ block (200)", async () => {
    const bytes = ssz.fulu.SignedBlockContents.serialize({signedBlock: signedBlock(), kzgProofs: [], blobs: []});
    await request(app).post("/eth/v2/beacon/blocks").set("Eth-Consensus-Version", "fulu").set("Content-Type", "application/octet-stream").send(Buffer.from(bytes)).expect(200);
    expect(t.chain.imported).toEqual([signedBlock()]);
  });

  it("publishBlockV2 needs a known Eth-Consensus-Version matching the block", async () => {
    const missing = await request(app).post("/eth/v2/beacon/blocks").send(contentsJson()).expect(400);
    expect(missing.body.message).toBe("Missing required parameter Eth-Consensus-Version");
    await request(app).post("/eth/v2/beacon/blocks").set("Eth-Consensus-Version", "gloas").send(contentsJson()).expect(400);
    const wrong = await request(app).post("/eth/v2/beacon/blocks").set("Eth-Consensus-Version", "electra").send(ssz.electra.SignedBlockContents.toJson({signedBlock: signedBlock(), kzgProofs: [], blobs: []})).expect(400);
    expect(wrong.body.message).toMatch(/does not match the fork of slot 1 \(fulu\)/);
    expect(t.chain.imported).toEqual([]);
  });

  it("publishBlockV2 rejects malformed bodies (400), other media types (415) and bad broadcast_validation (400)", async () => {
    const post = () => request(app).post("/eth/v2/beacon/blocks").set("Eth-Consensus-Version", "fulu");
    expect((await post().set("Content-Type", "application/json").send("{not json").expect(400)).body.message).toMatch(/^Invalid JSON body/);
    expect((await post().send({signed_block: {}}).expect(400)).body.message).toMatch(/^Invalid request body/);
    expect((await post().set("Content-Type", "text/plain").send("hello").expect(415)).body).toEqual({code: 415, message: "Unsupported Content-Type: text/plain"});
    await request(app).post("/eth/v2/beacon/blocks?broadcast_validation=all").set("Eth-Consensus-Version", "fulu").send(contentsJson()).expect(400);
  });

  it("publishBlockV2 maps import failures: gossip-level 400, consensus-level 202 under gossip validation, known block 200", async () => {
    const post = (query = "") => request(app).post(`/eth/v2/beacon/blocks${query}`).set("Eth-Consensus-Version", "fulu").send(contentsJson());
    t.chain.importError = blockError("INVALID_SIGNATURE", "proposer signature");
    expect((await post().expect(400)).body.message).toBe("Invalid block: INVALID_SIGNATURE: proposer signature");
    t.chain.importError = blockError("STATE_TRANSITION_FAILED", "bad");
    await post().expect(202);
    await post("?broadcast_validation=consensus").expect(400);
    t.chain.importError = blockError("ALREADY_KNOWN", "seen");
    await post().expect(200);
  });

  it("publishBlock (v1) tells the fork by the block's slot when the header is absent", async () => {
    await request(app).post("/eth/v1/beacon/blocks").send(contentsJson()).expect(200);
    expect(t.chain.imported).toHaveLength(1);
  });
});

describe("a validator's JSON text", () => {
  it("is exactly what ssz toJson and JSON.stringify give, for seeded random validators", () => {
    const random = prng(11);
    const epoch = () => (random() < 0.3 ? Infinity : Math.floor(random() * 2 ** 40));
    const bytes = (n: number) => Uint8Array.from({length: n}, () => Math.floor(random() * 256));
    const list: ValidatorResponse[] = [];
    for (let i = 0; i < 500; i++) {
      const v: ValidatorResponse = {
        index: Math.floor(random() * 2 ** 40),
        balance: random() < 0.1 ? 0 : Math.floor(random() * 2 ** 52),
        status: VALIDATOR_STATUSES[i % VALIDATOR_STATUSES.length],
        validator: {
          pubkey: bytes(48),
          withdrawalCredentials: bytes(32),
          effectiveBalance: Math.floor(random() * 2 ** 45),
          slashed: random() < 0.5,
          activationEligibilityEpoch: epoch(),
          activationEpoch: epoch(),
          exitEpoch: epoch(),
          withdrawableEpoch: epoch(),
        },
      };
      list.push(v);
      expect([...writtenList([v], writeValidatorResponse)].join("")).toBe(JSON.stringify([ValidatorResponseType.toJson(v)]));
    }
    // the whole list, cut into pieces of any size
    for (const pieceChars of [1, 7, 500, 100_000]) {
      expect([...writtenList(list, writeValidatorResponse, pieceChars)].join("")).toBe(JSON.stringify(list.map((v) => ValidatorResponseType.toJson(v))));
    }
  });
});
