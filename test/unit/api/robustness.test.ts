import {beforeAll, describe, expect, it} from "@jest/globals";
import request from "supertest";
import {routes} from "../../../src/api/routes/index.ts";
import type {Route} from "../../../src/api/routes/types.ts";
import {createApp} from "../../../src/api/server/index.ts";
import type {ApiContext} from "../../../src/api/impl/index.ts";
import {createEnv} from "../pools/helpers.ts";
import {TestChain, createTestContext} from "./testContext.ts";

/**
 * Nothing a client sends may crash the node or be answered as the server's fault: every route,
 * fed malformed path values, query values and bodies, answers a 4xx (or a success where the
 * input happens to be valid) with the spec's error body, and the server keeps answering.
 */

const BAD_PATH_VALUES = ["-1", "0x", "0x" + "zz".repeat(32), "1e3", "18446744073709551616", "x".repeat(300), "%00", "null", " 1"];
const BAD_BODIES: Array<{type: string; body: string | Buffer}> = [
  {type: "application/json", body: "{"},
  {type: "application/json", body: "null"},
  {type: "application/json", body: "42"},
  {type: "application/json", body: '"text"'},
  {type: "application/json", body: "[null, 1, {}]"},
  {type: "application/json", body: '{"message": {"slot": "-5"}, "signature": "0x00"}'},
  {type: "application/json", body: JSON.stringify([{data: {slot: "1".repeat(40)}}])},
  {type: "application/json", body: JSON.stringify(Array.from({length: 2000}, () => ({})))},
  {type: "application/octet-stream", body: Buffer.from([1, 2, 3, 4, 5])},
  {type: "text/html", body: "<html>"},
];

function fill(path: string, value: string): string {
  return path.replace(/\{\w+\}/g, encodeURIComponent(value));
}

describe("malformed requests to every route", () => {
  let app: ReturnType<typeof createApp>;
  const all = Object.values(routes as Record<string, Route>).filter((r) => r.response.kind !== "events");

  // The real operation pools (they validate everything), on a chain at slot 10.
  beforeAll(() => {
    const env = createEnv("fulu", 10);
    const chain = new TestChain(env.genesis);
    chain.slot = 10;
    const ctx: ApiContext = {...createTestContext().ctx, chain, pools: env.pools};
    app = createApp({}, ctx);
  });

  async function expectClientFault(res: request.Response, what: string): Promise<void> {
    expect([what, res.status < 500 || res.status === 501 || res.status === 503]).toEqual([what, true]);
    if (res.status >= 400) {
      expect([what, typeof res.body.code, typeof res.body.message]).toEqual([what, "number", "string"]);
      expect(res.body.code).toBe(res.status);
    }
  }

  it("bad path values", async () => {
    for (const route of all.filter((r) => r.path.includes("{"))) {
      for (const value of BAD_PATH_VALUES) {
        const path = fill(route.path, value);
        const req = route.method === "GET" ? request(app).get(path) : request(app).post(path).set("Content-Type", "application/json").send("[]");
        await expectClientFault(await req, `${route.operationId} ${path.slice(0, 80)}`);
      }
    }
  });

  it("bad query values", async () => {
    for (const route of all) {
      const queryNames = Object.values(route.args as Record<string, {in: string; name?: string}>)
        .filter((def) => def.in === "query")
        .map((def) => def.name!);
      if (queryNames.length === 0) continue;
      const path = fill(route.path, "head");
      for (const value of ["", "-1", "0x1", "a,b,,c", "99999999999999999999999"]) {
        const query = Object.fromEntries(queryNames.map((n) => [n, value]));
        const req = route.method === "GET" ? request(app).get(path).query(query) : request(app).post(path).query(query).set("Content-Type", "application/json").send("[]");
        await expectClientFault(await req, `${route.operationId} ?${JSON.stringify(query)}`);
      }
    }
  });

  it("bad bodies", async () => {
    for (const route of all.filter((r) => r.method === "POST")) {
      const path = fill(route.path, route.path.includes("{epoch}") ? "1" : "head");
      for (const {type, body} of BAD_BODIES) {
        const res = await request(app).post(path).set("Content-Type", type).set("Eth-Consensus-Version", "fulu").send(body);
        await expectClientFault(res, `${route.operationId} ${type} ${String(body).slice(0, 40)}`);
      }
    }
  });

  it("still answers afterwards", async () => {
    await request(app).get("/eth/v1/node/version").expect(200);
    await request(app).get("/eth/v1/beacon/headers/head").expect(200);
  });
});
