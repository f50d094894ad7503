import {TEST_NETWORK_ARGS} from "../e2e/nodeProcess.ts";
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {LEGACY_CATALOGUE} from "../../compat/catalogue.ts";
import {legacyMethods, uncataloguedMethods, unmappedMethods} from "../../compat/methods.ts";
import {startCompatServer, type CompatServer} from "../../compat/http.ts";
import {parseNodeOptions} from "../../src/cli/options.ts";
import {startNode, type RunningNode} from "../../src/node.ts";
import {cases, makeFixture, type Case, type Fixture, type RestCall} from "./cases.ts";
import {compareLegacy, parseExact, postRpc, type HttpReply} from "./helpers.ts";

/**
 * Every method of the spec's JSON-RPC catalogue, called through compat (in the node, over its
 * REST handlers) and as the same query over REST, on one running dev chain: the results must
 * be equal after the documented encoding change (REST decimal strings are exact JSON numbers),
 * and equal outright with `--rpc-encoding rest`. The chain starts at phase0, the era of the
 * legacy interface, so its v1 methods (phase0 states, attestations, aggregates) answer in full.
 */

/** Head-dependent answers can change between the two calls at a slot boundary: a mismatch is tried again this often. */
const ATTEMPTS = 4;

let node: RunningNode;
let legacyRpc: CompatServer;
let restRpc: CompatServer;
let dataDir: string;
let fixture: Fixture;
let restBase: string;

async function restCall(call: RestCall): Promise<HttpReply> {
  const init: RequestInit =
    call.text !== undefined
      ? {method: call.method, headers: {"content-type": "text/plain"}, body: call.text}
      : call.body !== undefined
        ? {method: call.method, headers: {"content-type": "application/json", ...call.headers}, body: JSON.stringify(call.body)}
        : {method: call.method};
  const res = await fetch(restBase + call.path, init);
  return {status: res.status, text: await res.text()};
}


const rpcCall = (server: CompatServer, method: string, params: unknown[]) =>
  postRpc(`http://127.0.0.1:${server.port}/`, {jsonrpc: "2.0", id: 1, method, params});

/** What the JSON-RPC reply must hold for a REST answer: `{result}`, or `{error}` with the REST status and message. */
function expectedReply(c: Case, rest: HttpReply): {result: unknown} | {error: {status: number; message: string; failures?: unknown}} {
  if (rest.status >= 400) {
    const {code, message, failures} = JSON.parse(rest.text);
    return {error: {status: code, message, ...(failures ? {failures} : {})}};
  }
  const kind = c.result ?? "data";
  if (kind === "status") return {result: rest.status};
  if (kind === "empty") return {result: true};
  const body = rest.text === "" ? undefined : JSON.parse(rest.text);
  return {result: kind === "data" ? body.data : kind(body, rest.status)};
}

/** Problems of one attempt: the call through both compat servers against the REST answer. */
async function attempt(method: string, c: Case): Promise<string[]> {
  const legacy = await rpcCall(legacyRpc, method, c.params);
  const rest = await restCall(c.rest);
  const asRest = await rpcCall(restRpc, method, c.params);
  const problems: string[] = [];
  if (rest.status !== (c.status ?? 200)) problems.push(`REST answered ${rest.status} (expected ${c.status ?? 200}): ${rest.text.slice(0, 300)}`);
  const expected = expectedReply(c, rest);
  const legacyReply = parseExact(legacy.text);
  const restReply = JSON.parse(asRest.text);
  if ("error" in expected) {
    for (const [name, reply] of [["legacy", JSON.parse(legacy.text)], ["rest", restReply]] as const) {
      if (reply.error?.code !== -32000 || JSON.stringify(reply.error.data) !== JSON.stringify(expected.error)) {
        problems.push(`${name} encoding: ${JSON.stringify(reply).slice(0, 300)} is not the REST error ${JSON.stringify(expected.error)}`);
      }
    }
    return problems;
  }
  if (!("result" in legacyReply)) return [...problems, `legacy encoding: ${legacy.text.slice(0, 300)}`];
  const part = c.select ?? ((result: unknown) => result);
  const {differences, unconverted} = compareLegacy(part(legacyReply.result), part(expected.result));
  problems.push(...differences.slice(0, 5).map((d) => `legacy encoding: ${d}`));
  if (!c.textNumbers) problems.push(...unconverted.slice(0, 5).map((at) => `legacy encoding: ${at} is still a decimal string`));
  if (c.rawContains && !legacy.text.includes(c.rawContains)) problems.push(`legacy encoding: the reply lacks ${c.rawContains}`);
  if (JSON.stringify(part(restReply.result)) !== JSON.stringify(part(expected.result))) problems.push(`rest encoding: ${asRest.text.slice(0, 300)} differs from the REST data`);
  return problems;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "compat-methods-"));
  const opts = parseNodeOptions([
    "--rest", "--rest-port", "0", "--data-dir", dataDir, "--seconds-per-slot", "1", "--genesis-fork", "phase0", "--log-level", "WARN", ...TEST_NETWORK_ARGS,
  ]);
  if (opts === "help") throw new Error("unexpected help");
  node = await startNode(opts);
  restBase = `http://127.0.0.1:${node.restPort}`;
  legacyRpc = await startCompatServer({transport: node.api, encoding: "legacy", port: 0, address: "127.0.0.1"});
  restRpc = await startCompatServer({transport: node.api, encoding: "rest", port: 0, address: "127.0.0.1"});
  while (node.chain.getHead().slot < 5) await new Promise((r) => setTimeout(r, 200));
  fixture = await makeFixture(node.chain, restBase, `http://127.0.0.1:${legacyRpc.port}/`);
}, 60_000);

afterAll(async () => {
  await legacyRpc?.close();
  await restRpc?.close();
  await node?.stop();
  if (dataDir) rmSync(dataDir, {recursive: true, force: true});
}, 30_000);

describe("the method table", () => {
  it("maps all 56 methods of the catalogue (the spec's 54 and the two its list omits), and no other name", () => {
    expect(LEGACY_CATALOGUE).toHaveLength(56);
    expect({unmapped: unmappedMethods(), uncatalogued: uncataloguedMethods()}).toEqual({unmapped: [], uncatalogued: []});
  });
});

describe("each method through compat and through REST", () => {
  for (const {method} of LEGACY_CATALOGUE) {
    it(`${method}`, async () => {
      if (!legacyMethods.has(method)) throw new Error(`${method} is not mapped: compat/table.ts has no entry for it`);
      const make = cases[method];
      if (!make) throw new Error(`no test case for ${method}`);
      let problems: string[] = [];
      for (let i = 0; i < ATTEMPTS; i++) {
        problems = await attempt(method, await make(fixture));
        if (problems.length === 0) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(problems).toEqual([]);
    }, 20_000);
  }
});
