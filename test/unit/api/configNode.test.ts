import {describe, it, expect, beforeAll, afterEach} from "@jest/globals";
import {chainConfigFromJson} from "@lodestar/config";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});
afterEach(() => {
  t.node.syncing = false;
  t.chain.slot = 0;
});

describe("config", () => {
  it("getSpec: config, preset and constants, every value a string (lists as arrays of strings)", async () => {
    const {body} = await request(app).get("/eth/v1/config/spec").expect(200);
    expect(body.data).toMatchObject({
      CONFIG_NAME: "dev",
      PRESET_BASE: "minimal",
      SECONDS_PER_SLOT: "2",
      SLOTS_PER_EPOCH: "8",
      FULU_FORK_EPOCH: "0",
      GLOAS_FORK_EPOCH: "18446744073709551615",
      FAR_FUTURE_EPOCH: "18446744073709551615",
      DEPOSIT_CHAIN_ID: "1337",
      DOMAIN_BEACON_PROPOSER: "0x00000000",
      BLS_WITHDRAWAL_PREFIX: "0x00",
      TARGET_AGGREGATORS_PER_COMMITTEE: "16",
    });
    for (const [key, value] of Object.entries(body.data)) {
      const ok = typeof value === "string" || (Array.isArray(value) && value.every((e) => Object.values(e).every((v) => typeof v === "string")));
      if (!ok) throw new Error(`${key} is not in the spec's string form: ${JSON.stringify(value)}`);
    }
  });

  it("getSpec reads back into the same chain config", async () => {
    const {body} = await request(app).get("/eth/v1/config/spec").expect(200);
    const config = chainConfigFromJson(body.data);
    expect(config.SECONDS_PER_SLOT).toBe(2);
    expect(config.FULU_FORK_EPOCH).toBe(0);
    expect(config.DEPOSIT_CONTRACT_ADDRESS).toEqual(t.chain.config.DEPOSIT_CONTRACT_ADDRESS);
  });

  it("getForkSchedule lists the forks this node implements, in order, each with its previous version", async () => {
    const {body} = await request(app).get("/eth/v1/config/fork_schedule").expect(200);
    expect(body.data).toHaveLength(7);
    expect(body.data[0]).toEqual({previous_version: "0x00000001", current_version: "0x00000001", epoch: "0"});
    expect(body.data[6]).toEqual({previous_version: "0x05000001", current_version: "0x06000001", epoch: "0"});
  });

  it("getDepositContract", async () => {
    const {body} = await request(app).get("/eth/v1/config/deposit_contract").expect(200);
    expect(body).toEqual({data: {chain_id: "1337", address: "0x" + Buffer.from(t.chain.config.DEPOSIT_CONTRACT_ADDRESS).toString("hex")}});
  });
});

describe("node", () => {
  it("getNodeVersion", async () => {
    expect((await request(app).get("/eth/v1/node/version").expect(200)).body).toEqual({data: {version: t.node.version}});
  });

  it("getSyncingStatus: head slot and distance from the clock", async () => {
    t.chain.slot = 5;
    const {body} = await request(app).get("/eth/v1/node/syncing").expect(200);
    expect(body).toEqual({data: {head_slot: "0", sync_distance: "5", is_syncing: false, is_optimistic: false, el_offline: false}});
  });

  it("getHealth: 200 when synced, 206 or syncing_status while syncing, 400 for a bad status", async () => {
    const res = await request(app).get("/eth/v1/node/health").expect(200);
    expect(res.text).toBe("");
    t.node.syncing = true;
    await request(app).get("/eth/v1/node/health").expect(206);
    await request(app).get("/eth/v1/node/health?syncing_status=299").expect(299);
    expect((await request(app).get("/eth/v1/node/health?syncing_status=99").expect(400)).body).toEqual({code: 400, message: "Invalid syncing status code: 99"});
  });
});
