import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type ExecutionPayload, type SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {ApiError} from "../../../src/api/errors.ts";
import type {ApiContext} from "../../../src/api/impl/context.ts";
import {nodeHandlers} from "../../../src/api/impl/node.ts";
import {resolveBlock} from "../../../src/api/impl/resolve.ts";
import {validatorHandlers} from "../../../src/api/impl/validator.ts";
import type {BeaconChain} from "../../../src/chain/beaconChain.ts";
import {initChain} from "../../../src/chain/init.ts";
import {BlockError} from "../../../src/chain/interface.ts";
import {Clock} from "../../../src/clock/clock.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {type BuiltPayload, EngineUnavailableError, type ExecutionEngine, type PayloadStatus} from "../../../src/execution/engine.ts";
import {MockExecutionEngine} from "../../../src/execution/mockEngine.ts";

/**
 * The chain's handling of the engine's payload statuses (consensus-specs sync/optimistic.md,
 * engine-api paris.md): SYNCING and ACCEPTED import optimistically (the API says so and
 * validators get 503), INVALID rejects the block or invalidates it and its descendants, an
 * unreachable engine rejects without changing anything. What the engine said survives a restart.
 */

const SECONDS_PER_SLOT = 2;

/** The mock engine, with the answers a test sets for newPayload and forkchoiceUpdated. */
class ScriptedEngine implements ExecutionEngine {
  private readonly mock = new MockExecutionEngine();
  newPayloadAnswer: PayloadStatus | "unavailable" | null = null;
  forkchoiceAnswer: PayloadStatus | null = null;

  async notifyNewPayload(fork: string, payload: ExecutionPayload): Promise<PayloadStatus> {
    if (this.newPayloadAnswer === "unavailable") throw new EngineUnavailableError("engine_newPayloadV4: connect ECONNREFUSED");
    return this.newPayloadAnswer ?? this.mock.notifyNewPayload(fork, payload);
  }

  async notifyForkchoiceUpdate(): Promise<PayloadStatus | void> {
    return this.forkchoiceAnswer ?? undefined;
  }

  buildPayload(...args: Parameters<ExecutionEngine["buildPayload"]>): Promise<BuiltPayload> {
    return this.mock.buildPayload(...args);
  }
}

