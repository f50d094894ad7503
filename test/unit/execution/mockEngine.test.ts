import {describe, expect, it} from "@jest/globals";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "../../../src/execution/mockEngine.ts";
import type {CachedBeaconStateExecutions} from "@lodestar/state-transition";

describe("mock execution engine", () => {
  const engine = new MockExecutionEngine();
  const attrs = {timestamp: 1234, prevRandao: new Uint8Array(32).fill(7), suggestedFeeRecipient: new Uint8Array(20).fill(1), withdrawals: []};

  it("builds payloads that chain on their parent and validate", async () => {
    const first = await engine.buildPayload("fulu", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 30_000_000}, attrs);
    expect(first.payload.parentHash).toEqual(GENESIS_EXECUTION_BLOCK_HASH);
    expect(first.payload.blockNumber).toBe(1);
    expect(await engine.notifyNewPayload("fulu", first.payload)).toMatchObject({status: "VALID"});
    const second = await engine.buildPayload("fulu", {blockHash: first.payload.blockHash, blockNumber: 1, gasLimit: 30_000_000}, attrs);
    expect(second.payload.parentHash).toEqual(first.payload.blockHash);
    expect(second.payload.blockHash).not.toEqual(first.payload.blockHash);
  });

  it("cannot judge a payload it did not build (another client's mock engine, or altered): SYNCING, never VALID", async () => {
    const {payload} = await engine.buildPayload("capella", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 1}, attrs);
    expect(await engine.notifyNewPayload("capella", {...payload, gasUsed: 1})).toMatchObject({status: "SYNCING"});
    expect(await engine.notifyNewPayload("capella", {...payload, transactions: [new Uint8Array([1])]})).toMatchObject({status: "SYNCING"});
  });

  it("starts a pre-merge chain from the dev execution genesis", async () => {
    const {payload} = await engine.buildPayload("bellatrix", {blockHash: new Uint8Array(32), blockNumber: 0, gasLimit: 0}, attrs);
    expect(payload.parentHash).toEqual(GENESIS_EXECUTION_BLOCK_HASH);
    expect(payload.blockNumber).toBe(1);
  });

  it("gives a post-merge genesis state the dev execution genesis header", () => {
    const config = devChainConfig({secondsPerSlot: 2, genesisFork: "deneb", forkEpochs: {}});
    const state = createInteropGenesisState(config, 16, 1000) as CachedBeaconStateExecutions;
    expect(state.latestExecutionPayloadHeader.blockHash).toEqual(GENESIS_EXECUTION_BLOCK_HASH);
    expect(state.validators.length).toBe(16);
    expect(state.genesisTime).toBe(1000);
    expect(config.getForkName(0)).toBe("deneb");
  });
});
