import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {EngineUnavailableError} from "../../../src/execution/engine.ts";
import {kzgCommitmentToVersionedHash} from "../../../src/execution/engineJson.ts";
import {type RunningEngineServer, startEngineServer} from "../../../src/execution/engineServer.ts";
import {EngineRpcError, HttpExecutionEngine} from "../../../src/execution/httpEngine.ts";
import {createJwt} from "../../../src/execution/jwt.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "../../../src/execution/mockEngine.ts";
import {MockEngineRpc} from "../../../src/execution/mockEngineRpc.ts";

/**
 * `beacon-gateway mock-engine`'s server, driven over real HTTP by the node's Engine API client:
 * payloads built and judged through the wire, verdicts imposed for tests, JWT enforced.
 */

const SECRET = new Uint8Array(32).fill(3);
const hex = (b: Uint8Array) => "0x" + Buffer.from(b).toString("hex");
const attrs = (timestamp: number) => ({
  timestamp,
  prevRandao: new Uint8Array(32).fill(timestamp),
  suggestedFeeRecipient: new Uint8Array(20).fill(0xfe),
  withdrawals: [],
  parentBeaconBlockRoot: new Uint8Array(32),
});
const context = {versionedHashes: [], parentBeaconBlockRoot: new Uint8Array(32), executionRequests: {deposits: [], withdrawals: [], consolidations: []}};

