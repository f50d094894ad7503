import {TEST_NETWORK_ARGS} from "../e2e/nodeProcess.ts";
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {LEGACY_CATALOGUE} from "../../compat/catalogue.ts";
import {startCompatServer, type CompatServer} from "../../compat/http.ts";
import {parseNodeOptions} from "../../src/cli/options.ts";
import {startNode, type RunningNode} from "../../src/node.ts";
import {cases, makeFixture, singleAttestation, type Case, type Fixture} from "./cases.ts";
import {parseExact, plain, postRpc} from "./helpers.ts";
import {RESULT_SHAPES, shapeProblems} from "./resultShapes.ts";

/**
 * Every legacy method on today's fork (a dev chain at fulu from genesis), through compat in the
 * node: each result must have the shape the removed server gave (resultShapes.ts, written from
 * legacy-jsonrpc.md) with today's objects in it, and no call may be refused because its
 * objects are newer than the method. The calls the REST API refuses on both protocols by
 * design (a slashing that slashes no one, an unknown peer) must be refused for that reason.
 */

/** Results that must hold something on a running chain, or the shape check says little. */
const NON_EMPTY = new Set(["get_v1_beacon_blocks_blockId_attestations", "get_v1_beacon_pool_attestations", "get_v1_beacon_states_stateId_validators"]);
/** Head-dependent answers may be refused at a slot boundary (an aggregate that moved on): a call is tried again this often. */
const ATTEMPTS = 4;

let node: RunningNode;
let rpc: CompatServer;
let dataDir: string;
let fixture: Fixture;

/** The fulu forms of the calls whose params carry the fork's objects. */
const fuluCases: Record<string, (fx: Fixture) => Promise<Case> | Case> = {
  ...cases,
  // since deneb a published block comes with its blobs (none here)
  post_v1_beacon_blocks: async (fx) => ({...(await cases.post_v1_beacon_blocks(fx)), params: [{signed_block: fx.legacyBlock2, kzg_proofs: [], blobs: []}]}),
  post_v1_beacon_pool_attestations: async (fx) => ({...(await cases.post_v1_beacon_pool_attestations(fx)), params: [await singleAttestation(fx, true)]}),
};

const rpcCall = async (method: string, params: unknown[]) => parseExact((await postRpc(`http://127.0.0.1:${rpc.port}/`, {jsonrpc: "2.0", id: 1, method, params})).text);

async function problemsOf(method: string): Promise<string[]> {
  const c = await fuluCases[method]!(fixture);
  const reply = await rpcCall(method, c.params);
  const refusal = c.status !== undefined && c.status >= 400;
  if (refusal) {
    const error = plain(reply.error);
    if (error?.code !== -32000 || error.data?.status !== c.status) return [`expected the REST refusal ${c.status}, got ${JSON.stringify(plain(reply)).slice(0, 300)}`];
    return /use (GET|POST) /.test(error.message) ? [`refused for its fork: ${error.message}`] : [];
  }
  if (!("result" in reply)) return [`error: ${JSON.stringify(plain(reply.error)).slice(0, 300)}`];
  const problems = shapeProblems(reply.result, RESULT_SHAPES[method]!);
  if (NON_EMPTY.has(method) && Array.isArray(reply.result) && reply.result.length === 0) problems.push("an empty list");
  return problems;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "compat-forks-"));
  const opts = parseNodeOptions([
    "--rest", "--rest-port", "0", "--data-dir", dataDir, "--seconds-per-slot", "1", "--genesis-fork", "fulu", "--log-level", "WARN", ...TEST_NETWORK_ARGS,
  ]);
  if (opts === "help") throw new Error("unexpected help");
  node = await startNode(opts);
  rpc = await startCompatServer({transport: node.api, encoding: "legacy", port: 0, address: "127.0.0.1"});
  while (node.chain.getHead().slot < 5) await new Promise((r) => setTimeout(r, 200));
  fixture = await makeFixture(node.chain, `http://127.0.0.1:${node.restPort}`, `http://127.0.0.1:${rpc.port}/`);
}, 60_000);

afterAll(async () => {
  await rpc?.close();
  await node?.stop();
  if (dataDir) rmSync(dataDir, {recursive: true, force: true});
}, 30_000);

describe("the result shape table", () => {
  it("has a shape for every method of the catalogue", () => {
    expect(LEGACY_CATALOGUE.map((e) => e.method).filter((m) => !RESULT_SHAPES[m])).toEqual([]);
  });
});

describe("each method on a fulu chain, as the removed server answered", () => {
  for (const {method} of LEGACY_CATALOGUE) {
    it(method, async () => {
      let problems: string[] = [];
      for (let i = 0; i < ATTEMPTS; i++) {
        problems = await problemsOf(method);
        if (problems.length === 0) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(problems).toEqual([]);
    }, 20_000);
  }

  it("gives today's objects: electra attestations with committee_bits, the fulu state", async () => {
    const attestations = plain((await rpcCall("get_v1_beacon_blocks_blockId_attestations", ["head"])).result);
    expect(attestations.every((a: Record<string, unknown>) => typeof a.committee_bits === "string")).toBe(true);
    const state = await postRpc(`http://127.0.0.1:${rpc.port}/`, {jsonrpc: "2.0", id: 1, method: "get_v1_debug_beacon_states_stateId", params: ["head"]});
    expect(state.text).toContain('"proposer_lookahead":[');
  });
});
