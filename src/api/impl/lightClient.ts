import {computeEpochAtSlot} from "@lodestar/state-transition";
import {toRootHex} from "@lodestar/utils";
import type {Forked} from "../../chain/lightClient/server.ts";
import {badRequest, notFound} from "../errors.ts";
import type {lightClientRoutes} from "../routes/lightClient.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";

/** Handlers of the light-client routes: what the chain's light-client server has derived. */

function versioned<T>(found: Forked<T> | null, what: string): {data: T; meta: {version: Forked<T>["fork"]}} {
  if (!found) throw notFound(`No ${what} is available`);
  return {data: found.value, meta: {version: found.fork}};
}

export const lightClientHandlers: Handlers<typeof lightClientRoutes, ApiContext> = {
  async getLightClientBootstrap({blockRoot}, {chain}) {
    const bootstrap = await chain.lightClient.getBootstrap(blockRoot);
    if (!bootstrap) throw notFound(`LightClientBootstrap unavailable for block root ${toRootHex(blockRoot)}`);
    return versioned(bootstrap, "LightClientBootstrap");
  },

  async getLightClientUpdatesByRange({startPeriod, count}, {chain}) {
    if (count === 0n) throw badRequest("Invalid count requested: count must be at least 1");
    // no period past 2^53 has an update; the server caps the count at MAX_REQUEST_LIGHT_CLIENT_UPDATES
    if (startPeriod > BigInt(Number.MAX_SAFE_INTEGER)) return {data: []};
    const updates = await chain.lightClient.getUpdates(Number(startPeriod), Number(count > 2n ** 32n ? 2n ** 32n : count));
    const {config} = chain;
    return {
      data: updates.map(({fork, value}) => ({
        version: fork,
        data: value,
        // the context is the fork digest at the attested header's epoch (beacon-apis updates.yaml)
        forkDigest: config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(computeEpochAtSlot(value.attestedHeader.beacon.slot))),
      })),
    };
  },

  async getLightClientFinalityUpdate(_args, {chain}) {
    return versioned(chain.lightClient.getFinalityUpdate(), "LightClientFinalityUpdate");
  },

  async getLightClientOptimisticUpdate(_args, {chain}) {
    return versioned(chain.lightClient.getOptimisticUpdate(), "LightClientOptimisticUpdate");
  },
};
