import {TEST_NETWORK_ARGS} from "../e2e/nodeProcess.ts";
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {routes} from "../../src/api/routes/index.ts";
import type {Route} from "../../src/api/routes/types.ts";
import {parseNodeOptions} from "../../src/cli/options.ts";
import {startNode, type RunningNode} from "../../src/node.ts";
import {checkResponse} from "./checkResponse.ts";
import {specOperation} from "./openapi.ts";
import {requestViolations} from "./requestConstraints.ts";
import {createSampleContext, type SampleContext} from "./sampleContext.ts";
import {samples} from "./samples.ts";
import {sendSample} from "./sendSample.ts";

/**
 * Every route of the table against a live dev node over real HTTP: each sample request must get
 * its expected status, and its answer must conform to the OpenAPI spec (or, for routes outside
 * it, to the table's shape). A route without a sample fails, so each new route brings one.
 */

const allRoutes = Object.values(routes as Record<string, Route>);
/** Finality (epoch 2, the first the dev chain reaches) comes at about 35 s with 1-second slots; past this the samples run anyway. */
const CHAIN_WAIT_MS = 60_000;
const ROUTE_TIMEOUT_MS = 20_000;

let node: RunningNode;
let ctx: SampleContext;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "conformance-"));
  const opts = parseNodeOptions(["--rest", "--rest-port", "0", "--data-dir", dataDir, "--seconds-per-slot", "1", "--log-level", "WARN", ...TEST_NETWORK_ARGS]);
  if (opts === "help") throw new Error("unexpected help");
  node = await startNode(opts);
  ctx = createSampleContext(`http://127.0.0.1:${node.restPort}`, node.chain);
  const deadline = Date.now() + CHAIN_WAIT_MS;
  while (node.chain.getFinalizedCheckpoint().epoch < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  // the samples hold up on a younger chain (finalized is then genesis); say so, as a slow machine's sign
  if (node.chain.getFinalizedCheckpoint().epoch < 1) console.warn(`no finalized epoch after ${CHAIN_WAIT_MS / 1000} s: samples run on an unfinalized chain`);
}, CHAIN_WAIT_MS + 30_000);

afterAll(async () => {
  await node?.stop();
  if (dataDir) rmSync(dataDir, {recursive: true, force: true});
}, 30_000);

describe("the route table", () => {
  it("has a conformance sample for every route, and none for a route it lacks", () => {
    const missing = allRoutes.filter((r) => !(r.operationId in samples)).map((r) => `${r.operationId} (${r.method} ${r.path})`);
    const stale = Object.keys(samples).filter((id) => !(id in routes));
    if (missing.length > 0) console.error(`Routes without a conformance sample (add them to test/conformance/samples/):\n  ${missing.join("\n  ")}`);
    expect({missing, stale}).toEqual({missing: [], stale: []});
  });
});

describe("every route on a live node", () => {
  for (const route of allRoutes) {
    const where = specOperation(route.operationId) ? "spec" : "outside the spec";
    it(`${route.operationId}: ${route.method} ${route.path} (${where})`, async () => {
      const sample = samples[route.operationId];
      if (!sample) throw new Error(`${route.operationId} has no conformance sample: add one to test/conformance/samples/`);
      const requests = await sample(ctx);
      expect(requests.length).toBeGreaterThan(0);
      const problems: string[] = [];
      const deviations: string[] = [];
      for (const req of requests) {
        const res = await sendSample(ctx.baseUrl, route, req);
        const found = checkResponse(route, req, res).map((p) => `${req.label}: ${p}`);
        if (req.deviation === undefined) problems.push(...found);
        else if (found.length > 0) deviations.push(`${found.join("; ")} (known: ${req.deviation})`);
        else problems.push(`${req.label}: conforms now; remove its deviation note "${req.deviation}"`);
      }
      if (deviations.length > 0) console.warn(`${route.operationId}: known deviations from the spec\n  ${deviations.join("\n  ")}`);
      expect(problems).toEqual([]);
    }, ROUTE_TIMEOUT_MS);
  }
});

describe("the spec's request constraints on a live node", () => {
  // each constraint of the OpenAPI documents (uniqueItems, maxItems, minItems, enum, pattern,
  // maxLength), broken one at a time in a request that otherwise succeeds, is refused
  for (const route of allRoutes.filter((r) => specOperation(r.operationId))) {
    it(`${route.operationId}: ${route.method} ${route.path}`, async () => {
      const base = (await samples[route.operationId]!(ctx)).find((req) => req.status === 200 && req.deviation === undefined);
      if (!base) return;
      const problems: string[] = [];
      for (const {label, request, statuses, mentions} of requestViolations(route.operationId, {...base, label: base.label})) {
        const res = await sendSample(ctx.baseUrl, route, {...request, label});
        if (!statuses.includes(res.status)) {
          problems.push(`${label}: ${res.status}, not ${statuses.join(" or ")}`);
          continue;
        }
        const body = JSON.parse(res.text) as {code?: number; message?: string};
        if (body.code !== res.status) problems.push(`${label}: error body code ${body.code}`);
        if (mentions !== undefined && !body.message?.includes(mentions)) problems.push(`${label}: the message "${body.message}" does not name ${mentions}`);
      }
      expect(problems).toEqual([]);
    }, ROUTE_TIMEOUT_MS);
  }

  it("walks the constraints the issue names (a walk that finds nothing would pass vacuously)", async () => {
    const labels = (id: string, req: Parameters<typeof requestViolations>[1]) => requestViolations(id, req).map((v) => v.label);
    const base = {label: "x", params: {state_id: "head"}, status: 200};
    expect(labels("getStateValidators", base)).toEqual(expect.arrayContaining(["query id: uniqueItems", "query id: maxItems", "query status: uniqueItems", "query status: enum"]));
    expect(labels("postStateValidators", {...base, body: {}})).toEqual(expect.arrayContaining(["body ids: uniqueItems", "body statuses: uniqueItems", "body statuses: enum"]));
    expect(labels("eventstream", {label: "x", status: 200})).toEqual(expect.arrayContaining(["query topics: uniqueItems", "query topics: enum"]));
    expect(labels("getAttesterDuties", {label: "x", params: {epoch: 0}, body: ["1"], status: 200})).toEqual(expect.arrayContaining(["body: minItems"]));
  });
});
