import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {createServer, type Server} from "node:http";
import type {AddressInfo} from "node:net";
import {LEGACY_CATALOGUE} from "../../compat/catalogue.ts";
import {firstDifference} from "../../compat/check.ts";
import {NodeProcess, tempDataDir} from "../e2e/nodeProcess.ts";
import {runCompatCheck as runCheck} from "./helpers.ts";

/**
 * `beacon-gateway compat check --rpc URL --rest URL` as a user runs it, against one live node
 * (its own JSON-RPC and REST endpoints): every method agrees. Then against a REST endpoint
 * that answers one method differently (the node behind a proxy that alters its version): that
 * method's first difference is printed as a path and two values, and the command exits 1.
 */

const data = tempDataDir("compat-check");
let node: NodeProcess;
let restUrl: string;
let rpcUrl: string;
let proxy: Server;
let proxyUrl: string;

beforeAll(async () => {
  // no validators: the chain stays at genesis, so head-dependent answers hold still
  node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--rpc", "--rpc-port", "0", "--data-dir", data.dir, "--seconds-per-slot", "1", "--dev-validators", "none"]);
  restUrl = await node.restUrl();
  const listening = await node.waitForLog((l) => l.msg === "JSON-RPC listening", 60_000, "JSON-RPC to listen");
  rpcUrl = `http://127.0.0.1:${listening.port}/`;
  // the node's REST API, with another version string
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
    const headers = {accept: "application/json", ...(req.headers["content-type"] ? {"content-type": req.headers["content-type"]} : {})};
    const upstream = await fetch(restUrl + req.url, {method: req.method, headers, body});
    let text = await upstream.text();
    if (req.url === "/eth/v1/node/version") text = JSON.stringify({data: {version: "other/v0.0.1"}});
    res.writeHead(upstream.status, {"content-type": upstream.headers.get("content-type") ?? "application/json"}).end(text);
  }).listen(0, "127.0.0.1");
  await new Promise((resolve) => proxy.once("listening", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 90_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await node?.stop("SIGTERM");
  data.remove();
});

describe("beacon-gateway compat check", () => {
  it("finds every method agreeing between one node's JSON-RPC and REST, and exits 0", async () => {
    const {code, stdout, stderr} = await runCheck(rpcUrl, restUrl);
    const lines = stdout.trim().split("\n");
    const verdicts = new Map(lines.slice(1, -1).map((line) => [line.slice(7).split(":")[0], line.slice(0, 6).trim()]));
    expect({code, stderr}).toEqual({code: 0, stderr: ""});
    expect([...verdicts.keys()]).toEqual(LEGACY_CATALOGUE.map((e) => e.method));
    expect([...verdicts.entries()].filter(([, v]) => v === "differ")).toEqual([]);
    // writes and the two that cannot be compared are skipped; all the others are called
    const skipped = [...verdicts.entries()].filter(([, v]) => v === "skip").map(([m]) => m);
    expect(skipped.sort()).toEqual(
      [...LEGACY_CATALOGUE.map((e) => e.method).filter((m) => m.startsWith("post_")), "setLogLevel", "setGraffiti", "get_v1_validator_block", "debug_getChronosFutures"].sort()
    );
    expect(lines.at(-1)).toBe(`${LEGACY_CATALOGUE.length - skipped.length} agree, 0 differ, ${skipped.length} skipped`);
  }, 60_000);

  it("prints the first difference as a path and two values, and exits 1", async () => {
    const {code, stdout} = await runCheck(rpcUrl, proxyUrl);
    expect(code).toBe(1);
    const version = ((await (await fetch(`${restUrl}/eth/v1/node/version`)).json()) as {data: {version: string}}).data.version;
    expect(stdout).toContain(`differ get_v1_node_version: result.version: "${version}" (JSON-RPC) vs "other/v0.0.1" (REST)\n`);
    expect(stdout).toContain(`differ getNodeVersion: result: "${version}" (JSON-RPC) vs "other/v0.0.1" (REST)\n`);
    expect(stdout).toMatch(/\n\d+ agree, 2 differ, \d+ skipped\n$/);
  }, 60_000);
});

describe("the comparison", () => {
  it("takes a JSON number and a decimal string with the same digits as equal, and nothing else", () => {
    expect(firstDifference({a: [1, "0x01"], b: 18446744073709551615n.toString()}, {a: ["1", "0x01"], b: "18446744073709551615"})).toBeUndefined();
    expect(firstDifference({a: [1, 2]}, {a: ["1", "3"]})).toEqual({path: "result.a[1]", a: 2, b: "3"});
    expect(firstDifference({a: [1]}, {a: [1, 2]})).toEqual({path: "result.a.length", a: 1, b: 2});
    expect(firstDifference({a: 1}, {b: 1})).toEqual({path: "result.a", a: 1, b: undefined});
    expect(firstDifference("12", "0x12")).toEqual({path: "result", a: "12", b: "0x12"});
    expect(firstDifference(true, "true")).toEqual({path: "result", a: true, b: "true"});
  });
});
