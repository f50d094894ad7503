import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {ApiClientError, createApiClient, type Transport} from "../../../src/api/client.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import type {ValidatorBeaconApi} from "../../../src/validator/beaconApi.ts";
import {RouteFallbacks} from "../../../src/validator/routeFallback.ts";
import {captureLog} from "./captureLog.ts";

/**
 * The validator client against a node built before the newest routes: a transport standing in for
 * such a node answers the newer routes as Lodestar 1.5.1 does (404 "Route ... not found") and
 * records what it was asked. The newer route's own answers come from `api`, the plain client.
 */

const ROUTE_NOT_FOUND = (path: string) => ({status: 404, headers: {"content-type": "application/json"}, body: JSON.stringify({message: `Route ${path} not found`, error: "Not Found", statusCode: 404})});

function olderNode(lacks: string[]): {transport: Transport; asked: string[]} {
  const asked: string[] = [];
  const transport: Transport = async (route) => {
    asked.push(`${route.method} ${route.path}`);
    if (lacks.includes(route.path)) return ROUTE_NOT_FOUND(route.path);
    return {status: 200, headers: {}, body: undefined};
  };
  return {transport, asked};
}

/** A node with one validators route only: GET (POST answers "route not found"); records method, path and how many ids a GET asked for. */
function olderNodeLackingPost(): {transport: Transport; asked: string[]} {
  const asked: string[] = [];
  const transport: Transport = async (route, req) => {
    const path = route.path.replace("{state_id}", req.params.state_id ?? "");
    if (route.method === "POST") {
      asked.push(`POST ${path}`);
      return ROUTE_NOT_FOUND(path);
    }
    asked.push(`GET ${path}?${[req.query.id ?? []].flat().length}`);
    return {status: 200, headers: {"content-type": "application/json"}, body: JSON.stringify({data: [], execution_optimistic: false})};
  };
  return {transport, asked};
}

const attestation = ssz.phase0.Attestation.defaultValue();
const config = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "bellatrix", forkEpochs: {}}), new Uint8Array(32));

function setup(lacks: string[]) {
  const node = olderNode(lacks);
  const client = createApiClient(node.transport);
  const {log, lines} = captureLog();
  const fallbacks = new RouteFallbacks(client, log);
  // only the methods exercised here: the newest route of each, as createValidatorBeaconApi calls it
  const api = {
    submitAttestations: async (attestations, fork) => void (await client.request("submitPoolAttestationsV2", {attestations, fork})),
  } as Partial<ValidatorBeaconApi> as ValidatorBeaconApi;
  return {node, fallbacks, api: fallbacks.wrap(api, config), lines};
}

describe("route fallbacks", () => {
  it("pool attestations v2 → v1: chosen once for the node and fork, logged once, then used directly", async () => {
    const {node, api, fallbacks, lines} = setup(["/eth/v2/beacon/pool/attestations"]);
    await api.submitAttestations([attestation], ForkName.bellatrix);
    await api.submitAttestations([attestation], ForkName.bellatrix);
    expect(node.asked).toEqual(["POST /eth/v2/beacon/pool/attestations", "POST /eth/v1/beacon/pool/attestations", "POST /eth/v1/beacon/pool/attestations"]);
    expect(fallbacks.choice("submitPoolAttestationsV2", ForkName.bellatrix)).toBe("older");
    expect(lines).toEqual([
      {
        level: "info",
        fields: {fork: "bellatrix", status: 404, lacking: "POST /eth/v2/beacon/pool/attestations", using: "POST /eth/v1/beacon/pool/attestations"},
        msg: "Beacon node lacks a route: using the older one",
      },
    ]);
  });

  it("validators by POST → GET, at most 64 ids a request (the GET route's maxItems)", async () => {
    const node = olderNodeLackingPost();
    const client = createApiClient(node.transport);
    const plain = {
      getValidators: async (ids: Uint8Array[]) => (await client.request("postStateValidators", {stateId: "head", filter: {ids, statuses: []}})).data as never,
    } as Partial<ValidatorBeaconApi> as ValidatorBeaconApi;
    const api = new RouteFallbacks(client, captureLog().log).wrap(plain, config);
    await api.getValidators(Array.from({length: 70}, (_, i) => new Uint8Array(48).fill(i)));
    expect(node.asked).toEqual(["POST /eth/v1/beacon/states/head/validators", "GET /eth/v1/beacon/states/head/validators?64", "GET /eth/v1/beacon/states/head/validators?6"]);
  });

  it("calls running alongside choose once and log once", async () => {
    const {api, lines} = setup(["/eth/v2/beacon/pool/attestations"]);
    await Promise.all([1, 2, 3].map(() => api.submitAttestations([attestation], ForkName.bellatrix)));
    expect(lines).toHaveLength(1);
  });

  it("a node that serves the newer route keeps it", async () => {
    const {node, api, fallbacks, lines} = setup([]);
    await api.submitAttestations([attestation], ForkName.bellatrix);
    expect(node.asked).toEqual(["POST /eth/v2/beacon/pool/attestations"]);
    expect(fallbacks.choice("submitPoolAttestationsV2", ForkName.bellatrix)).toBe("newer");
    expect(lines).toEqual([]);
  });

  it("from electra on there is no v1 route to fall back to: the newer route's error stands", async () => {
    const {node, api} = setup(["/eth/v2/beacon/pool/attestations"]);
    const single = {...ssz.electra.SingleAttestation.defaultValue(), data: attestation.data};
    await expect(api.submitAttestations([single], ForkName.electra)).rejects.toMatchObject({status: 404, message: "Route /eth/v2/beacon/pool/attestations not found"});
    expect(node.asked).toEqual(["POST /eth/v2/beacon/pool/attestations"]);
  });

  it("only 'no such route' falls back; other errors, and a newer route that has worked, stay as they are", async () => {
    const {fallbacks} = setup([]);
    const older = async () => "older";
    const fail = (status: number) => async (): Promise<string> => {
      throw new ApiClientError(status, {message: `HTTP ${status}`});
    };
    await expect(fallbacks.call("produceBlockV3", "produceBlockV2", "bellatrix", fail(500), older)).rejects.toMatchObject({status: 500});
    await expect(fallbacks.call("produceBlockV3", "produceBlockV2", "bellatrix", fail(400), older)).rejects.toMatchObject({status: 400});
    expect(await fallbacks.call("produceBlockV3", "produceBlockV2", "capella", async () => "newer", older)).toBe("newer");
    await expect(fallbacks.call("produceBlockV3", "produceBlockV2", "capella", fail(404), older)).rejects.toMatchObject({status: 404});
    // per fork: bellatrix still falls back
    expect(await fallbacks.call("produceBlockV3", "produceBlockV2", "bellatrix", fail(404), older)).toBe("older");
  });

  it("when the older route is missing too, nothing is chosen and the newer route's error is the answer", async () => {
    const {fallbacks} = setup([]);
    const missing = (message: string) => async (): Promise<string> => {
      throw new ApiClientError(404, {message});
    };
    await expect(fallbacks.call("produceBlockV3", "produceBlockV2", "bellatrix", missing("no v3"), missing("no v2"))).rejects.toThrow("no v3");
    expect(fallbacks.choice("produceBlockV3", "bellatrix")).toBeUndefined();
  });
});
