import {describe, expect, it} from "@jest/globals";
import {Registry} from "prom-client";
import {DEFAULT_CIRCUIT_BREAKER} from "../../../src/builder/circuitBreaker.ts";
import {observeBuilder} from "../../../src/builder/metrics.ts";
import {BuilderService} from "../../../src/builder/service.ts";
import {testConfig} from "../db/helpers.ts";

describe("builder metrics", () => {
  it("count payload choices by source and reason, and say whether the relay is up", async () => {
    const registry = new Registry();
    const service = new BuilderService(testConfig, {
      url: "http://127.0.0.1:1",
      headerTimeoutMs: 100,
      boostFactor: 100n,
      circuitBreaker: DEFAULT_CIRCUIT_BREAKER,
      registrationsFile: null,
      fetch: async () => new Response(null, {status: 500}),
    });
    observeBuilder(registry, service);
    service.countChoice("builder", "higher_value");
    service.countChoice("local", "timeout");
    service.countChoice("local", "timeout");
    service.onEpoch();
    await new Promise((r) => setTimeout(r, 10));
    const text = await registry.metrics();
    expect(text).toContain('beacon_gateway_builder_payload_choices_total{source="builder",reason="higher_value"} 1');
    expect(text).toContain('beacon_gateway_builder_payload_choices_total{source="local",reason="timeout"} 2');
    expect(text).toContain("beacon_gateway_builder_relay_up 0");
    expect(text).toContain("beacon_gateway_builder_circuit_breaker_tripped 0");
  });
});
