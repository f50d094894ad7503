import {Counter, Gauge, Histogram, Registry, collectDefaultMetrics} from "prom-client";
import {EventLoopLagMonitor} from "./eventLoopLag.ts";

/**
 * The node's metrics: one registry and the metric objects the parts observe through. The
 * composition root creates it with --metrics and hands each part the objects it records to;
 * parts take them as optional, so tests and other commands run without. Servers (REST, JSON-RPC)
 * register their own request metrics on `registry` (requests.ts).
 */

/** How often the event-loop lag is sampled. */
const LAG_SAMPLE_MS = 500;

/** The steps of a block import, in order (see BeaconChain.importBlockNow). */
export type ImportStage = "pre_state" | "verify" | "store" | "fork_choice" | "head";
export type ValidatorDuty = "block_proposal" | "attestation" | "sync_committee_message";

/** What the validator client reports: each duty due is performed (published) or missed. */
export interface DutyMetrics {
  performed(duty: ValidatorDuty, count?: number): void;
  missed(duty: ValidatorDuty, count?: number): void;
}

export interface NodeMetrics {
  readonly registry: Registry;
  readonly blockImport: Histogram<"stage">;
  /** gossip messages received, by type (the topic's) and validation result (accept, ignore, reject) */
  readonly gossipReceived: Counter<"type" | "result">;
  readonly gossipPublished: Counter<"type">;
  /** seconds from a gossip message's arrival (gossipsub's event) to its verdict, by type; those refused unvalidated (overload) not counted */
  readonly gossipValidation: Histogram<"type">;
  /** gossip messages ignored without validation because the node had too many in flight (its own overload), by type */
  readonly gossipOverloaded: Counter<"type">;
  /** req/resp requests, by protocol name, direction (inbound, outbound) and result (outbound: ok or the error code) */
  readonly reqResp: Counter<"protocol" | "direction" | "result">;
  readonly duties: DutyMetrics;
  /** backfill after checkpoint sync: the lowest block stored, the slot it goes back to, blocks stored */
  readonly backfill: {setSlot(slot: number): void; setTargetSlot(slot: number): void; addBlocks(count: number): void};
  /** the clock's offset from its peers', as measured from their gossip (network/clockWatch.ts) */
  readonly clockOffset: {set(seconds: number): void};
  /** stops the event-loop sampling */
  close(): void;
}

/** The validator duties counter, in the node's registry or a standalone validator client's. */
export function createDutyMetrics(registry: Registry): DutyMetrics {
  const counter = new Counter({
    name: "beacon_gateway_validator_duties_total",
    help: "validator duties of this process's validators, by duty and result (performed: published; missed: failed or not published)",
    labelNames: ["duty", "result"],
    registers: [registry],
  });
  const count = (result: string) => (duty: ValidatorDuty, n = 1) => {
    if (n > 0) counter.inc({duty, result}, n);
  };
  return {performed: count("performed"), missed: count("missed")};
}

export function createNodeMetrics(): NodeMetrics {
  const registry = new Registry();
  // process_cpu_seconds_total, process_max_fds (named by the beacon-metrics list), memory, GC, ...
  collectDefaultMetrics({register: registry});
  const registers = [registry];

  const lag = new Gauge({name: "beacon_gateway_event_loop_lag_seconds", help: "lateness of the last event-loop lag probe timer", registers});
  const lagHistogram = new Histogram({
    name: "beacon_gateway_event_loop_lag_distribution_seconds",
    help: "lateness of the event-loop lag probe timers",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers,
  });
  const lagMonitor = new EventLoopLagMonitor({
    intervalMs: LAG_SAMPLE_MS,
    onSample: (seconds) => {
      lag.set(seconds);
      lagHistogram.observe(seconds);
    },
  });
  lagMonitor.start();

  const backfillSlot = new Gauge({name: "beacon_gateway_backfill_slot", help: "slot of the lowest block stored: where the node's block history starts (moves down as backfill goes)", registers});
  const backfillTarget = new Gauge({
    name: "beacon_gateway_backfill_target_slot",
    help: "the slot backfill goes back to: MIN_EPOCHS_FOR_BLOCK_REQUESTS before the current epoch, or 0 with --backfill-to-genesis",
    registers,
  });
  const backfillBlocks = new Counter({name: "beacon_gateway_backfill_blocks_total", help: "blocks before the checkpoint-sync anchor fetched, checked and stored by backfill", registers});

  const clockOffset = new Gauge({
    name: "beacon_gateway_clock_offset_seconds",
    help: "the clock's offset from its peers' (positive: ahead), network delay included: when peers' first gossip blocks and attestations of a slot arrive, from the slot's start by this clock (median over peers of each one's median over its last 32 slots)",
    registers,
  });

  return {
    registry,
    blockImport: new Histogram({
      name: "beacon_gateway_block_import_seconds",
      help: "time of each stage of a block import: pre_state (parent state at the block's slot), verify (state transition, signatures, payload), store, fork_choice, head (head and finality update)",
      labelNames: ["stage"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    gossipReceived: new Counter({name: "beacon_gateway_gossip_messages_received_total", help: "gossip messages received, by type and validation result", labelNames: ["type", "result"], registers}),
    gossipPublished: new Counter({name: "beacon_gateway_gossip_messages_published_total", help: "gossip messages this node published, by type", labelNames: ["type"], registers}),
    gossipValidation: new Histogram({
      name: "beacon_gateway_gossip_validation_seconds",
      help: "time from a gossip message's arrival to its verdict (decode, validation, signature checks, queueing), by type",
      labelNames: ["type"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 12],
      registers,
    }),
    gossipOverloaded: new Counter({
      name: "beacon_gateway_gossip_overloaded_total",
      help: "gossip messages ignored unvalidated because too many were already being validated, by type",
      labelNames: ["type"],
      registers,
    }),
    reqResp: new Counter({
      name: "beacon_gateway_reqresp_requests_total",
      help: "req/resp requests, by protocol, direction (inbound: served; outbound: made) and result",
      labelNames: ["protocol", "direction", "result"],
      registers,
    }),
    duties: createDutyMetrics(registry),
    backfill: {setSlot: (slot) => backfillSlot.set(slot), setTargetSlot: (slot) => backfillTarget.set(slot), addBlocks: (n) => backfillBlocks.inc(n)},
    clockOffset: {set: (seconds) => clockOffset.set(seconds)},
    close: () => lagMonitor.stop(),
  };
}

/** Times consecutive stages: each `mark` records the time since the previous one (or the start) under its stage. */
export function stageTimer(histogram: Histogram<"stage"> | undefined): {mark(stage: ImportStage): void} {
  if (!histogram) return {mark: () => undefined};
  let last = performance.now();
  return {
    mark(stage) {
      const now = performance.now();
      histogram.observe({stage}, (now - last) / 1000);
      last = now;
    },
  };
}
