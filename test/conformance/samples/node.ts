import {UNKNOWN_ROOT, type Sample} from "../sampleContext.ts";

/** Samples of the Node, Config, Debug and Events tags. */

export const nodeSamples: Record<string, Sample> = {
  getNodeVersion: () => [{label: "version", status: 200}],
  getSyncingStatus: () => [{label: "syncing", status: 200}],
  getHealth: () => [
    {label: "synced", status: 200},
    {label: "synced, with a syncing status", query: {syncing_status: 299}, status: 200},
    {label: "malformed syncing status", query: {syncing_status: "soon"}, status: 400},
  ],

  getSpec: () => [{label: "spec", status: 200}],
  getForkSchedule: () => [{label: "fork schedule", status: 200}],
  getDepositContract: () => [{label: "deposit contract", status: 200}],

  getNetworkIdentity: () => [{label: "identity", status: 200}],
  getPeers: () => [
    {label: "all", status: 200},
    {label: "connected outbound", query: {state: "connected", direction: "outbound"}, status: 200},
  ],
  getPeer: () => [
    {label: "a peer the node does not know", params: {peer_id: "16Uiu2HAmPLe7Mzm8TsYUubgCAW1aJoeFScxrLj8ppHFivPo97bUZ"}, status: 404},
    {label: "malformed id", params: {peer_id: "not-a-peer"}, status: 400},
  ],
  getPeerCount: () => [{label: "count", status: 200}],

  getStateV2: () => [
    {label: "head", params: {state_id: "head"}, status: 200},
    {label: "finalized", params: {state_id: "finalized"}, status: 200},
    {label: "unknown state root", params: {state_id: UNKNOWN_ROOT}, status: 404},
    {label: "malformed id", params: {state_id: "latest"}, status: 400},
  ],

  getState: () => [
    {label: "an electra state in the phase0 form", params: {state_id: "head"}, status: 400},
    {label: "unknown state root", params: {state_id: UNKNOWN_ROOT}, status: 404},
  ],
  getDebugChainHeadsV2: () => [{label: "heads", status: 200}],
  getDebugChainHeads: () => [{label: "heads", status: 200}],
  getDebugForkChoice: () => [{label: "fork choice", status: 200}],
  getDebugDataColumnSidecars: () => [
    {label: "head", params: {block_id: "head"}, status: 200},
    {label: "some columns", params: {block_id: "head"}, query: {indices: "0,1"}, status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
    {label: "malformed column", params: {block_id: "head"}, query: {indices: "first"}, status: 400},
  ],

  eventstream: () => [
    {label: "head and block", query: {topics: "head,block"}, status: 200, events: 2},
    {label: "light-client optimistic updates", query: {topics: "light_client_optimistic_update"}, status: 200, events: 1},
    {label: "unknown topic", query: {topics: "weather"}, status: 400},
  ],
};
