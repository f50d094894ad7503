import type {RouteTable} from "../routes/index.ts";
import type {Handlers} from "../routes/types.ts";
import {beaconHandlers} from "./beacon.ts";
import {configHandlers} from "./config.ts";
import {debugHandlers} from "./debug.ts";
import type {ApiContext} from "./context.ts";
import {nodeHandlers} from "./node.ts";
import {poolHandlers} from "./pool.ts";
import {validatorHandlers} from "./validator.ts";

export type {ApiContext, NodeContext} from "./context.ts";

/** One handler per route of the table (a route without one does not compile). */
export const handlers: Handlers<RouteTable, ApiContext> = {
  ...beaconHandlers,
  ...poolHandlers,
  ...configHandlers,
  ...debugHandlers,
  ...nodeHandlers,
  ...validatorHandlers,
};
