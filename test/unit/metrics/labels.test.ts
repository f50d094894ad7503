import {beforeAll, describe, expect, it} from "@jest/globals";
import {Registry} from "prom-client";
import request from "supertest";
import {createJsonRpc, replyText} from "../../../compat/server.ts";
import {createApp, inProcessTransport} from "../../../src/api/server/index.ts";
import {BoundedLabel, statusLabel} from "../../../src/metrics/labels.ts";
import {parseExposition, sampleValue, type Exposition} from "../../prometheusText.ts";
import {createTestContext, type TestContext} from "../api/testContext.ts";

/**
 * Request metrics are labelled with values taken from requests; whatever a client sends, the
 * label values stay in a fixed set (each distinct value would be a new time series).
 */

const labelValues = (exposition: Exposition, metric: string, label: string): Set<string> =>
  new Set(exposition.samples.filter((s) => s.name === metric).map((s) => s.labels[label]));

describe("BoundedLabel and statusLabel", () => {
  it("keep known values and fold anything else into one", () => {
    const label = new BoundedLabel(["getNodeVersion", "getHealth"], "unmatched");
    expect(label.of("getHealth")).toBe("getHealth");
    expect(label.of("getHealth2")).toBe("unmatched");
    expect(label.of(undefined)).toBe("unmatched");
    expect(label.of("__proto__")).toBe("unmatched");
    expect([200, 404, 599, 100].map(statusLabel)).toEqual(["200", "404", "599", "100"]);
    expect([0, 99, 600, 200.5, NaN].map(statusLabel)).toEqual(["other", "other", "other", "other", "other"]);
  });
});

describe("REST and JSON-RPC request metrics", () => {
  let t: TestContext;
  beforeAll(() => {
    t = createTestContext();
  });

  it("REST: labels by the answering route's operationId and status; unknown paths are all 'unmatched'", async () => {
    const registry = new Registry();
    const app = createApp({metricsRegistry: registry}, t.ctx);
    await request(app).get("/eth/v1/node/version").expect(200);
    await request(app).get("/eth/v1/beacon/headers/0x1234").expect(400);
    for (let i = 0; i < 50; i++) await request(app).get(`/made/up/path/${i}`).expect(404);
    const exposition = parseExposition(await registry.metrics());
    const metric = "beacon_gateway_rest_requests_total";
    expect(exposition.types.get(metric)).toBe("counter");
    expect(exposition.types.get("beacon_gateway_rest_requests_duration_seconds")).toBe("histogram");
    // operationIds of the Beacon API spec (getNodeVersion, getBlockHeader)
    expect(sampleValue(exposition, metric, {operationId: "getNodeVersion", status: "200"})).toBe(1);
    expect(sampleValue(exposition, metric, {operationId: "getBlockHeader", status: "400"})).toBe(1);
    expect(sampleValue(exposition, metric, {operationId: "unmatched", status: "404"})).toBe(50);
    expect(labelValues(exposition, metric, "operationId")).toEqual(new Set(["getNodeVersion", "getBlockHeader", "unmatched"]));
    expect(sampleValue(exposition, "beacon_gateway_rest_requests_duration_seconds_count", {operationId: "getNodeVersion", status: "200"})).toBe(1);
  });

  it("JSON-RPC: counts calls by method and outcome; unknown and malformed methods fold into 'unknown'", async () => {
    const registry = new Registry();
    const createdRpc = createJsonRpc({transport: inProcessTransport(t.ctx), encoding: "legacy", metricsRegistry: registry});
    const rpc = async (text: string) => replyText(await createdRpc(text));
    // get_v1_node_version: a method of the removed interface (legacy-jsonrpc.md)
    const ok = JSON.parse((await rpc(JSON.stringify({jsonrpc: "2.0", id: 1, method: "get_v1_node_version", params: []})))!);
    expect(ok.result.version).toEqual(expect.any(String));
    const batch = Array.from({length: 40}, (_, i) => ({jsonrpc: "2.0", id: i, method: `no_such_method_${i}`, params: []}));
    await rpc(JSON.stringify(batch));
    await rpc(JSON.stringify({jsonrpc: "2.0", id: 2, method: 42}));
    const exposition = parseExposition(await registry.metrics());
    const metric = "beacon_gateway_jsonrpc_calls_total";
    expect(exposition.types.get(metric)).toBe("counter");
    expect(sampleValue(exposition, metric, {method: "get_v1_node_version", status: "ok"})).toBe(1);
    // JSON-RPC 2.0: -32601 method not found, -32600 invalid request
    expect(sampleValue(exposition, metric, {method: "unknown", status: "-32601"})).toBe(40);
    expect(sampleValue(exposition, metric, {method: "unknown", status: "-32600"})).toBe(1);
    expect(labelValues(exposition, metric, "method")).toEqual(new Set(["get_v1_node_version", "unknown"]));
  });
});
