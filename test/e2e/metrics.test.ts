import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {NodeProcess, getJson, tempDataDir, waitFor} from "./nodeProcess.ts";
import {parseExposition, sampleValue, type Exposition} from "../prometheusText.ts";

/**
 * `--metrics`: a dev node's Prometheus endpoint, scraped over HTTP as Prometheus would, and
 * read against the beacon-metrics standard and the node's own REST API.
 */

/** The interop metrics of the beacon-metrics standard (specs/beacon-metrics/metrics.md), with their types. */
const INTEROP_METRICS: Record<string, "gauge" | "counter"> = {
  libp2p_peers: "gauge",
  beacon_head_slot: "gauge",
  beacon_finalized_epoch: "gauge",
  beacon_current_justified_epoch: "gauge",
  beacon_previous_justified_epoch: "gauge",
  beacon_current_active_validators: "gauge",
  beacon_reorgs_total: "counter",
  beacon_processed_deposits_total: "gauge",
};
const VALIDATORS = 64;

describe("metrics endpoint", () => {
  const data = tempDataDir("metrics");
  let node: NodeProcess;
  let rest: string;
  let metricsUrl: string;

  async function scrape(): Promise<Exposition> {
    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  }
  const restHeadSlot = async () => Number((await getJson(rest, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);

  beforeAll(async () => {
    node = new NodeProcess([
      "node", "--rest", "--rest-port", "0", "--rpc", "--rpc-port", "0", "--metrics", "--metrics-port", "0",
      "--data-dir", data.dir, "--seconds-per-slot", "1", "--validators", String(VALIDATORS),
    ]);
    rest = await node.restUrl();
    const line = await node.waitForLog((l) => l.msg === "metrics listening", 30_000, "metrics to listen");
    expect(line.address).toBe("127.0.0.1");
    metricsUrl = `http://127.0.0.1:${line.port}`;
  }, 60_000);

  afterAll(async () => {
    const exit = await node?.stop();
    data.remove();
    expect(exit?.code).toBe(0);
  });

  it("serves every interop metric of the beacon-metrics standard with its type", async () => {
    const exposition = await scrape();
    for (const [name, type] of Object.entries(INTEROP_METRICS)) {
      expect([name, exposition.types.get(name)]).toEqual([name, type]);
      expect(sampleValue(exposition, name)).toEqual(expect.any(Number));
    }
    expect(sampleValue(exposition, "beacon_current_active_validators")).toBe(VALIDATORS);
    // the interop genesis makes each validator by a deposit: eth1_deposit_index is their count
    expect(sampleValue(exposition, "beacon_processed_deposits_total")).toBe(VALIDATORS);
    // the dev node has no peers: it is alone on loopback without discovery
    expect(sampleValue(exposition, "libp2p_peers")).toBe(0);
    expect(exposition.types.get("process_cpu_seconds_total")).toBeDefined();
    expect((await fetch(`${metricsUrl}/elsewhere`)).status).toBe(404);
  });

  it(
    "head slot and finalized epoch move with the chain, as the REST API reports them",
    async () => {
      const before = await restHeadSlot();
      const moved = await waitFor("beacon_head_slot to pass the REST head", 20_000, async () => {
        const slot = sampleValue(await scrape(), "beacon_head_slot")!;
        return slot > before ? slot : null;
      });
      expect(moved).toBeLessThanOrEqual(await restHeadSlot());

      // with every validator attesting, epoch 2 is finalized at the start of epoch 4 (slot 32 of the minimal preset)
      const finalized = await waitFor("beacon_finalized_epoch to move", 50_000, async () => {
        const exposition = await scrape();
        const epoch = sampleValue(exposition, "beacon_finalized_epoch")!;
        return epoch > 0 ? exposition : null;
      });
      const fc = (await getJson(rest, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data;
      const finalizedEpoch = sampleValue(finalized, "beacon_finalized_epoch")!;
      // the REST answer comes after the scrape: the same or later
      expect(finalizedEpoch).toBeLessThanOrEqual(Number(fc.finalized.epoch));
      expect(sampleValue(finalized, "beacon_current_justified_epoch")!).toBeGreaterThanOrEqual(finalizedEpoch);
      expect(sampleValue(finalized, "beacon_previous_justified_epoch")!).toBeGreaterThanOrEqual(finalizedEpoch);
      expect(sampleValue(finalized, "beacon_current_justified_epoch")!).toBeLessThanOrEqual(Number(fc.current_justified.epoch));
    },
    80_000
  );

  it("reports the node's own work: block imports by stage, duties, REST and JSON-RPC requests, caches, event-loop lag", async () => {
    const rpcPort = (await node.waitForLog((l) => l.msg === "JSON-RPC listening", 10_000)).port;
    const rpc = await fetch(`http://127.0.0.1:${rpcPort}`, {
      method: "POST",
      headers: {"content-type": "application/json"},
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "get_v1_node_version", params: []}),
    });
    expect(rpc.status).toBe(200);
    const e = await scrape();
    for (const stage of ["pre_state", "verify", "store", "fork_choice", "head"]) {
      expect([stage, sampleValue(e, "beacon_gateway_block_import_seconds_count", {stage})! > 0]).toEqual([stage, true]);
    }
    expect(e.types.get("beacon_gateway_block_import_seconds")).toBe("histogram");
    expect(sampleValue(e, "beacon_gateway_validator_duties_total", {duty: "attestation", result: "performed"})!).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_gateway_validator_duties_total", {duty: "block_proposal", result: "performed"})!).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_gateway_rest_requests_total", {operationId: "getBlockHeader", status: "200"})!).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_gateway_rest_requests_total", {operationId: "getStateFinalityCheckpoints", status: "200"})!).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_gateway_jsonrpc_calls_total", {method: "get_v1_node_version", status: "ok"})).toBe(1);
    expect(sampleValue(e, "beacon_gateway_state_cache_size")!).toBeGreaterThan(0);
    // the dev chain's 64-validator states: some tens of KiB each beside their base, never 0
    expect(sampleValue(e, "beacon_gateway_state_cache_bytes")!).toBeGreaterThan(100_000);
    expect(sampleValue(e, "beacon_gateway_op_pool_size", {pool: "voluntary_exits"})).toBe(0);
    expect(e.types.get("beacon_gateway_event_loop_lag_seconds")).toBe("gauge");
    expect(sampleValue(e, "beacon_gateway_event_loop_lag_seconds")!).toBeGreaterThanOrEqual(0);
    expect(e.types.get("beacon_gateway_gossip_messages_received_total")).toBe("counter");
    expect(e.types.get("beacon_gateway_reqresp_requests_total")).toBe("counter");
    // the blocks the node's validators made were imported within their slot (1 s slots), nearly all
    expect(e.types.get("beacon_block_delay_count")).toBe("histogram");
    const imported = sampleValue(e, "beacon_block_delay_count_count")!;
    expect(imported).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_block_delay_count_sum")!).toBeGreaterThan(0);
    expect(sampleValue(e, "beacon_block_delay_count_bucket", {le: "1"})!).toBeGreaterThanOrEqual(0.9 * imported);
  });

  it("runs with the launcher's small V8 semi-space and heap growth, in the process the test started", () => {
    const cmdline = readFileSync(`/proc/${node.proc.pid}/cmdline`, "utf8").split("\0");
    expect(cmdline).toContain("--max-semi-space-size=2");
    expect(cmdline).toContain("--heap-growing-percent=20");
  });
});
