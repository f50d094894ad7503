import {beforeAll, describe, expect, it} from "@jest/globals";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/**
 * Where the Beacon API allows more than one answer, the node takes the one most clients take, so
 * that a tool written against any of them reads this node too. Each choice is one test here, named
 * by the choice, with its reason in one line. (Content-Length and chunking: streaming.test.ts;
 * ids that parse but name nothing: unknownIds.test.ts.)
 */

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

describe("choices the spec leaves open", () => {
  it("an ordinary answer is sent whole with Content-Length, not chunked", async () => {
    // reason: every mainstream beacon node does, and some HTTP clients and test runners refuse a chunked JSON body
    const res = await request(app).get("/eth/v1/beacon/states/head/validators?id=1").expect(200);
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    expect(Number(res.headers["content-length"])).toBe(Buffer.byteLength(JSON.stringify(res.body)));
  });

  it("validator ids a list names but the state lacks are left out of a 200, not a 404", async () => {
    // reason: Lighthouse, Teku, Prysm and Lodestar filter by the ids they know; only the single-validator route is a 404
    const res = await request(app).get("/eth/v1/beacon/states/head/validators?id=1,100000").expect(200);
    expect(res.body.data.map((v: {index: string}) => v.index)).toEqual(["1"]);
  });

  it("a validator named by index and by public key is answered once; the same id twice is a 400 (uniqueItems, as Nimbus answers)", async () => {
    // reason: the answer is the set of validators the ids name; a tool summing balances must not count one twice
    const pubkey = `0x${Buffer.from(t.state.validators.getReadonly(2).pubkey).toString("hex")}`;
    const res = await request(app).get(`/eth/v1/beacon/states/head/validators?id=2,${pubkey}`).expect(200);
    expect(res.body.data.map((v: {index: string}) => v.index)).toEqual(["2"]);
    for (const ids of ["2,2", "2,02", `${pubkey},${pubkey.toUpperCase().replace("0X", "0x")}`]) {
      const refused = await request(app).get(`/eth/v1/beacon/states/head/validators?id=${ids}`).expect(400);
      expect(refused.body).toEqual({code: 400, message: `Duplicate value in id: ${ids.split(",")[1]}`});
    }
    const body = await request(app).post("/eth/v1/beacon/states/head/validator_balances").send(["3", "3"]).expect(400);
    expect(body.body).toEqual({code: 400, message: "Duplicate validator ids item: 3"});
  });

  it("a list query parameter takes repeated keys and comma-separated values alike", async () => {
    // reason: clients send both forms (the spec's `explode` form, and the comma list most nodes also read)
    const repeated = await request(app).get("/eth/v1/beacon/states/head/validators?id=1&id=3").expect(200);
    const commas = await request(app).get("/eth/v1/beacon/states/head/validators?id=1,3").expect(200);
    expect(repeated.body).toEqual(commas.body);
    expect(commas.body.data.map((v: {index: string}) => v.index)).toEqual(["1", "3"]);
  });

  it("`Accept: */*` (and no Accept) answers JSON on routes that also speak SSZ", async () => {
    // reason: curl and browsers send `*/*`; JSON is the format every client reads
    for (const accept of ["*/*", undefined]) {
      const req = request(app).get("/eth/v2/beacon/blocks/genesis");
      const res = await (accept ? req.set("Accept", accept) : req).expect(200);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
    }
  });

  it("a committee `slot` filter outside the epoch matches no committee (200, empty list), as the `index` filter does", async () => {
    // reason: the spec's `slot` restricts the answer to that slot's committees, and a restriction that matches none is an empty list
    expect((await request(app).get("/eth/v1/beacon/states/head/committees?epoch=0&slot=9").expect(200)).body.data).toEqual([]);
  });

  it("a declined route (501) answers before it looks at the body", async () => {
    // reason: whether the node implements a route does not depend on the request; a body error must not hide the 501
    expect((await request(app).post("/eth/v1/validator/beacon_committee_selections").expect(501)).body.code).toBe(501);
  });

  it("a successful POST without data answers 200 with an empty body", async () => {
    // reason: the spec gives those answers no schema; an empty body is what every client's reader accepts
    const res = await request(app).post("/eth/v1/validator/prepare_beacon_proposer").send([]).expect(200);
    expect(res.text).toBe("");
  });

  it("error bodies carry `code` and `message` only (no `stacktraces`)", async () => {
    // reason: the spec's `stacktraces` is optional and meant for debug builds; stack traces are not for API callers
    expect((await request(app).get("/eth/v1/beacon/states/nowhere/root").expect(400)).body).toEqual({code: 400, message: "Invalid state ID: nowhere"});
  });
});
