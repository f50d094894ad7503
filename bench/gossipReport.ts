// bench:gossip's report (bench/gossip.ts): one table by topic (offered against mainnet's, the
// node's verdicts, its rate and arrival-to-verdict latency, the decoding ceiling), then the
// node's event loop, head, REST answers, CPU and RSS, and the blst ceiling, under a heading that
// names the machine, the date and the run, as the other benches' reports do (bench/mixReport.ts).
import type {Exposition} from "../test/prometheusText.ts";
import type {BlstCeiling, DecodeCost} from "./gossipCeiling.ts";
import {GOSSIP_KINDS, type GossipKind, type GossipRecord} from "./gossipCache.ts";
import {printColumns} from "./harness.ts";
import {OUR_NAME} from "./machine.ts";
import {DEFAULT_MAX_VALIDATIONS_IN_FLIGHT, maxValidationsInFlight} from "../src/network/gossip/validationLimits.ts";

export interface GossipRun {
  machine: string;
  date: string;
  validators: number;
  slots: number;
  peers: number;
  /** the share of the single attestations sent */
  share: number;
  threads: number;
  records: GossipRecord[];
  /** the node's metrics before the first message and after the last verdict */
  before: Exposition;
  after: Exposition;
  windowSeconds: number;
  cpuSeconds: number;
  rss: {start: number; peak: number; end: number};
  rest: {latencies: number[]; failures: number; heads: Array<{slot: number; atMs: number}>};
  slotStartMs(slot: number): number;
  /** when a driver peer first received a message back from the node (forwarded: accepted), by message */
  forwardedAtMs: Map<GossipRecord, number>;
  publishLateMs: number;
  /** the driver's failed publishes, by error */
  publishErrors: Map<string, number>;
  blst: BlstCeiling;
  decode: Map<GossipKind, DecodeCost>;
}

const VERDICTS = "beacon_gateway_gossip_messages_received_total";
const LATENCY = "beacon_gateway_gossip_validation_seconds_bucket";
const OVERLOADED = "beacon_gateway_gossip_overloaded_total";
const LAG = "beacon_gateway_event_loop_lag_distribution_seconds_bucket";

/** The growth of a metric's samples whose labels include `labels`, summed. */
function grown(run: GossipRun, name: string, labels: Record<string, string>): number {
  const sum = (e: Exposition) =>
    e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
  return sum(run.after) - sum(run.before);
}

