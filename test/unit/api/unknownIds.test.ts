import {beforeAll, describe, expect, it} from "@jest/globals";
import request from "supertest";
import {routes} from "../../../src/api/routes/index.ts";
import type {ParamDef, Route} from "../../../src/api/routes/types.ts";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/**
 * An id that parses is valid, and one the node has no data for is a 404 (or, for a filter, no
 * match); 400 is only for what does not parse. The spec's ids are uint64 (slots, indices), so
 * the largest is 2^64 - 1, and 2^64 does not parse.
 */

const MAX_UINT64 = "18446744073709551615";
const PAST_UINT64 = "18446744073709551616";
const UNKNOWN_ROOT = `0x${"ab".repeat(32)}`;

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

/** Valid bodies of the POST routes that take a state or block id. */
const BODIES: Record<string, unknown> = {postStateValidators: {}};

const pathArgs = (route: Route): string[] =>
  Object.values(route.args as Record<string, ParamDef<unknown> | {in: "body"}>)
    .filter((def): def is ParamDef<unknown> => def.in === "path")
    .map((def) => def.name);

/** Every route whose only path parameter is a state id or a block id, from the route table. */
const byIdRoutes = Object.values(routes as Record<string, Route>).filter((r) => {
  const names = pathArgs(r);
  return names.length === 1 && (names[0] === "state_id" || names[0] === "block_id");
});

function call(route: Route, id: string) {
  const path = route.path.replace(/\{(state_id|block_id)\}/, id);
  return route.method === "GET" ? request(app).get(path) : request(app).post(path).send((BODIES[route.operationId] ?? []) as object);
}

describe("state and block ids", () => {
  it("the table has the routes this checks", () => {
    expect(byIdRoutes.length).toBeGreaterThan(25);
  });

  it.each(byIdRoutes.map((r) => [r.operationId, r] as const))("%s: the largest uint64 slot and an unknown root are 404, 2^64 is 400", async (_id, route) => {
    expect((await call(route, MAX_UINT64)).status).toBe(404);
    expect((await call(route, UNKNOWN_ROOT)).status).toBe(404);
    const malformed = await call(route, PAST_UINT64);
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/^Invalid (state|block) ID: 18446744073709551616$/);
  });

  it("a slot past 2^53 (no longer exact as a JavaScript number) is still a well-formed, unknown slot", async () => {
    for (const slot of ["9007199254740993", "18446744073709551614", "0018446744073709551615"]) {
      expect((await request(app).get(`/eth/v1/beacon/states/${slot}/root`)).status).toBe(404);
      expect((await request(app).get(`/eth/v1/beacon/headers/${slot}`)).status).toBe(404);
    }
  });
});

describe("validator ids", () => {
  it("the largest uint64 index is an unknown validator: 404 alone, left out of lists", async () => {
    expect((await request(app).get(`/eth/v1/beacon/states/head/validators/${MAX_UINT64}`).expect(404)).body).toEqual({code: 404, message: "Validator not found"});
    expect((await request(app).get(`/eth/v1/beacon/states/head/validators?id=${MAX_UINT64},1`).expect(200)).body.data.map((v: {index: string}) => v.index)).toEqual(["1"]);
    expect((await request(app).post("/eth/v1/beacon/states/head/validator_balances").send([MAX_UINT64]).expect(200)).body.data).toEqual([]);
    expect((await request(app).get(`/eth/v1/beacon/states/head/validators/${PAST_UINT64}`).expect(400)).body).toEqual({code: 400, message: `Invalid validator ID: ${PAST_UINT64}`});
  });
});

// the attestation pool's filters: in pool.test.ts, over the real pools
describe("slot and index filters", () => {
  it.each([
    ["block headers by slot", `/eth/v1/beacon/headers?slot=${MAX_UINT64}`],
    ["committees by slot", `/eth/v1/beacon/states/head/committees?slot=${MAX_UINT64}`],
    ["committees by index", `/eth/v1/beacon/states/head/committees?index=${MAX_UINT64}`],
  ])("%s: the largest uint64 matches nothing (200, empty), 2^64 is 400", async (_what, url) => {
    expect((await request(app).get(url).expect(200)).body.data).toEqual([]);
    expect((await request(app).get(url.replace(MAX_UINT64, PAST_UINT64)).expect(400)).body.code).toBe(400);
  });
});
