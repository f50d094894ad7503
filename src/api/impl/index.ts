import type {RouteTable} from "../routes/index.ts";
import type {Handlers} from "../routes/types.ts";
import {beaconHandlers} from "./beacon.ts";
import {configHandlers} from "./config.ts";
import {debugHandlers} from "./debug.ts";
import type {ApiContext} from "./context.ts";
import {eventHandlers} from "./events.ts";
import {extHandlers} from "./ext.ts";
import {lightClientHandlers} from "./lightClient.ts";
import {nodeHandlers} from "./node.ts";
import {poolHandlers} from "./pool.ts";
import {rewardHandlers} from "./rewards.ts";
import {stateHandlers} from "./states.ts";
import {validatorHandlers} from "./validator.ts";

export type {ApiContext, NodeContext} from "./context.ts";

/** One handler per route of the table (a route without one does not compile). */
export const handlers: Handlers<RouteTable, ApiContext> = {
  ...beaconHandlers,
  ...stateHandlers,
  ...rewardHandlers,
  ...poolHandlers,
  ...configHandlers,
  ...debugHandlers,
  ...eventHandlers,
  ...nodeHandlers,
  ...validatorHandlers,
  ...extHandlers,
  ...lightClientHandlers,
};
