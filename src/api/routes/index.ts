import {beaconRoutes} from "./beacon.ts";
import {configRoutes} from "./config.ts";
import {debugRoutes} from "./debug.ts";
import {eventRoutes} from "./events.ts";
import {extRoutes} from "./ext.ts";
import {lightClientRoutes} from "./lightClient.ts";
import {nodeRoutes} from "./node.ts";
import {poolRoutes} from "./pool.ts";
import {rewardRoutes} from "./rewards.ts";
import {stateRoutes} from "./states.ts";
import type {Route, RouteDef} from "./types.ts";
import {validatorRoutes} from "./validator.ts";

/** The whole route table, keyed by the spec's operationId. */

const parts = [beaconRoutes, stateRoutes, rewardRoutes, poolRoutes, configRoutes, debugRoutes, eventRoutes, nodeRoutes, validatorRoutes, extRoutes, lightClientRoutes] as const;

type Definitions = typeof beaconRoutes & typeof stateRoutes & typeof rewardRoutes & typeof poolRoutes & typeof configRoutes & typeof debugRoutes & typeof eventRoutes & typeof nodeRoutes & typeof validatorRoutes & typeof extRoutes & typeof lightClientRoutes;
export type RouteTable = {[K in keyof Definitions]: Definitions[K] & {operationId: K}};
export type OperationId = keyof RouteTable;

/** Merges the tag tables; throws on a repeated operationId or a repeated method and path. */
export function mergeRoutes(tables: readonly Record<string, RouteDef<any, any, any>>[]): Record<string, Route> {
  const merged: Record<string, Route> = {};
  const endpoints = new Map<string, string>();
  for (const table of tables) {
    for (const [operationId, def] of Object.entries(table)) {
      if (operationId in merged) throw new Error(`Route table: operationId ${operationId} is defined twice`);
      const endpoint = `${def.method} ${def.path}`;
      const other = endpoints.get(endpoint);
      if (other) throw new Error(`Route table: ${endpoint} is used by both ${other} and ${operationId}`);
      endpoints.set(endpoint, operationId);
      merged[operationId] = {...def, operationId};
    }
  }
  return merged;
}

export const routes = mergeRoutes(parts) as RouteTable;
