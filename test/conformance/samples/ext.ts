import type {Sample, SampleRequest} from "../sampleContext.ts";

/** Samples of the node's extension endpoints (`/ext/v1`, outside the OpenAPI spec: status and shape checks). */

const plain = (label = "read"): SampleRequest[] => [{label, status: 200}];

export const extSamples: Record<string, Sample> = {
  getGraffiti: () => plain(),
  setGraffiti: () => [
    {label: "text", headers: {"content-type": "text/plain"}, rawBody: "conformance", status: 200},
    {label: "0x hex as JSON", body: "0x" + "63".repeat(4), status: 200},
    {label: "longer than 32 bytes", headers: {"content-type": "text/plain"}, rawBody: "x".repeat(33), status: 400},
    {label: "empty", headers: {"content-type": "text/plain"}, rawBody: "", status: 400},
  ],
  // the node runs in this process: set the level the test started it with
  setLogLevel: () => [
    {label: "by query", query: {log_level: "WARN"}, status: 200},
    {label: "as text", headers: {"content-type": "text/plain"}, rawBody: "WARN", status: 200},
    {label: "unknown level", query: {log_level: "LOUD"}, status: 400},
  ],
  getChainHead: () => plain(),
  getNetworkPeerIds: () => plain(),
  getNetworkPeers: () => plain(),
  getEth1Chain: () => plain(),
  getEth1ProposalData: () => plain(),
  getDebugTasks: () => plain(),
  getDebugGossipPeers: () => plain(),
};