describe("payload statuses", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-optimistic-"));
  const chainConfig = devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}});
  const engine = new ScriptedEngine();
  let db: BeaconDb;
  let chain: BeaconChain;
  let ctx: ApiContext;
  const genesisTime = Math.floor(Date.now() / 1000) - 20 * SECONDS_PER_SLOT;

  /** The chain on the database as it is: a new one at first, the same one re-read after a restart. */
  async function startChain(): Promise<void> {
    chain = await initChain(chainConfig, db, engine, (t) => new Clock(t, SECONDS_PER_SLOT, 8), {validatorCount: 64, genesisTime}, {
      graffiti: () => new Uint8Array(32),
      feeRecipientOf: () => new Uint8Array(20),
    });
    ctx = {chain, pools: chain.pools, node: {} as ApiContext["node"]};
  }

  async function restart(): Promise<void> {
    await chain.close();
    await startChain();
  }

  beforeAll(async () => {
    db = await BeaconDb.open(join(dir, "beacon"), chainConfig);
    await startChain();
  }, 60_000);

  afterAll(async () => {
    await chain.close();
    await db.close();
    rmSync(dir, {recursive: true, force: true});
  });

  async function produceSigned(slot: number): Promise<SignedBeaconBlock> {
    const proposer = (await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot))).epochCtx.getBeaconProposer(slot);
    const randaoReveal = interopSecretKey(proposer).sign(computeSigningRoot(ssz.Epoch, computeEpochAtSlot(slot), chain.config.getDomain(slot, DOMAIN_RANDAO))).toBytes();
    const {block} = await chain.produceBlock({slot, randaoReveal});
    const domain = chain.config.getDomain(slot, DOMAIN_BEACON_PROPOSER);
    return {message: block, signature: interopSecretKey(proposer).sign(computeSigningRoot(ssz.fulu.BeaconBlock, block as never, domain)).toBytes()};
  }

  const rootOf = (signed: SignedBeaconBlock) => ssz.fulu.BeaconBlock.hashTreeRoot(signed.message as never);
  const hashOf = (signed: SignedBeaconBlock) => (signed.message as BeaconBlock & {body: {executionPayload: ExecutionPayload}}).body.executionPayload.blockHash;
  const headHex = () => toRootHex(chain.getHead().blockRoot);

  /** Waits until the chain has handled the forkchoiceUpdated answers (they are asynchronous to the import). */
  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(condition()).toBe(true);
  }

  let valid: SignedBeaconBlock;
  let optimistic: SignedBeaconBlock;
  let optimisticChild: SignedBeaconBlock;
  let grandchild: SignedBeaconBlock;
  /** a child of optimisticChild, kept back until its ancestors are invalidated */
  let lateChild: SignedBeaconBlock;
  /** validated since they were imported optimistically */
  const validatedLater: SignedBeaconBlock[] = [];

  it("VALID imports the block as fully validated", async () => {
    valid = await produceSigned(2);
    await chain.importBlock(valid);
    expect(chain.isOptimistic(rootOf(valid))).toBe(false);
    expect((await nodeHandlers.getSyncingStatus({} as never, ctx)).data).toMatchObject({isOptimistic: false, elOffline: false});
  });

  it("SYNCING and ACCEPTED import optimistically: execution_optimistic in the API, 503 for validators' production", async () => {
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    optimistic = await produceSigned(3);
    expect((await chain.importBlock(optimistic)).isHead).toBe(true);
    engine.newPayloadAnswer = {status: "ACCEPTED", latestValidHash: null};
    optimisticChild = await produceSigned(4);
    await chain.importBlock(optimisticChild);
    lateChild = await produceSigned(6);
    expect(chain.isOptimistic(rootOf(optimistic))).toBe(true);
    expect(chain.isHeadOptimistic()).toBe(true);
    expect((await resolveBlock(chain, "head")).executionOptimistic).toBe(true);
    expect((await resolveBlock(chain, toRootHex(rootOf(valid)) as `0x${string}`)).executionOptimistic).toBe(false);
    expect((await nodeHandlers.getSyncingStatus({} as never, ctx)).data).toMatchObject({isOptimistic: true});
    const refused = await Promise.resolve()
      .then(() => validatorHandlers.produceAttestationData({slot: 5, committeeIndex: 0}, ctx))
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
  });

  it("INVALID from forkchoiceUpdated invalidates the head back to the latest valid hash; the head returns to the valid block", async () => {
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    grandchild = await produceSigned(5);
    // the new head goes to the engine in forkchoiceUpdated, which finds a payload below it invalid
    engine.forkchoiceAnswer = {status: "INVALID", latestValidHash: hashOf(valid)};
    await chain.importBlock(grandchild);
    engine.newPayloadAnswer = null;
    await until(() => headHex() === toRootHex(rootOf(valid)));
    expect(chain.forkChoice.getAllNodes().filter((n) => n.validity === "invalid").map((n) => n.blockRoot).sort()).toEqual(
      [optimistic, optimisticChild, grandchild].map((b) => toRootHex(rootOf(b))).sort()
    );
    expect(chain.isHeadOptimistic()).toBe(false);
    engine.forkchoiceAnswer = null;
    // whatever the engine says of its own payload, a block on an invalidated one is invalid too
    await expect(chain.importBlock(lateChild)).rejects.toMatchObject({code: "PARENT_PAYLOAD_INVALID"});
    expect(chain.forkChoice.getBlock(toRootHex(rootOf(lateChild)))).toBeNull();
  });

  it("INVALID from newPayload rejects the block and changes nothing", async () => {
    const block = await produceSigned(6);
    engine.newPayloadAnswer = {status: "INVALID", latestValidHash: hashOf(valid), validationError: "bad block"};
    const error = await chain.importBlock(block).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockError);
    expect((error as BlockError).code).toBe("INVALID_EXECUTION_PAYLOAD");
    expect((error as BlockError).message).toMatch(/bad block/);
    expect(chain.forkChoice.getAllNodes().some((n) => n.blockRoot === toRootHex(rootOf(block)))).toBe(false);
    expect(headHex()).toBe(toRootHex(rootOf(valid)));
  });

  it("an unreachable engine rejects the block as EXECUTION_ENGINE_ERROR, and it imports once the engine is back", async () => {
    const block = await produceSigned(7);
    engine.newPayloadAnswer = "unavailable";
    await expect(chain.importBlock(block)).rejects.toMatchObject({code: "EXECUTION_ENGINE_ERROR"});
    expect(headHex()).toBe(toRootHex(rootOf(valid)));
    engine.newPayloadAnswer = null;
    expect((await chain.importBlock(block)).isHead).toBe(true);
  });

  it("VALID from forkchoiceUpdated validates an optimistic head and its optimistic ancestors", async () => {
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    const block = await produceSigned(8);
    await chain.importBlock(block);
    expect(chain.isOptimistic(rootOf(block))).toBe(true);
    const child = await produceSigned(9);
    engine.forkchoiceAnswer = {status: "VALID", latestValidHash: hashOf(child)};
    await chain.importBlock(child);
    engine.newPayloadAnswer = null;
    await until(() => !chain.isOptimistic(rootOf(child)));
    expect(chain.isOptimistic(rootOf(block))).toBe(false);
    expect(chain.isHeadOptimistic()).toBe(false);
    engine.forkchoiceAnswer = null;
    validatedLater.push(block, child);
  });

  it("a block imported with a VALID payload validates its optimistic ancestors", async () => {
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    const parent = await produceSigned(10);
    await chain.importBlock(parent);
    expect(chain.isOptimistic(rootOf(parent))).toBe(true);
    engine.newPayloadAnswer = null;
    const child = await produceSigned(11);
    await chain.importBlock(child);
    expect(chain.isOptimistic(rootOf(child))).toBe(false);
    expect(chain.isOptimistic(rootOf(parent))).toBe(false);
    validatedLater.push(parent);
  });

  it("after a restart an optimistic block is still optimistic, validated ones are valid, invalidated ones are not imported; a validation after it is kept too", async () => {
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    const pending = await produceSigned(12);
    await chain.importBlock(pending);
    engine.newPayloadAnswer = null;

    await restart();
    expect(headHex()).toBe(toRootHex(rootOf(pending)));
    expect(chain.isOptimistic(rootOf(pending))).toBe(true);
    expect(chain.isHeadOptimistic()).toBe(true);
    for (const block of [valid, ...validatedLater]) expect(chain.isOptimistic(rootOf(block))).toBe(false);
    for (const block of [optimistic, optimisticChild, grandchild]) expect(chain.forkChoice.getBlock(toRootHex(rootOf(block)))).toBeNull();

    // a new optimistic head, which forkchoiceUpdated finds VALID with its ancestors
    engine.newPayloadAnswer = {status: "SYNCING", latestValidHash: null};
    const child = await produceSigned(13);
    engine.forkchoiceAnswer = {status: "VALID", latestValidHash: hashOf(child)};
    await chain.importBlock(child);
    engine.newPayloadAnswer = null;
    await until(() => !chain.isOptimistic(rootOf(pending)));
    engine.forkchoiceAnswer = null;
    await restart();
    expect(headHex()).toBe(toRootHex(rootOf(child)));
    expect(chain.isOptimistic(rootOf(child))).toBe(false);
    expect(chain.isOptimistic(rootOf(pending))).toBe(false);
  }, 30_000);
});
