import {describe, it, expect, beforeAll} from "@jest/globals";
import request from "supertest";
import {createApp, startRestServer} from "../../../src/api/server/index.ts";
import {requestFormat, responseFormat} from "../../../src/api/server/negotiation.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

describe("content negotiation", () => {
  it.each([
    [undefined, true, "json"],
    ["", true, "json"],
    ["application/json", true, "json"],
    ["application/octet-stream", true, "ssz"],
    ["application/octet-stream;q=1.0,application/json;q=0.9", true, "ssz"],
    ["application/json;q=0.5, application/octet-stream;q=0.4", true, "json"],
    ["application/json;q=0, application/octet-stream", true, "ssz"],
    ["text/html, */*;q=0.1", true, "json"],
    ["application/*", true, "json"],
    ["text/html", true, null],
    ["application/octet-stream", false, null],
    ["application/octet-stream, application/json;q=0.2", false, "json"],
  ] as const)("Accept %j (ssz %s) -> %s", (accept, ssz, expected) => {
    expect(responseFormat(accept, ssz)).toBe(expected);
  });

  it.each([
    [undefined, true, "json"],
    ["application/json; charset=utf-8", true, "json"],
    ["application/octet-stream", true, "ssz"],
    ["application/octet-stream", false, null],
    ["text/plain", true, null],
  ] as const)("Content-Type %j (ssz %s) -> %s", (contentType, ssz, expected) => {
    expect(requestFormat(contentType, ssz)).toBe(expected);
  });

  it("406 for SSZ on a JSON-only route; Accept does not matter for routes without a body", async () => {
    const res = await request(app).get("/eth/v1/beacon/genesis").set("Accept", "application/octet-stream").expect(406);
    expect(res.body).toEqual({code: 406, message: "Accepted media type not supported"});
    await request(app).post("/eth/v1/validator/beacon_committee_subscriptions").set("Accept", "application/octet-stream").send([]).expect(200);
  });

  it("415 for a body in a media type the route does not take (SSZ on a JSON-only route)", async () => {
    const res = await request(app).post("/eth/v1/validator/prepare_beacon_proposer").set("Content-Type", "application/octet-stream").send(Buffer.from([1, 2])).expect(415);
    expect(res.body).toEqual({code: 415, message: "Unsupported Content-Type: application/octet-stream"});
  });

  it("400 for a POST without a body", async () => {
    expect((await request(app).post("/eth/v1/validator/prepare_beacon_proposer").expect(400)).body).toEqual({code: 400, message: "Missing request body"});
  });
});

describe("the HTTP server", () => {
  it("404 in the spec's error shape for unknown paths and methods", async () => {
    expect((await request(app).get("/eth/v1/nothing/here").expect(404)).body).toEqual({code: 404, message: "Route not found: GET /eth/v1/nothing/here"});
    await request(app).delete("/eth/v1/beacon/genesis").expect(404);
    await request(app).post("/eth/v1/beacon/genesis").expect(404);
  });

  it("routes by the table: literal segments before parameters, one trailing slash ignored, HEAD for GET", async () => {
    // `/eth/v1/beacon/headers` (a literal) and `/eth/v1/beacon/headers/{block_id}` share a prefix
    expect((await request(app).get("/eth/v1/beacon/headers").expect(200)).body.data).toBeInstanceOf(Array);
    expect((await request(app).get("/eth/v1/beacon/headers/head").expect(200)).body.data.canonical).toBe(true);
    expect((await request(app).get("/eth/v1/node/version/").expect(200)).body).toEqual({data: {version: t.node.version}});
    const head = await request(app).head("/eth/v1/node/version").expect(200);
    expect(head.headers["content-type"]).toBe("application/json");
    expect(head.text).toBeUndefined();
    // an empty segment is no parameter value
    await request(app).get("/eth/v1/beacon/states//root").expect(404);
  });

  it("path parameters are percent-decoded; one that cannot be is a 400, not a crash", async () => {
    expect((await request(app).get("/eth/v1/beacon/states/%68ead/root").expect(200)).body.data.root).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await request(app).get("/eth/v1/beacon/states/%E0%A4%A/root").expect(400)).body).toEqual({code: 400, message: "Invalid path parameter state_id: not percent-encoded text"});
  });

  it("OPTIONS without CORS lists the methods of a known path", async () => {
    expect((await request(app).options("/eth/v2/beacon/blocks").expect(204)).headers.allow).toBe("POST");
    await request(app).options("/eth/v1/nothing").expect(404);
  });

  it("413 for bodies over the limit", async () => {
    const small = createApp({bodyLimit: 64}, t.ctx);
    const res = await request(small).post("/eth/v1/validator/prepare_beacon_proposer").send([{validator_index: "1", fee_recipient: "0x" + "00".repeat(20)}]).expect(413);
    expect(res.body.code).toBe(413);
  });

  it("500 with a generic message when a handler fails unexpectedly", async () => {
    const broken = createTestContext();
    broken.chain.getHeadState = () => {
      throw new Error("state cache corrupted");
    };
    const res = await request(createApp({}, broken.ctx)).get("/eth/v1/beacon/states/head/root").expect(500);
    expect(res.body).toEqual({code: 500, message: "Internal server error"});
  });

  it("CORS: Access-Control-Allow-Origin only when allowOrigin is set; preflight answered", async () => {
    expect((await request(app).get("/eth/v1/node/version")).headers["access-control-allow-origin"]).toBeUndefined();
    const open = createApp({allowOrigin: "*"}, t.ctx);
    expect((await request(open).get("/eth/v1/node/version").expect(200)).headers["access-control-allow-origin"]).toBe("*");
    const preflight = await request(open).options("/eth/v2/beacon/blocks").expect(204);
    expect(preflight.headers["access-control-allow-methods"]).toContain("POST");
  });

  it("startRestServer listens on the given address (port 0: a free port) and closes", async () => {
    const server = await startRestServer({port: 0, address: "127.0.0.1"}, t.ctx);
    try {
      expect(server.port).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${server.port}/eth/v1/node/version`);
      expect(await res.json()).toEqual({data: {version: t.node.version}});
    } finally {
      await server.close();
    }
    await expect(fetch(`http://127.0.0.1:${server.port}/eth/v1/node/version`)).rejects.toThrow();
  });
});
