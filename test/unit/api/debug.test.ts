import {beforeAll, describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import request from "supertest";
import {createApiClient} from "../../../src/api/client.ts";
import {createApp, inProcessTransport} from "../../../src/api/server/index.ts";
import type {ProtoBlock} from "../../../src/forkchoice/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";
import {binary, collectBytes} from "./binary.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

describe("debug states", () => {
  it("serves the whole state as JSON, with version", async () => {
    const res = await request(app).get("/eth/v2/debug/beacon/states/head").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body.version).toBe("fulu");
    expect(res.body.data).toEqual(ssz.fulu.BeaconState.toJson(t.state.toValue() as never));
    expect(res.body.data.validators).toHaveLength(64);
  });

  it("serves it as SSZ with the same root", async () => {
    const res = await request(app)
      .get("/eth/v2/debug/beacon/states/genesis")
      .set("Accept", "application/octet-stream")
      .buffer(true)
      .parse(collectBytes)
      .expect(200);
    const state = ssz.fulu.BeaconState.deserialize(new Uint8Array(res.body));
    expect(ssz.fulu.BeaconState.hashTreeRoot(state)).toEqual(t.state.hashTreeRoot());
  });

  it("answers 404 for an unknown state and 400 for a malformed id", async () => {
    expect((await request(app).get("/eth/v2/debug/beacon/states/0x" + "ab".repeat(32)).expect(404)).body.code).toBe(404);
    expect((await request(app).get("/eth/v2/debug/beacon/states/nonsense").expect(400)).body.code).toBe(400);
  });
});


describe("debug state v1 (phase0 states only)", () => {
  it("serves a phase0 state as JSON and SSZ", async () => {
    const p = createTestContext(64, "phase0");
    const phase0App = createApp({}, p.ctx);
    const res = await request(phase0App).get("/eth/v1/debug/beacon/states/head").expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: ssz.phase0.BeaconState.toJson(p.state.toValue() as never)});
    expect(res.body.data.validators).toHaveLength(64);
    const bytes = await binary(request(phase0App).get("/eth/v1/debug/beacon/states/genesis").set("Accept", "application/octet-stream")).expect(200);
    expect(ssz.phase0.BeaconState.hashTreeRoot(ssz.phase0.BeaconState.deserialize(new Uint8Array(bytes.body)))).toEqual(p.state.hashTreeRoot());
  });

  it("answers 400 naming v2 for a later fork's state; 404 unknown, 400 malformed", async () => {
    const res = await request(app).get("/eth/v1/debug/beacon/states/head").expect(400);
    expect(res.body).toEqual({
      code: 400,
      message: "getState serves phase0 states only, and the state at slot 0 is fulu: use GET /eth/v2/debug/beacon/states/{state_id} (getStateV2)",
    });
    expect((await request(app).get("/eth/v1/debug/beacon/states/0x" + "ab".repeat(32)).expect(404)).body).toEqual({code: 404, message: "State not found"});
    expect((await request(app).get("/eth/v1/debug/beacon/states/tip").expect(400)).body).toEqual({code: 400, message: "Invalid state ID: tip"});
  });
});

