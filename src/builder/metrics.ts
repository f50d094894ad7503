import {Counter, Gauge, type Registry} from "prom-client";
import type {BuilderService} from "./service.ts";

/**
 * With `--metrics`: each proposal's payload choice by source and reason, whether the relay
 * answered its last status request, and whether the circuit breaker is tripped.
 */
export function observeBuilder(registry: Registry, service: BuilderService): void {
  const registers = [registry];
  const choices = new Counter({
    name: "beacon_gateway_builder_payload_choices_total",
    help: "proposals' payloads by source (builder, local) and reason (higher_value, local_failed, no_bid, timeout, invalid_bid, relay_error, not_registered, circuit_breaker)",
    labelNames: ["source", "reason"],
    registers,
  });
  service.onChoice = (source, reason) => choices.inc({source, reason});
  new Gauge({
    name: "beacon_gateway_builder_relay_up",
    help: "1 when the relay answered its last status request (each epoch), 0 when it did not",
    registers,
    collect() {
      this.set(service.isRelayUp() ? 1 : 0);
    },
  });
  new Gauge({
    name: "beacon_gateway_builder_circuit_breaker_tripped",
    help: "1 while the circuit breaker keeps proposals on local payloads",
    registers,
    collect() {
      this.set(service.circuitBreakerTripped ? 1 : 0);
    },
  });
}
