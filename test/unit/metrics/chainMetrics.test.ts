import {describe, expect, it} from "@jest/globals";
import {EventEmitter} from "node:events";
import {Registry} from "prom-client";
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {ChainEvents} from "../../../src/chain/interface.ts";
import {observeChain, type ChainMetricsSource} from "../../../src/metrics/chainMetrics.ts";
import {parseExposition, sampleValue} from "../../prometheusText.ts";

/** Gauges are read from the chain at scrape time; reorgs are counted as the chain reports them. */
describe("observeChain", () => {
  function fakeChain() {
    const state = {
      finalizedCheckpoint: {epoch: 3},
      currentJustifiedCheckpoint: {epoch: 5},
      previousJustifiedCheckpoint: {epoch: 4},
      epochCtx: {currentShuffling: {activeIndices: new Uint32Array(10)}},
      eth1DepositIndex: 12,
    };
    const none = () => [];
    const chain = {
      emitter: new EventEmitter<ChainEvents>(),
      head: {slot: 41},
      getHead() {
        return this.head;
      },
      getHeadState: () => state as unknown as CachedBeaconStateAllForks,
      cachedStateCount: () => 7,
      cachedStateBytes: () => 7 * 1024 * 1024,
      // the clock: 2.5 s into slot 100, 4-second slots
      msIntoSlot: (slot: number) => (100 - slot) * 4000 + 2500,
      config: {SECONDS_PER_SLOT: 4},
      pools: {
        attestations: {getAll: () => [1, 2, 3]},
        opPool: {getProposerSlashings: none, getAttesterSlashings: none, getVoluntaryExits: () => [1], getBlsToExecutionChanges: none},
      },
    } satisfies ChainMetricsSource & {head: {slot: number}};
    return chain;
  }
  const reorg = {slot: 1, depth: 1, oldHeadBlock: new Uint8Array(32), newHeadBlock: new Uint8Array(32), oldHeadState: new Uint8Array(32), newHeadState: new Uint8Array(32), epoch: 0};

  it("reads the head and its state when scraped, and counts reorgs until stopped", async () => {
    const registry = new Registry();
    const chain = fakeChain();
    const stop = observeChain(registry, chain, () => 2);
    let e = parseExposition(await registry.metrics());
    expect(sampleValue(e, "beacon_head_slot")).toBe(41);
    expect(sampleValue(e, "beacon_finalized_epoch")).toBe(3);
    expect(sampleValue(e, "beacon_current_justified_epoch")).toBe(5);
    expect(sampleValue(e, "beacon_previous_justified_epoch")).toBe(4);
    expect(sampleValue(e, "beacon_current_active_validators")).toBe(10);
    expect(sampleValue(e, "beacon_processed_deposits_total")).toBe(12);
    expect(sampleValue(e, "libp2p_peers")).toBe(2);
    expect(sampleValue(e, "beacon_reorgs_total")).toBe(0);
    expect(sampleValue(e, "beacon_gateway_state_cache_size")).toBe(7);
    expect(sampleValue(e, "beacon_gateway_state_cache_bytes")).toBe(7 * 1024 * 1024);
    expect(sampleValue(e, "beacon_gateway_op_pool_size", {pool: "attestations"})).toBe(3);
    expect(sampleValue(e, "beacon_pending_exits")).toBe(1);

    chain.head = {slot: 42};
    chain.emitter.emit("chain_reorg", reorg);
    chain.emitter.emit("chain_reorg", reorg);
    e = parseExposition(await registry.metrics());
    expect(sampleValue(e, "beacon_head_slot")).toBe(42);
    expect(sampleValue(e, "beacon_reorgs_total")).toBe(2);

    stop();
    chain.emitter.emit("chain_reorg", reorg);
    expect(sampleValue(parseExposition(await registry.metrics()), "beacon_reorgs_total")).toBe(2);
    expect(chain.emitter.listenerCount("chain_reorg")).toBe(0);
  });

  it("beacon_block_delay_count: seconds from each block's slot start to its import; sync imports of old blocks left out", async () => {
    const registry = new Registry();
    const chain = fakeChain();
    const stop = observeChain(registry, chain, () => 0);
    const root = new Uint8Array(32);
    chain.emitter.emit("block", {slot: 100, block: root}); // 2.5 s late
    chain.emitter.emit("block", {slot: 99, block: root}); // 6.5 s late
    chain.emitter.emit("block", {slot: 10, block: root}); // range sync: not a delay
    const e = parseExposition(await registry.metrics());
    expect(sampleValue(e, "beacon_block_delay_count_count")).toBe(2);
    expect(sampleValue(e, "beacon_block_delay_count_sum")).toBe(9);
    expect(sampleValue(e, "beacon_block_delay_count_bucket", {le: "2"})).toBe(0);
    expect(sampleValue(e, "beacon_block_delay_count_bucket", {le: "4"})).toBe(1);
    expect(sampleValue(e, "beacon_block_delay_count_bucket", {le: "8"})).toBe(2);
    stop();
    expect(chain.emitter.listenerCount("block")).toBe(0);
  });
});