describe("fork choice: chain heads and the node dump", () => {
  let f: TestContext;
  let fApp: ReturnType<typeof createApp>;
  let genesisHex: string;
  /** genesis with two children: A (slot 1, valid, three votes) and B (slot 2, optimistic) */
  let a: ProtoBlock;
  let b: ProtoBlock;

  const child = (parent: ProtoBlock, slot: number, fill: number): ProtoBlock => ({
    ...parent,
    slot,
    blockRoot: toRootHex(new Uint8Array(32).fill(fill)),
    parentRoot: parent.blockRoot,
    stateRoot: toRootHex(new Uint8Array(32).fill(fill + 1)),
    executionBlockHash: toRootHex(new Uint8Array(32).fill(fill + 2)),
  });

  beforeAll(() => {
    f = createTestContext();
    fApp = createApp({}, f.ctx);
    genesisHex = toHex(f.chain.genesisRoot);
  });

  it("getDebugChainHeadsV2 and v1: the genesis block alone at first", async () => {
    expect((await request(fApp).get("/eth/v2/debug/beacon/heads").expect(200)).body).toEqual({data: [{root: genesisHex, slot: "0", execution_optimistic: false}]});
    expect((await request(fApp).get("/eth/v1/debug/beacon/heads").expect(200)).body).toEqual({data: [{root: genesisHex, slot: "0"}]});
  });

  it("getDebugChainHeadsV2 lists every leaf with execution_optimistic; v1 without it", async () => {
    const fc = f.chain.forkChoice;
    const anchor = fc.getBlock(genesisHex)!;
    a = child(anchor, 1, 0xa0);
    b = child(anchor, 2, 0xb0);
    fc.onTick(3);
    fc.onBlock(a, {isTimely: false});
    fc.onBlock(b, {isTimely: false, optimistic: true});
    for (const index of [0, 1, 2]) fc.onAttestation(index, a.blockRoot, 0, 1);
    fc.updateHead();
    const v2 = await request(fApp).get("/eth/v2/debug/beacon/heads").expect(200);
    expect(v2.body).toEqual({
      data: [
        {root: a.blockRoot, slot: "1", execution_optimistic: false},
        {root: b.blockRoot, slot: "2", execution_optimistic: true},
      ],
    });
    const v1 = await request(fApp).get("/eth/v1/debug/beacon/heads").expect(200);
    expect(v1.body).toEqual({data: [{root: a.blockRoot, slot: "1"}, {root: b.blockRoot, slot: "2"}]});
  });

  it("getDebugForkChoice: checkpoints and every node (weight in Gwei, validity, payload hash, extra data), not wrapped in data", async () => {
    const res = await request(fApp).get("/eth/v1/debug/fork_choice").expect(200);
    const checkpoint = {epoch: "0", root: genesisHex};
    const votes = String(3 * 32_000_000_000);
    const extra = (n: ProtoBlock) => ({
      state_root: n.stateRoot,
      target_root: n.targetRoot,
      justified_root: genesisHex,
      finalized_root: genesisHex,
      unrealized_justified_epoch: "0",
      unrealized_justified_root: genesisHex,
      unrealized_finalized_epoch: "0",
      unrealized_finalized_root: genesisHex,
    });
    const node = (n: ProtoBlock, weight: string, validity: string) => ({
      slot: String(n.slot),
      block_root: n.blockRoot,
      parent_root: n.parentRoot,
      justified_epoch: "0",
      finalized_epoch: "0",
      weight,
      validity,
      execution_block_hash: n.executionBlockHash,
      extra_data: extra(n),
    });
    const genesis = f.chain.forkChoice.getBlock(genesisHex)!;
    expect(genesis.executionBlockHash).toBe(toHex((f.state as unknown as {latestExecutionPayloadHeader: {blockHash: Uint8Array}}).latestExecutionPayloadHeader.blockHash));
    expect(res.body).toEqual({
      justified_checkpoint: checkpoint,
      finalized_checkpoint: checkpoint,
      fork_choice_nodes: [node(genesis, votes, "valid"), node(a, votes, "valid"), node(b, "0", "optimistic")],
    });
  });

  it("the API client reads the unwrapped dump back", async () => {
    const {data} = await createApiClient(inProcessTransport(f.ctx)).request("getDebugForkChoice", {});
    expect(data.finalizedCheckpoint.epoch).toBe(0);
    expect(data.nodes.map((n) => toHex(n.blockRoot))).toEqual([genesisHex, a.blockRoot, b.blockRoot]);
    expect(data.nodes.map((n) => [n.weight, n.validity])).toEqual([[96_000_000_000n, "valid"], [96_000_000_000n, "valid"], [0n, "optimistic"]]);
    expect(data.nodes[2].extraData.state_root).toBe(b.stateRoot);
  });
});

describe("data column sidecars (the dev chain has no blobs)", () => {
  it("an empty list with version for a known block, JSON and SSZ", async () => {
    const res = await request(app).get("/eth/v1/debug/beacon/data_column_sidecars/head?indices=0,127").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", execution_optimistic: false, finalized: true, data: []});
    const bytes = await binary(request(app).get("/eth/v1/debug/beacon/data_column_sidecars/genesis").set("Accept", "application/octet-stream")).expect(200);
    expect(ssz.fulu.DataColumnSidecars.deserialize(new Uint8Array(bytes.body))).toEqual([]);
  });

  it("400 for malformed or out-of-range indices and malformed ids; 404 for unknown blocks", async () => {
    const get = (path: string) => request(app).get(`/eth/v1/debug/beacon/data_column_sidecars/${path}`);
    expect((await get("head?indices=128").expect(400)).body).toEqual({code: 400, message: "Invalid column index 128: must be below 128"});
    expect((await get("head?indices=a").expect(400)).body).toEqual({code: 400, message: "Invalid indices: a"});
    expect((await get("justified").expect(400)).body).toEqual({code: 400, message: "Invalid block ID: justified"});
    expect((await get("4").expect(404)).body).toEqual({code: 404, message: "Block not found"});
  });
});
