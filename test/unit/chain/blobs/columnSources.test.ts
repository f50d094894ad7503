import {afterAll, describe, expect, it, jest} from "@jest/globals";
import {ssz, type fulu} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {DataAvailability} from "../../../../src/chain/blobs/dataAvailability.ts";
import {KzgThread} from "../../../../src/kzg/kzgThread.ts";
import {buildDataColumnSidecars, columnInclusionProofIsValid, columnSidecarsKzgValid} from "../../../../src/chain/blobs/sidecars.ts";
import type {BeaconDb} from "../../../../src/db/beaconDb.ts";
import type {ExecutionEngine} from "../../../../src/execution/engine.ts";
import {type RunningEngineServer, startEngineServer} from "../../../../src/execution/engineServer.ts";
import {HttpExecutionEngine} from "../../../../src/execution/httpEngine.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "../../../../src/execution/mockEngine.ts";
import {MockEngineRpc} from "../../../../src/execution/mockEngineRpc.ts";
import {blobBlock, config} from "./columnFixture.ts";

/**
 * Where a block's missing columns come from besides peers: reconstruction from half of them, and
 * the execution engine's blob pool (engine_getBlobsV2), each making the block available and
 * publishing the sampled columns the node lacked.
 */

jest.setTimeout(60_000);

const SAMPLED = [0, 1, 2, 3, 64, 65, 100, 127];
// one KZG thread for the file: each loads its own trusted setup, seconds on a loaded machine
const kzg = new KzgThread();
afterAll(() => kzg.close());

function dataAvailability(engine?: Pick<ExecutionEngine, "getBlobs">, waitMs = 60_000) {
  const da = new DataAvailability({config, db: {} as BeaconDb, engine, currentSlot: () => 3, waitMs, reconstructDelayMs: 0, kzg});
  da.setSamplingColumns(SAMPLED);
  const published: number[] = [];
  da.columnSources.setPublisher((sidecars) => published.push(...sidecars.map((s) => s.index)));
  return {da, published};
}

const rootOf = (block: fulu.SignedBeaconBlock) => ssz.fulu.BeaconBlock.hashTreeRoot(block.message);
// a block of one blob, the engines below never built it
const {block, blobs, proofs} = blobBlock("sources", 1);
const columns = buildDataColumnSidecars(config, block, blobs, proofs.flat());

describe("data columns rebuilt from half of them", () => {
  const {da, published} = dataAvailability();

  it("a node given the upper half of the columns rebuilds the sampled ones it lacks: the block is available, and those are published", async () => {
    const root = rootOf(block);
    da.addColumnSidecars(columns.slice(64));
    expect(da.missing(block, toRootHex(root))).toEqual({kind: "columns", indices: [0, 1, 2, 3]});
    await da.whenAvailable(block, root);
    expect(da.missing(block, toRootHex(root))).toBeNull();
    expect(published.sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
    for (const c of [0, 1, 2, 3]) expect(ssz.fulu.DataColumnSidecar.equals(da.pendingColumnSidecar(toRootHex(root), c)!, columns[c])).toBe(true);
    // the rebuilt columns it does not sample are served by root a while, not kept as its own
    expect(ssz.fulu.DataColumnSidecar.equals(da.pendingColumnSidecar(toRootHex(root), 10)!, columns[10])).toBe(true);
    expect(da.pendingColumns(toRootHex(root)).map((c) => c.index)).not.toContain(10);
  });

  it("with one column fewer than half, nothing is rebuilt and the block is not available", async () => {
    const {da: other, published: none} = dataAvailability(undefined, 300);
    other.addColumnSidecars(columns.slice(65));
    await expect(other.whenAvailable(block, rootOf(block))).rejects.toThrow(/data column sidecars 0,1,2,3,64 of block .* are not available/);
    expect(none).toEqual([]);
  });
});

describe("data columns from the execution engine's blobs (engine_getBlobsV2)", () => {
  const SECRET = new Uint8Array(32).fill(9);
  let server: RunningEngineServer;
  let engine: HttpExecutionEngine;

  afterAll(async () => {
    engine?.stop();
    await server?.close();
  });

  it("a block whose blobs the engine holds becomes available at once: its sampled columns are built, valid, and published", async () => {
    // the mock engine over real HTTP, as `beacon-gateway mock-engine` serves it: its pool holds the blobs it built
    server = await startEngineServer({port: 0, jwtSecret: SECRET, rpc: new MockEngineRpc(new MockExecutionEngine({blobsPerBlock: 2}))});
    engine = new HttpExecutionEngine({url: `http://127.0.0.1:${server.port}`, jwtSecret: SECRET});
    const attributes = {timestamp: 10, prevRandao: new Uint8Array(32), suggestedFeeRecipient: new Uint8Array(20), withdrawals: [], parentBeaconBlockRoot: new Uint8Array(32)};
    const built = await engine.buildPayload("fulu", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 30_000_000}, attributes);
    const elBlock = ssz.fulu.SignedBeaconBlock.defaultValue();
    elBlock.message.slot = 3;
    elBlock.message.body.executionPayload = built.payload as fulu.SignedBeaconBlock["message"]["body"]["executionPayload"];
    elBlock.message.body.blobKzgCommitments = built.blobsBundle.commitments;

    const {da, published} = dataAvailability(engine);
    const root = rootOf(elBlock);
    await da.whenAvailable(elBlock, root); // the wait would be 60 s: only the engine's blobs can make it
    const held = SAMPLED.map((c) => da.pendingColumnSidecar(toRootHex(root), c)!);
    // the same columns as those of the block's own blobs bundle (getPayload), and valid by the p2p spec's checks
    const expected = buildDataColumnSidecars(config, elBlock, built.blobsBundle.blobs, built.blobsBundle.proofs);
    for (const [i, c] of SAMPLED.entries()) expect(ssz.fulu.DataColumnSidecar.equals(held[i], expected[c])).toBe(true);
    expect(columnSidecarsKzgValid(held)).toBe(true);
    expect(held.every((s) => columnInclusionProofIsValid(config, s))).toBe(true);
    expect(published.sort((a, b) => a - b)).toEqual(SAMPLED);
    // columns it does not sample are not kept from the engine's blobs
    expect(da.pendingColumnSidecar(toRootHex(root), 10)).toBeNull();
  });

  it("a block with a blob the engine lacks (getBlobsV2 answers null) waits for its columns", async () => {
    const {da, published} = dataAvailability(engine, 300);
    await expect(da.whenAvailable(block, rootOf(block))).rejects.toThrow(/are not available/);
    expect(published).toEqual([]);
  });
});