describe("mock engine over the Engine API", () => {
  let server: RunningEngineServer;
  let url: string;
  let client: HttpExecutionEngine;

  async function admin(params: unknown): Promise<unknown> {
    const res = await fetch(url, {
      method: "POST",
      headers: {"content-type": "application/json", authorization: `Bearer ${createJwt(SECRET, Date.now() / 1000)}`},
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "mock_setPayloadStatus", params: [params]}),
    });
    return res.json();
  }

  async function build(parent: {blockHash: Uint8Array; blockNumber: number}, timestamp: number, fork = "fulu") {
    return (await client.buildPayload(fork, {...parent, gasLimit: 30_000_000}, attrs(timestamp))).payload;
  }

  beforeAll(async () => {
    server = await startEngineServer({port: 0, jwtSecret: SECRET, rpc: new MockEngineRpc(new MockExecutionEngine())});
    url = `http://127.0.0.1:${server.port}`;
    client = new HttpExecutionEngine({url, jwtSecret: SECRET});
  });

  afterAll(async () => {
    client.stop();
    await server.close();
  });

  it("builds payloads with the proposer's fee recipient that chain on each other, and judges them VALID", async () => {
    expect(await client.exchangeCapabilities()).toEqual(expect.arrayContaining(["engine_newPayloadV4", "engine_getPayloadV5", "engine_getBlobsV2"]));
    const first = await build({blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0}, 10);
    expect(first.blockNumber).toBe(1);
    expect(hex(first.feeRecipient)).toBe("0x" + "fe".repeat(20));
    expect(await client.notifyNewPayload("fulu", first, context)).toMatchObject({status: "VALID"});
    const second = await build(first, 11);
    expect(hex(second.parentHash)).toBe(hex(first.blockHash));
    const status = await client.notifyForkchoiceUpdate(second.blockHash, first.blockHash, GENESIS_EXECUTION_BLOCK_HASH, "fulu");
    expect(status.status).toBe("VALID");
  });

  it("keeps the blobs it built for getBlobsV2, with their cell proofs", async () => {
    const withBlobs = new MockExecutionEngine({blobsPerBlock: 1});
    // loads KZG's trusted setup, as `mock-engine --blobs-per-block` does before it serves
    await withBlobs.buildPayload("fulu", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 1}, attrs(1));
    const blobServer = await startEngineServer({port: 0, jwtSecret: SECRET, rpc: new MockEngineRpc(withBlobs)});
    const client = new HttpExecutionEngine({url: `http://127.0.0.1:${blobServer.port}`, jwtSecret: SECRET});
    try {
      const built = await client.buildPayload("fulu", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 1}, attrs(40));
      expect(built.blobsBundle.blobs).toHaveLength(1);
      const hash = kzgCommitmentToVersionedHash(built.blobsBundle.commitments[0]);
      const blobs = await client.getBlobs("fulu", [hash]);
      expect(blobs?.[0]?.blob).toEqual(built.blobsBundle.blobs[0]);
      expect(blobs?.[0]?.proofs).toHaveLength(128);
      expect(await client.getBlobs("fulu", [hash, new Uint8Array(32)])).toBeNull();
    } finally {
      client.stop();
      await blobServer.close();
    }
  }, 30_000);

  it("answers an imposed INVALID with the parent as latest valid hash, on newPayload and on forkchoiceUpdated of descendants", async () => {
    const first = await build({blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0}, 20);
    const second = await build(first, 21);
    const third = await build(second, 22);
    expect(await admin({blockHash: hex(second.blockHash), status: "INVALID"})).toMatchObject({result: true});
    const verdict = await client.notifyNewPayload("fulu", second, context);
    expect(verdict.status).toBe("INVALID");
    expect(hex(verdict.latestValidHash!)).toBe(hex(first.blockHash));
    const onDescendant = await client.notifyForkchoiceUpdate(third.blockHash, first.blockHash, first.blockHash, "fulu");
    expect(onDescendant.status).toBe("INVALID");
    expect(hex(onDescendant.latestValidHash!)).toBe(hex(first.blockHash));
    expect((await client.notifyForkchoiceUpdate(first.blockHash, first.blockHash, first.blockHash, "fulu")).status).toBe("VALID");
  });

  it("answers an imposed SYNCING by block number, and builds on heads from before it started", async () => {
    const first = await build({blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0}, 30);
    // a verdict by number holds for the first payload of that number seen afterwards, and for no other
    await admin({blockNumber: "0x2", status: "SYNCING"});
    const second = await build(first, 31);
    const sibling = await build(first, 32);
    expect(await client.notifyNewPayload("fulu", second, context)).toMatchObject({status: "SYNCING", latestValidHash: null});
    expect((await client.notifyForkchoiceUpdate(second.blockHash, first.blockHash, first.blockHash, "fulu")).status).toBe("SYNCING");
    expect(await client.notifyNewPayload("fulu", sibling, context)).toMatchObject({status: "VALID"});
    // a later verdict by the same number changes that payload's
    await admin({blockNumber: "0x2", status: "INVALID"});
    expect(await client.notifyNewPayload("fulu", second, context)).toMatchObject({status: "INVALID", latestValidHash: first.blockHash});
    const unknownHead = new Uint8Array(32).fill(9);
    const onUnknown = await build({blockHash: unknownHead, blockNumber: 0}, 33);
    expect(hex(onUnknown.parentHash)).toBe(hex(unknownHead));
    expect(await client.notifyNewPayload("fulu", onUnknown, context)).toMatchObject({status: "VALID"});
    expect(await admin({blockNumber: "0x2", status: "MAYBE"})).toMatchObject({error: {code: -32602}});
  });

  it("refuses requests without the right JWT, and malformed calls with JSON-RPC errors", async () => {
    const stranger = new HttpExecutionEngine({url, jwtSecret: new Uint8Array(32).fill(4)});
    await expect(stranger.exchangeCapabilities()).rejects.toBeInstanceOf(EngineUnavailableError);
    expect(stranger.isOffline()).toBe(true);
    stranger.stop();
    const noToken = await fetch(url, {method: "POST", body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "engine_exchangeCapabilities", params: [[]]})});
    expect(noToken.status).toBe(401);
    const badPayload = client.notifyNewPayload("capella", {...(await build({blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0}, 50, "capella")), feeRecipient: new Uint8Array(3)});
    await expect(badPayload).rejects.toMatchObject({code: -32602});
    await expect(badPayload).rejects.toBeInstanceOf(EngineRpcError);
  });
});
