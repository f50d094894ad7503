import type {BeaconState} from "@lodestar/types";
import {type StateId, forkType, sszData, stateId, versionedChainMeta, type VersionedChainMeta} from "../codecs.ts";
import {route} from "./types.ts";

/** Routes of the Debug tag. */
export const debugRoutes = {
  getStateV2: route<{stateId: StateId}, BeaconState, VersionedChainMeta>({
    method: "GET",
    path: "/eth/v2/debug/beacon/states/{state_id}",
    version: 2,
    tag: "Debug",
    args: {stateId: {in: "path", name: "state_id", codec: stateId}},
    response: {kind: "data", data: sszData((meta) => forkType(meta.version, "BeaconState"), {ssz: true}), meta: versionedChainMeta},
    legacy: {method: "get_v1_debug_beacon_states_stateId", params: ["stateId"]},
  }),
};
