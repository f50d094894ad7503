import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {Transport} from "../../src/api/client.ts";
import type {WireRequest, WireResponse} from "../../src/api/wire.ts";
import {legacyMethods, paramCount, type LegacyParam} from "../../compat/methods.ts";
import {startCompatServer, type CompatServer} from "../../compat/http.ts";
import {plain, postRpc} from "./helpers.ts";
import {validatorResponseJson} from "../validatorJson.ts";

/**
 * The JSON-RPC protocol of compat over HTTP, in front of a stub REST transport: envelopes,
 * errors, batches, params checking, what the REST request looks like, and the encoding.
 */

const FAR_FUTURE = "18446744073709551615";
const ROOT = "0x" + "11".repeat(32);

/** Slots per epoch 32; electra from epoch 10 */
const SPEC = {SECONDS_PER_SLOT: "12", SLOTS_PER_EPOCH: "32", PRESET_BASE: "mainnet", ALTAIR_FORK_EPOCH: "1", ELECTRA_FORK_EPOCH: "10", FAR_FUTURE_EPOCH: FAR_FUTURE};
const json = (status: number, body: unknown): WireResponse => ({status, headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
const chain = {execution_optimistic: false, finalized: true};

/** What the stub REST API answers, by operationId; every request it gets is kept. */
const answers: Record<string, (req: WireRequest) => WireResponse> = {
  getGenesis: () => json(200, {data: {genesis_time: "1606824023", genesis_validators_root: ROOT, genesis_fork_version: "0x00000000"}}),
  getStateRoot: (req) =>
    req.params.state_id === "head" ? json(200, {...chain, data: {root: ROOT}}) : json(404, {code: 404, message: `State not found: ${req.params.state_id}`}),
  getStateValidator: () => json(200, {...chain, data: validatorResponseJson}),
  getStateValidators: () => json(200, {...chain, data: [validatorResponseJson]}),
  getSpec: () => json(200, {data: SPEC}),
  getNodeVersion: () => json(200, {data: {version: "12345"}}),
  getSyncingStatus: () => json(200, {data: {head_slot: "9", sync_distance: "0", is_syncing: false, is_optimistic: false, el_offline: false}}),
  setGraffiti: () => json(200, {data: true}),
  submitPoolAttestationsV2: () => ({status: 200, headers: {}}),
  getBlockRoot: () => json(200, {...chain, data: {root: ROOT}}),
  getDebugChainHeadsV2: () => json(200, {data: [{root: ROOT, slot: "7", execution_optimistic: false}]}),
  getHealth: () => ({status: health, headers: {}}),
  getChainHead: () => json(404, {code: 404, message: "Route not found"}),
};
let health = 206;
const seen: {operationId: string; req: WireRequest}[] = [];
const stub: Transport = async (route, req) => {
  seen.push({operationId: route.operationId, req});
  const answer = answers[route.operationId];
  if (!answer) throw new Error(`stub has no answer for ${route.operationId}`);
  return answer(req);
};
/** A value each kind of param takes (the params before a mistyped one must pass). */
function validParam(param: LegacyParam): unknown {
  if (param.def.in === "body") return param.def.text ? "text" : {};
  const examples: Record<string, unknown> = {state_id: "head", block_id: "head", validator_id: 1, epoch: 1, slot: 1, peer_id: "16Uiu2HAm", attestation_data_root: ROOT, randao_reveal: "0x" + "aa".repeat(96)};
  return examples[param.def.name] ?? 0;
}
const lastRequest = (operationId: string): WireRequest => seen.filter((s) => s.operationId === operationId).at(-1)!.req;

let legacy: CompatServer;
let rest: CompatServer;
let proxy: CompatServer;
const url = (s: CompatServer) => `http://127.0.0.1:${s.port}/`;
const call = (method: string, params?: unknown, id: unknown = 1) => ({jsonrpc: "2.0", id, method, ...(params === undefined ? {} : {params})});

/** One call (on the legacy-encoding server unless told): the reply, parsed. */
async function rpc(method: string, params?: unknown, server = () => legacy): Promise<any> {
  const reply = await postRpc(url(server()), call(method, params));
  expect(reply.status).toBe(200);
  return JSON.parse(reply.text);
}

beforeAll(async () => {
  legacy = await startCompatServer({transport: stub, encoding: "legacy", port: 0, address: "127.0.0.1"});
  rest = await startCompatServer({transport: stub, encoding: "rest", port: 0, address: "127.0.0.1"});
  proxy = await startCompatServer({transport: stub, encoding: "legacy", port: 0, address: "127.0.0.1", upstream: "http://upstream.example:5052"});
});
afterAll(async () => {
  await Promise.all([legacy?.close(), rest?.close(), proxy?.close()]);
});

describe("JSON-RPC envelopes", () => {
  it("answers malformed JSON with -32700 and id null", async () => {
    const reply = JSON.parse((await postRpc(url(legacy), '{"jsonrpc": "2.0", "method": ')).text);
    expect(reply).toMatchObject({jsonrpc: "2.0", id: null, error: {code: -32700, message: "Parse error"}});
    expect(typeof reply.error.data).toBe("string");
  });

  it("answers an invalid request with -32600, keeping a readable id", async () => {
    for (const [bad, id] of [
      [{id: 1, method: "get_v1_beacon_genesis"}, 1],
      [{jsonrpc: "2.0", id: "x", method: 7}, "x"],
      [{jsonrpc: "2.0", id: 3, method: "x", params: 5}, 3],
      [{jsonrpc: "1.0", id: null, method: "get_v1_beacon_genesis"}, null],
      [{jsonrpc: "2.0", id: {not: "an id"}, method: "get_v1_beacon_genesis"}, null],
      [{jsonrpc: "2.0", id: [1], method: 7}, null],
      ["[]", null],
      ["5", null],
    ] as const) {
      const reply = JSON.parse((await postRpc(url(legacy), bad)).text);
      expect(reply).toMatchObject({jsonrpc: "2.0", id, error: {code: -32600, message: expect.stringMatching(/^Invalid Request: /)}});
    }
  });

  it("answers an unknown method with -32601, keeping the id", async () => {
    expect(await rpc("get_v1_no_such_method", [])).toMatchObject({id: 1, error: {code: -32601}});
  });

  it("takes POST with application/json only", async () => {
    expect((await fetch(url(legacy))).status).toBe(405);
    expect((await postRpc(url(legacy), call("get_v1_beacon_genesis", []), "text/plain")).status).toBe(415);
  });

  it("answers a batch call by call, each with its own id, and nothing for notifications", async () => {
    const batch = [
      call("get_v1_beacon_genesis", [], "a"),
      call("get_v1_no_such_method", [], 7),
      {jsonrpc: "2.0", method: "get_v1_beacon_genesis", params: []},
      call("get_v1_beacon_states_root", ["finalized"], "c"),
      {not: "a call"},
    ];
    const reply = JSON.parse((await postRpc(url(legacy), batch)).text);
    expect(reply).toHaveLength(4);
    const byId = new Map(reply.map((r: {id: unknown}) => [r.id, r]));
    expect(byId.get("a")).toMatchObject({result: {genesis_time: 1606824023}});
    expect(byId.get(7)).toMatchObject({error: {code: -32601}});
    expect(byId.get("c")).toMatchObject({error: {code: -32000, data: {status: 404, message: "State not found: finalized"}}});
    expect(byId.get(null)).toMatchObject({error: {code: -32600, message: "Invalid Request: jsonrpc must be \"2.0\""}});
  });

  it("answers a lone notification with 204 and no body", async () => {
    const reply = await postRpc(url(legacy), {jsonrpc: "2.0", method: "get_v1_beacon_genesis", params: []});
    expect(reply).toEqual({status: 204, text: ""});
  });
});

describe("params", () => {
  it("answers a wrong count with -32602 naming the params", async () => {
    const few = await rpc("get_v1_beacon_states_stateId_validators_validatorId", ["head"]);
    expect(few.error.code).toBe(-32602);
    expect(few.error.message).toContain("[stateId, validatorId], got 1");
    const many = await rpc("get_v1_beacon_genesis", ["extra"]);
    expect(many.error).toMatchObject({code: -32602, message: expect.stringContaining("takes 0 params")});
    const range = await rpc("get_v1_beacon_states_stateId_validators", []);
    expect(range.error.message).toContain("takes 1 to 3 params [stateId, id, status], got 0");
  });

  it("answers a param of the wrong type with -32602 naming it", async () => {
    const reply = await rpc("get_v1_beacon_states_root", [{state: "head"}]);
    expect(reply.error).toMatchObject({code: -32602, message: expect.stringContaining("param 1 (stateId) must be a string or a non-negative integer")});
    expect((await rpc("get_v1_beacon_states_root", [-1])).error.message).toContain("(stateId)");
    expect((await rpc("setGraffiti", [42])).error.message).toContain("param 1 (graffiti) must be a string");
    expect((await rpc("post_v1_beacon_pool_attestations", ["x"])).error.message).toContain("(attestations) must be a JSON object or array");
    expect((await rpc("get_v1_beacon_states_root", {stateId: "head"})).error).toMatchObject({code: -32602, message: expect.stringContaining("positional")});
    expect((await rpc("get_v1_beacon_states_root", [null])).error.message).toContain("(stateId) is required");
  });

  it("answers a missing param with -32602 where REST would take it elsewhere (setLogLevel's level)", async () => {
    for (const params of [[], [null]]) {
      const reply = await rpc("setLogLevel", params);
      expect(reply.error).toMatchObject({code: -32602, message: expect.stringContaining("directive")});
    }
    expect(seen.some((s) => s.operationId === "setLogLevel")).toBe(false);
  });

  it("answers a value the route's parser refuses with -32602 naming the param, before any REST call", async () => {
    const before = seen.length;
    for (const [method, params, name] of [
      ["get_v1_beacon_states_root", ["tomorrow"], "stateId"],
      ["get_v1_beacon_blocks_blockId_root", ["justified"], "blockId"],
      ["get_v1_beacon_states_stateId_validators", ["head", ["not-a-key"]], "id"],
      ["get_v1_beacon_states_stateId_validators", ["head", [], ["sleeping"]], "status"],
      ["get_v1_validator_duties_proposer", ["0x12"], "epoch"],
      ["get_v1_beacon_headers", [1, "0x12"], "parentRoot"],
    ] as const) {
      const reply = await rpc(method, [...params]);
      expect({method, error: reply.error}).toMatchObject({method, error: {code: -32602, message: expect.stringContaining(`(${name}) is invalid`)}});
    }
    expect(seen.length).toBe(before);
  });

  it("answers -32602 for every method called without its required params or with a mistyped one, before any REST call", async () => {
    const before = seen.length;
    for (const method of legacyMethods.values()) {
      const {min} = paramCount(method);
      if (min > 0) {
        const reply = await rpc(method.name, []);
        expect({method: method.name, code: reply.error?.code}).toEqual({method: method.name, code: -32602});
      }
      for (const [i, param] of method.params.entries()) {
        // an object where REST takes text, a number where it takes a JSON body or text
        const bad = param.def.in === "body" ? 42 : {not: "a value"};
        const params = method.params.map((p, j) => (j === i ? bad : validParam(p)));
        const reply = await rpc(method.name, params);
        expect({method: method.name, param: param.name, code: reply.error?.code, names: reply.error?.message?.includes(`(${param.name})`)}).toEqual({
          method: method.name,
          param: param.name,
          code: -32602,
          names: true,
        });
      }
    }
    expect(seen.length).toBe(before);
  });

  it("puts params where REST takes them: path, query lists, and exact integers", async () => {
    await rpc("get_v1_beacon_states_stateId_validators_validatorId", [12, "9007199254740991"]);
    expect(lastRequest("getStateValidator").params).toEqual({state_id: "12", validator_id: "9007199254740991"});
    // a uint64 sent as a JSON number is read with all its digits: REST gets them, or the refusal quotes them
    const big = JSON.parse((await postRpc(url(legacy), `{"jsonrpc":"2.0","id":1,"method":"get_v1_beacon_states_stateId_validators_validatorId","params":["head",${FAR_FUTURE}]}`)).text);
    const arrived = big.error ? big.error.message : lastRequest("getStateValidator").params.validator_id;
    expect(arrived).toContain(FAR_FUTURE);
    await rpc("get_v1_beacon_states_stateId_validators", ["head", [1, "0x" + "aa".repeat(48)], null]);
    expect(lastRequest("getStateValidators").query).toEqual({id: ["1", "0x" + "aa".repeat(48)]});
  });

  it("sends one attestation as a list of one, with integers as decimal strings, and the fork of its slot", async () => {
    const attestation = {aggregation_bits: "0x03", data: {slot: 5, index: 0}, signature: "0x00"};
    expect((await rpc("post_v1_beacon_pool_attestations", [attestation])).result).toBe(true);
    const sent = lastRequest("submitPoolAttestationsV2");
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.headers["eth-consensus-version"]).toBe("phase0");
    expect(JSON.parse(new TextDecoder().decode(sent.body))).toEqual([{...attestation, data: {slot: "5", index: "0"}}]);
    // epoch 10 (slot 320) is electra in the stub's spec; epoch 1 altair
    await rpc("post_v1_beacon_pool_attestations", [[{...attestation, data: {slot: 320, index: 0}}]]);
    expect(lastRequest("submitPoolAttestationsV2").headers["eth-consensus-version"]).toBe("electra");
    await rpc("post_v1_beacon_pool_attestations", [{...attestation, data: {slot: "319", index: 0}}]);
    expect(lastRequest("submitPoolAttestationsV2").headers["eth-consensus-version"]).toBe("altair");
  });

  it("answers a body without the slot its fork is read from with -32602", async () => {
    const reply = await rpc("post_v1_beacon_pool_attestations", [{aggregation_bits: "0x03", data: {}, signature: "0x00"}]);
    expect(reply.error).toMatchObject({code: -32602, message: expect.stringContaining("(attestations) has no slot")});
  });

  it("sends setGraffiti's text as a text/plain body", async () => {
    expect((await rpc("setGraffiti", ["gm 42"])).result).toBe(true);
    const sent = lastRequest("setGraffiti");
    expect(sent.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(new TextDecoder().decode(sent.body)).toBe("gm 42");
  });
});

describe("results", () => {
  it("writes integers as exact JSON numbers, and leaves text alone", async () => {
    const reply = await postRpc(url(legacy), call("get_v1_beacon_states_stateId_validators_validatorId", ["head", 3]));
    expect(reply.text).toContain(`"exit_epoch":${FAR_FUTURE},"withdrawable_epoch":${FAR_FUTURE}`);
    expect(reply.text).toContain('"index":3,"balance":32000000000,"status":"active_ongoing"');
    // the node version is text even when it looks like a number; the config spec's values are text in its schema
    expect((await rpc("getNodeVersion", [])).result).toBe("12345");
    expect((await rpc("get_v1_config_spec", [])).result).toEqual(SPEC);
  });

  it("gives the REST data unchanged with --rpc-encoding rest", async () => {
    const reply = await rpc("get_v1_beacon_states_stateId_validators_validatorId", ["head", 3], () => rest);
    expect(plain(reply.result)).toEqual(validatorResponseJson);
  });

  it("reads what the removed server answered: a field, a status inside an object, some fields of each item", async () => {
    expect((await rpc("getSyncing", [])).result).toBe(false);
    expect((await rpc("get_v1_node_health", [])).result).toEqual({health: 206});
    // an unhealthy node: the removed server answered {"health": 503}, not an error
    health = 503;
    expect((await rpc("get_v1_node_health", [])).result).toEqual({health: 503});
    health = 206;
    expect((await rpc("get_v1_beacon_blocks_blockId_root", ["head"])).result).toBe(ROOT);
    expect((await rpc("get_v1_beacon_states_root", ["head"])).result).toBe(ROOT);
    expect((await postRpc(url(legacy), call("get_v1_debug_beacon_heads", []))).text).toContain(`"result":[{"root":"${ROOT}","slot":7}]`);
    expect((await rpc("get_v1_debug_beacon_heads", [], () => rest)).result).toEqual([{root: ROOT, slot: "7"}]);
  });

  it("turns a REST error into -32000 carrying the REST status and message", async () => {
    expect(plain(await rpc("get_v1_beacon_states_root", ["genesis"]))).toMatchObject({
      id: 1,
      error: {code: -32000, message: "State not found: genesis", data: {status: 404, message: "State not found: genesis"}},
    });
  });

  it("names the missing extension endpoint when the upstream lacks it", async () => {
    const reply = plain(await rpc("getChainHead", [], () => proxy));
    expect(reply.error.code).toBe(-32601);
    expect(reply.error.message).toBe(
      "getChainHead needs GET /ext/v1/chain/head, an extension endpoint of beacon-gateway, which the beacon node at http://upstream.example:5052 does not serve (HTTP 404)"
    );
    expect(reply.error.data).toEqual({status: 404, message: "Route not found"});
  });
});