/** A quantile of a histogram's growth over the run, as the upper bound of its bucket ("≤ 25 ms"); "" without observations. */
function quantile(run: GossipRun, name: string, q: number, labels: Record<string, string> = {}): string {
  const les = [...new Set(run.after.samples.filter((s) => s.name === name).map((s) => s.labels.le))];
  const buckets = les.map((le) => ({le: Number(le), count: grown(run, name, {...labels, le})})).sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return "";
  const bucket = buckets.find((b) => b.count >= q * total)!;
  if (!Number.isFinite(bucket.le)) return `> ${buckets.at(-2)!.le * 1000} ms`;
  return `≤ ${bucket.le * 1000} ms`;
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** What mainnet carries in a slot with this many validators (spec's targets: 16 aggregators a committee and a sync subcommittee). */
function mainnetPerSlot(validators: number): Record<GossipKind, number> {
  const committees = Math.min(64, Math.max(1, Math.floor(validators / 32 / 128)));
  return {beacon_block: 1, beacon_aggregate_and_proof: committees * 16, beacon_attestation: Math.floor(validators / 32), sync_committee_contribution_and_proof: 4 * 16, sync_committee: 512};
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", {maximumFractionDigits: digits, minimumFractionDigits: digits}) : "");

export function printGossipReport(run: GossipRun): void {
  const mainnet = mainnetPerSlot(run.validators);
  console.log(`\nbench:gossip, ${run.date}; ${run.machine}`);
  console.log(
    `${OUR_NAME}, --subscribe-all-subnets, ${run.threads} BLS thread(s); ${fmt(run.validators)} validators (mainnet preset, bellatrix); ` +
      `${run.slots} slots (${run.windowSeconds} s) sent by ${run.peers} driver peers over libp2p (TCP, loopback), in the bench's own process` +
      (run.share < 1 ? `; ${fmt(run.share * 100, 1)}% of the single attestations only (BENCH_GOSSIP_SHARE)` : "")
  );
  const lines = GOSSIP_KINDS.map((kind) => {
    const offered = run.records.filter((r) => r.kind === kind).length;
    const accept = grown(run, VERDICTS, {type: kind, result: "accept"});
    const ignore = grown(run, VERDICTS, {type: kind, result: "ignore"});
    const reject = grown(run, VERDICTS, {type: kind, result: "reject"});
    const decode = run.decode.get(kind);
    return [
      kind,
      fmt(offered / run.slots),
      `${kind === "beacon_attestation" || kind === "beacon_block" ? "" : "≈"}${fmt(mainnet[kind])}`,
      fmt(accept + ignore + reject),
      fmt(accept),
      fmt(ignore),
      fmt(grown(run, OVERLOADED, {type: kind})),
      fmt(reject),
      fmt((accept + ignore + reject) / run.windowSeconds, 1),
      quantile(run, LATENCY, 0.5, {type: kind}),
      quantile(run, LATENCY, 0.99, {type: kind}),
      decode ? `${fmt(decode.snappyUs, 1)} + ${fmt(decode.sszUs, 1)}` : "",
    ];
  });
  const total = run.records.length;
  const verdicts = grown(run, VERDICTS, {});
  lines.push(["all", fmt(total / run.slots), "", fmt(verdicts), fmt(grown(run, VERDICTS, {result: "accept"})), fmt(grown(run, VERDICTS, {result: "ignore"})), fmt(grown(run, OVERLOADED, {})), fmt(grown(run, VERDICTS, {result: "reject"})), fmt(verdicts / run.windowSeconds, 1), quantile(run, LATENCY, 0.5), quantile(run, LATENCY, 0.99), ""]);
  printColumns(
    ["topic", "offered/slot", "mainnet/slot", "received", "accept", "ignore", "overloaded", "reject", "validated/s", "arrival→verdict p50", "p99", "snappy + SSZ µs/msg (raw)"],
    lines
  );
  const limits = `${fmt(maxValidationsInFlight("beacon_attestation"))} attestations, ${fmt(maxValidationsInFlight("beacon_aggregate_and_proof"))} aggregates, ${fmt(maxValidationsInFlight("sync_committee"))} sync messages, ${fmt(DEFAULT_MAX_VALIDATIONS_IN_FLIGHT)} others`;
  console.log(
    `"received": verdicts the node gave (every message sent is valid and on time: an ignore is the node's own lateness, "overloaded" those ignored unvalidated\n` +
      `with as many of their type already in validation: ${limits}); "mainnet/slot": at ${fmt(run.validators)} validators (≈: the spec's expected 16 aggregators a committee or subcommittee);\n` +
      `latencies from the node's histogram (the bound of the bucket); the raw decoding on the bench's thread, before the node started.`
  );

  const heads = [];
  for (let slot = 1; slot <= run.slots; slot++) {
    const head = run.rest.heads.find((h) => h.slot === slot);
    heads.push(head ? `${slot}: +${fmt(head.atMs - run.slotStartMs(slot))} ms` : `${slot}: never`);
  }
  const onTime = run.rest.heads.filter((h) => h.slot >= 1 && h.atMs - run.slotStartMs(h.slot) < 4000).length;
  const forwards = [];
  for (let slot = 1; slot <= run.slots; slot++) {
    const ofSlot = run.records.filter((r) => r.slot === slot);
    const times = ofSlot.map((r) => run.forwardedAtMs.get(r)).filter((t) => t !== undefined);
    const last = times.length > 0 ? `, the last at +${fmt((Math.max(...times) - run.slotStartMs(slot)) / 1000, 1)} s` : "";
    const missing = GOSSIP_KINDS.map((kind) => [kind, ofSlot.filter((r) => r.kind === kind && !run.forwardedAtMs.has(r)).length] as const).filter(([, n]) => n > 0);
    const none = missing.length > 0 ? ` (none back: ${missing.map(([kind, n]) => `${fmt(n)} ${kind}`).join(", ")})` : "";
    forwards.push(`${slot}: ${fmt(times.length)} of ${fmt(ofSlot.length)}${last}${none}`);
  }
  const sets = run.records.reduce((n, r) => n + r.sets.length, 0);
  const rawCpuPerSet = (run.blst.cpuSeconds * 1e6) / run.blst.sets;
  const nodeCpuPerSet = (run.cpuSeconds * 1e6) / sets;
  const lat = run.rest.latencies;
  printColumns(
    ["measure", "result"],
    [
      ["event-loop lag (probe every 500 ms)", `p99 ${quantile(run, LAG, 0.99)}, max ${quantile(run, LAG, 1)}`],
      ["head moved to the slot's block (from the slot's start)", `${heads.join(", ")}; ${onTime} of ${run.slots} within 4 s`],
      ["a slot's messages validated and forwarded (first copy back at a driver peer, from the slot's start)", forwards.join("; ")],
      ["REST, light mix every 50 ms", `${lat.length} requests, p50 ${fmt(percentile(lat, 0.5), 1)} ms, p99 ${fmt(percentile(lat, 0.99), 1)} ms, max ${fmt(Math.max(...lat), 0)} ms, ${run.rest.failures} failed or not 200`],
      ["node CPU over the window", `${fmt(run.cpuSeconds, 1)} s (${fmt((100 * run.cpuSeconds) / run.windowSeconds)}% of one core)`],
      ["node RSS", `${fmt(run.rss.start)} MiB at the start, ${fmt(run.rss.peak)} peak, ${fmt(run.rss.end)} at the end`],
      ["blst alone, the run's signature sets", `${fmt(run.blst.sets)} sets in ${fmt(run.blst.seconds, 2)} s from ${run.blst.threads} thread(s) (${fmt(run.blst.cpuSeconds, 2)} s of CPU, blst's own threads included): ${fmt(run.blst.setsPerSecond)} sets/s; the sets of a slot take ${fmt(run.blst.seconds / run.slots, 2)} s of its 12`],
      ["CPU per set: node (all its work) / blst alone", `${fmt(nodeCpuPerSet, 0)} µs / ${fmt(rawCpuPerSet, 0)} µs: blst alone is ${fmt((100 * rawCpuPerSet) / nodeCpuPerSet)}% of the node's cost`],
      ["driver", `published up to ${fmt(run.publishLateMs)} ms after a message's moment; failed publishes: ${[...run.publishErrors].map(([e, n]) => `${n} (${e})`).join(", ") || "none"}`],
    ]
  );
}
