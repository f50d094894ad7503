import type {BeaconState} from "@lodestar/types";
import type {debugRoutes} from "../routes/debug.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";
import {resolveState} from "./resolve.ts";

export const debugHandlers: Handlers<typeof debugRoutes, ApiContext> = {
  async getStateV2({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: state.toValue() as BeaconState, meta: {version: chain.config.getForkName(state.slot), ...meta}};
  },
};
