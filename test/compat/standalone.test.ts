import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createServer, type Server} from "node:http";
import type {AddressInfo} from "node:net";
import {startCompatServer, type CompatServer} from "../../compat/http.ts";
import {httpTransport} from "../../src/api/client.ts";
import {NodeProcess, tempDataDir} from "../e2e/nodeProcess.ts";
import {compareLegacy, parseExact, plain, postRpc, runCompatCheck} from "./helpers.ts";

/**
 * `beacon-gateway compat --upstream URL` as its own process, in front of a node started as
 * another process: calls go over HTTP to the node's REST API, and `compat check` finds both
 * protocols agreeing. And in front of a beacon node
 * without beacon-gateway's /ext/v1 endpoints (the same node behind a proxy that hides them),
 * the extension methods answer an error naming the missing endpoint.
 */

const FAR_FUTURE_EPOCH = "18446744073709551615";
const data = tempDataDir("compat-node");
const procs: NodeProcess[] = [];
let restUrl: string;
let rpcUrl: string;

async function restData(path: string, init?: RequestInit): Promise<unknown> {
  const res = await fetch(restUrl + path, init);
  expect(res.status).toBe(200);
  return ((await res.json()) as {data: unknown}).data;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<{text: string; reply: any}> {
  const {status, text} = await postRpc(url, {jsonrpc: "2.0", id: 1, method, params});
  expect(status).toBe(200);
  return {text, reply: parseExact(text)};
}

beforeAll(async () => {
  const node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--data-dir", data.dir, "--seconds-per-slot", "1", "--dev-validators", "none"]);
  procs.push(node);
  restUrl = await node.restUrl();
  const compat = new NodeProcess(["compat", "--upstream", restUrl, "--rpc-port", "0"]);
  procs.push(compat);
  const listening = await compat.waitForLog((l) => l.msg === "JSON-RPC listening", 60_000, "JSON-RPC to listen");
  expect(listening).toMatchObject({upstream: restUrl, encoding: "legacy", address: "127.0.0.1"});
  rpcUrl = `http://127.0.0.1:${listening.port}/`;
}, 90_000);

afterAll(async () => {
  for (const p of procs) await p.stop("SIGTERM");
  data.remove();
});

describe("beacon-gateway compat --upstream", () => {
  it("answers standard methods from the upstream's REST API, integers as exact numbers", async () => {
    for (const [method, params, path] of [
      ["get_v1_beacon_genesis", [], "/eth/v1/beacon/genesis"],
      ["get_v1_beacon_states_stateId_validators", ["genesis", [0, 1]], "/eth/v1/beacon/states/genesis/validators?id=0,1"],
      ["get_v1_config_fork_schedule", [], "/eth/v1/config/fork_schedule"],
      ["get_v1_beacon_headers_blockId", ["genesis"], "/eth/v1/beacon/headers/genesis"],
    ] as const) {
      const {reply} = await rpc(rpcUrl, method, [...params]);
      const rest = await restData(path);
      expect({method, ...compareLegacy(reply.result, rest)}).toEqual({method, differences: [], unconverted: []});
    }
    const {text} = await rpc(rpcUrl, "get_v1_beacon_states_stateId_validators_validatorId", ["genesis", 0]);
    expect(text).toContain(`"exit_epoch":${FAR_FUTURE_EPOCH}`);
  });

  it("answers extension methods from the upstream's standard answers and beacon-gateway's /ext/v1 endpoints", async () => {
    expect((await rpc(rpcUrl, "getNetworkEnr", [])).reply.result).toBe(((await restData("/eth/v1/node/identity")) as {enr: string}).enr);
    expect((await rpc(rpcUrl, "setGraffiti", ["standalone"])).reply.result).toBe(true);
    expect(await restData("/ext/v1/graffiti")).toMatchObject({text: "standalone"});
  });

  it("agrees with the upstream's REST API method by method (compat check)", async () => {
    const {code, stdout} = await runCompatCheck(rpcUrl, restUrl);
    expect({code, differ: stdout.split("\n").filter((line) => line.startsWith("differ"))}).toEqual({code: 0, differ: []});
  }, 60_000);

  it("passes REST errors on, and answers batches", async () => {
    const batch = [
      {jsonrpc: "2.0", id: "bad", method: "get_v1_beacon_states_root", params: ["0x" + "ab".repeat(32)]},
      {jsonrpc: "2.0", id: "good", method: "get_v1_node_version", params: []},
    ];
    const replies = JSON.parse((await postRpc(rpcUrl, batch)).text);
    const byId = Object.fromEntries(replies.map((r: {id: string}) => [r.id, r]));
    expect(byId.bad.error).toMatchObject({code: -32000, data: {status: 404}});
    expect(byId.good.result).toEqual(await restData("/eth/v1/node/version"));
  });
});

describe("compat in front of a beacon node without the /ext/v1 endpoints", () => {
  let proxy: Server;
  let compat: CompatServer;
  beforeAll(async () => {
    // the standard API of the node, and 404 for its extension endpoints, as another client would answer
    proxy = createServer(async (req, res) => {
      if (req.url!.startsWith("/ext/")) return void res.writeHead(404, {"content-type": "application/json"}).end('{"code":404,"message":"NOT_FOUND"}');
      const upstream = await fetch(restUrl + req.url, {method: req.method, headers: {accept: "application/json"}});
      res.writeHead(upstream.status, {"content-type": upstream.headers.get("content-type") ?? "application/json"}).end(await upstream.text());
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => proxy.once("listening", resolve));
    const upstream = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    compat = await startCompatServer({transport: httpTransport(upstream), upstream, encoding: "legacy", port: 0, address: "127.0.0.1"});
  });
  afterAll(async () => {
    await compat?.close();
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
  });

  it("serves the standard methods and names the missing endpoint for the extension ones", async () => {
    const url = `http://127.0.0.1:${compat.port}/`;
    expect((await rpc(url, "get_v1_node_version", [])).reply.result).toEqual(await restData("/eth/v1/node/version"));
    const {reply} = await rpc(url, "getChainHead", []);
    expect(reply.error.message).toMatch(/^getChainHead needs GET \/ext\/v1\/chain\/head, an extension endpoint of beacon-gateway, which the beacon node at http:\/\/127\.0\.0\.1:\d+ does not serve \(HTTP 404\)$/);
    expect(plain(reply.error.data)).toEqual({status: 404, message: "NOT_FOUND"});
  });

  it("serves the extension methods that read a standard answer", async () => {
    const url = `http://127.0.0.1:${compat.port}/`;
    const identity = (await restData("/eth/v1/node/identity")) as {peer_id: string; enr: string};
    expect((await rpc(url, "getNodeVersion", [])).reply.result).toBe(((await restData("/eth/v1/node/version")) as {version: string}).version);
    expect((await rpc(url, "getNetworkPeerId", [])).reply.result).toBe(identity.peer_id);
    expect((await rpc(url, "getNetworkEnr", [])).reply.result).toBe(identity.enr);
    expect(plain((await rpc(url, "getBeaconHead", [])).reply.result)).toBe(0);
  });
});
