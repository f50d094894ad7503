import {beforeAll, describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});

describe("debug states", () => {
  it("serves the whole state as JSON, with version", async () => {
    const res = await request(app).get("/eth/v2/debug/beacon/states/head").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body.version).toBe("fulu");
    expect(res.body.data).toEqual(ssz.fulu.BeaconState.toJson(t.state.toValue() as never));
    expect(res.body.data.validators).toHaveLength(64);
  });

  it("serves it as SSZ with the same root", async () => {
    const res = await request(app)
      .get("/eth/v2/debug/beacon/states/genesis")
      .set("Accept", "application/octet-stream")
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on("data", (c: Buffer) => chunks.push(c));
        r.on("end", () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const state = ssz.fulu.BeaconState.deserialize(new Uint8Array(res.body));
    expect(ssz.fulu.BeaconState.hashTreeRoot(state)).toEqual(t.state.hashTreeRoot());
  });

  it("answers 404 for an unknown state and 400 for a malformed id", async () => {
    expect((await request(app).get("/eth/v2/debug/beacon/states/0x" + "ab".repeat(32)).expect(404)).body.code).toBe(404);
    expect((await request(app).get("/eth/v2/debug/beacon/states/nonsense").expect(400)).body.code).toBe(400);
  });
});
