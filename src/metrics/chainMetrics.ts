import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {EventEmitter} from "node:events";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {Counter, Gauge, Histogram, type Registry} from "prom-client";
import type {ChainEvents} from "../chain/interface.ts";

/**
 * The beacon-metrics standard's interop metrics (specs/beacon-metrics), and the sizes of the
 * node's caches and pools. Gauges are read from the chain when Prometheus scrapes, so they are
 * never stale and no import path carries a hook; only reorgs, which leave no trace in the
 * state, are counted as they happen.
 */

export interface ChainMetricsSource {
  emitter: EventEmitter<ChainEvents>;
  getHead(): {slot: number};
  /** the head block's post-state */
  getHeadState(): CachedBeaconStateAllForks;
  /** states held in memory */
  cachedStateCount(): number;
  /** what they hold in memory, estimated (bytes) */
  cachedStateBytes(): number;
  /** milliseconds since the start of `slot` on the node's clock */
  msIntoSlot(slot: number): number;
  config: {SECONDS_PER_SLOT: number};
  pools: {
    attestations: {getAll(): unknown[]};
    opPool: {
      getProposerSlashings(): unknown[];
      getAttesterSlashings(): unknown[];
      getVoluntaryExits(): unknown[];
      getBlsToExecutionChanges(): unknown[];
    };
  };
}

/** Seconds; the p99 of `npm run bench:abuse` is read from these, so 1 s is a bound. */
export const BLOCK_DELAY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 4, 8, 12];

/** Registers the chain's metrics; the returned function stops counting reorgs. */
export function observeChain(registry: Registry, chain: ChainMetricsSource, connectedPeers: () => number): () => void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number): Gauge =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  const head = () => chain.getHeadState();

  gauge("libp2p_peers", "Tracks the total number of libp2p peers", connectedPeers);
  gauge("beacon_head_slot", "Latest slot of the beacon chain", () => chain.getHead().slot);
  gauge("beacon_finalized_epoch", "Current finalized epoch", () => head().finalizedCheckpoint.epoch);
  gauge("beacon_current_justified_epoch", "Current justified epoch", () => head().currentJustifiedCheckpoint.epoch);
  gauge("beacon_previous_justified_epoch", "Current previously justified epoch", () => head().previousJustifiedCheckpoint.epoch);
  gauge("beacon_current_active_validators", "Current total active validators", () => head().epochCtx.currentShuffling.activeIndices.length);
  // eth1_deposit_index: the deposits of the deposit contract processed so far
  gauge("beacon_processed_deposits_total", "Total number of deposits processed", () => Number(head().eth1DepositIndex));
  const reorgs = new Counter({name: "beacon_reorgs_total", help: "Total number of chain reorganizations", registers});
  const onReorg = () => reorgs.inc();
  chain.emitter.on("chain_reorg", onReorg);
  const blockDelay = new Histogram({
    name: "beacon_block_delay_count",
    help: "Block delay: seconds from the start of a block's slot until the node imported it (blocks of the last epoch; older ones are sync)",
    buckets: BLOCK_DELAY_BUCKETS,
    registers,
  });
  const onBlock = ({slot}: {slot: number}): void => {
    const ms = chain.msIntoSlot(slot);
    if (ms >= 0 && ms < SLOTS_PER_EPOCH * chain.config.SECONDS_PER_SLOT * 1000) blockDelay.observe(ms / 1000);
  };
  chain.emitter.on("block", onBlock);

  gauge("beacon_pending_exits", "Number of pending voluntary exits in local operation pool", () => chain.pools.opPool.getVoluntaryExits().length);
  gauge("beacon_gateway_state_cache_size", "beacon states held in the state cache", () => chain.cachedStateCount());
  gauge("beacon_gateway_state_cache_bytes", "memory the cached beacon states hold, estimated from the tree nodes each does not share", () => chain.cachedStateBytes());
  new Gauge({
    name: "beacon_gateway_op_pool_size",
    help: "operations waiting in the node's pools, by pool",
    labelNames: ["pool"],
    registers,
    collect() {
      const {attestations, opPool} = chain.pools;
      this.set({pool: "attestations"}, attestations.getAll().length);
      this.set({pool: "proposer_slashings"}, opPool.getProposerSlashings().length);
      this.set({pool: "attester_slashings"}, opPool.getAttesterSlashings().length);
      this.set({pool: "voluntary_exits"}, opPool.getVoluntaryExits().length);
      this.set({pool: "bls_to_execution_changes"}, opPool.getBlsToExecutionChanges().length);
    },
  });
  return () => {
    chain.emitter.off("chain_reorg", onReorg);
    chain.emitter.off("block", onBlock);
  };
}
