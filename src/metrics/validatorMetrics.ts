import {Counter, Gauge, Registry, collectDefaultMetrics} from "prom-client";
import {createDutyMetrics, type DutyMetrics} from "./nodeMetrics.ts";

/** Why a request to a beacon node failed: no connection or a dropped one, no answer in time, an error answer, an answer that could not be read. */
export type BeaconNodeFailure = "unreachable" | "timeout" | "http_error" | "bad_answer";

/** What the validator client reports of its beacon nodes, each named by its URL (without credentials). */
export interface BeaconNodeMetrics {
  request(node: string): void;
  failure(node: string, reason: BeaconNodeFailure): void;
  /** the node duties go to first now (null: none usable) */
  setPrimary(node: string | null): void;
  /** whether the node was synced and answering at its last check */
  setHealthy(node: string, healthy: boolean): void;
}

/** `beacon-gateway validator --metrics`: the process's own registry with its duties and beacon nodes. */
export interface ValidatorClientMetrics {
  readonly registry: Registry;
  readonly duties: DutyMetrics;
  readonly beaconNodes: BeaconNodeMetrics;
}

export function createValidatorClientMetrics(nodes: string[]): ValidatorClientMetrics {
  const registry = new Registry();
  collectDefaultMetrics({register: registry});
  const registers = [registry];
  const requests = new Counter({
    name: "beacon_gateway_validator_beacon_node_requests_total",
    help: "requests made to each beacon node (duties, publications, health checks)",
    labelNames: ["node"],
    registers,
  });
  const failures = new Counter({
    name: "beacon_gateway_validator_beacon_node_request_failures_total",
    help: "requests to each beacon node that failed, by reason (unreachable, timeout, http_error, bad_answer)",
    labelNames: ["node", "reason"],
    registers,
  });
  const primary = new Gauge({
    name: "beacon_gateway_validator_beacon_node_primary",
    help: "1 for the beacon node duties go to first, 0 for the others",
    labelNames: ["node"],
    registers,
  });
  const healthy = new Gauge({
    name: "beacon_gateway_validator_beacon_node_healthy",
    help: "1 if the beacon node answered its last check synced (not syncing, not optimistic, execution client online), else 0",
    labelNames: ["node"],
    registers,
  });
  // every node's series exists from the start, at 0
  for (const node of nodes) {
    requests.inc({node}, 0);
    primary.set({node}, 0);
    healthy.set({node}, 0);
  }
  return {
    registry,
    duties: createDutyMetrics(registry),
    beaconNodes: {
      request: (node) => requests.inc({node}),
      failure: (node, reason) => failures.inc({node, reason}),
      setPrimary: (chosen) => {
        for (const node of nodes) primary.set({node}, node === chosen ? 1 : 0);
      },
      setHealthy: (node, value) => healthy.set({node}, value ? 1 : 0),
    },
  };
}
