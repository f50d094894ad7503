import {beforeAll, describe, expect, it} from "@jest/globals";
import {ForkName} from "@lodestar/params";
import {ssz, type LightClientUpdate} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import request from "supertest";
import {decodeUpdateChunks} from "../../../src/api/routes/lightClient.ts";
import {createApp} from "../../../src/api/server/index.ts";
import {binary} from "./binary.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/** The light-client routes over the chain's light-client reader: shapes, headers, and bad input as beacon-apis says. */

let t: TestContext;
let app: ReturnType<typeof createApp>;
const KNOWN_ROOT = new Uint8Array(32).fill(7);

function fuluUpdate(attestedSlot: number): LightClientUpdate {
  const u = ssz.fulu.LightClientUpdate.defaultValue();
  u.attestedHeader.beacon.slot = attestedSlot;
  u.signatureSlot = attestedSlot + 1;
  u.syncAggregate.syncCommitteeBits.set(0, true);
  return u as LightClientUpdate;
}

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
  const bootstrap = ssz.fulu.LightClientBootstrap.defaultValue();
  bootstrap.header.beacon.slot = 8;
  t.chain.lightClient.bootstraps.set(toRootHex(KNOWN_ROOT), {fork: ForkName.fulu, value: bootstrap});
  t.chain.lightClient.updates.set(0, {fork: ForkName.fulu, value: fuluUpdate(3)});
  t.chain.lightClient.updates.set(1, {fork: ForkName.fulu, value: fuluUpdate(70)});
});

describe("bootstrap", () => {
  it("answers {version, data} with Eth-Consensus-Version, and the same value as SSZ", async () => {
    const res = await request(app).get(`/eth/v1/beacon/light_client/bootstrap/${toRootHex(KNOWN_ROOT)}`).expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body.version).toBe("fulu");
    expect(res.body.data.header.beacon.slot).toBe("8");
    expect(res.body.data.current_sync_committee_branch).toHaveLength(6);
    const ssz_ = await binary(request(app).get(`/eth/v1/beacon/light_client/bootstrap/${toRootHex(KNOWN_ROOT)}`).set("Accept", "application/octet-stream")).expect(200);
    expect(ssz_.headers["eth-consensus-version"]).toBe("fulu");
    expect(ssz.fulu.LightClientBootstrap.deserialize(new Uint8Array(ssz_.body)).header.beacon.slot).toBe(8);
  });

  it("is 404 for a root it has none for, 400 for one that is not 32 bytes of hex", async () => {
    expect((await request(app).get(`/eth/v1/beacon/light_client/bootstrap/0x${"ab".repeat(32)}`).expect(404)).body.code).toBe(404);
    expect((await request(app).get("/eth/v1/beacon/light_client/bootstrap/0xabcd").expect(400)).body.code).toBe(400);
    expect((await request(app).get("/eth/v1/beacon/light_client/bootstrap/head").expect(400)).body.code).toBe(400);
  });
});

describe("updates by range", () => {
  it("answers a bare JSON array of {version, data}", async () => {
    const res = await request(app).get("/eth/v1/beacon/light_client/updates?start_period=0&count=2").expect(200);
    expect(res.body.map((u: {version: string; data: {attested_header: {beacon: {slot: string}}}}) => [u.version, u.data.attested_header.beacon.slot])).toEqual([
      ["fulu", "3"],
      ["fulu", "70"],
    ]);
  });

  it("answers SSZ as response chunks: u64 LE length, the fork digest of the attested epoch, the update", async () => {
    const res = await binary(request(app).get("/eth/v1/beacon/light_client/updates?start_period=0&count=2").set("Accept", "application/octet-stream")).expect(200);
    const bytes = new Uint8Array(res.body);
    const payload = ssz.fulu.LightClientUpdate.serialize(fuluUpdate(3) as never);
    expect(Number(Buffer.from(bytes).readBigUInt64LE(0))).toBe(4 + payload.length);
    expect(bytes.subarray(12, 12 + payload.length)).toEqual(payload);
    const digests: string[] = [];
    const chunks = decodeUpdateChunks(bytes, (digest) => {
      digests.push(toHex(digest));
      return ForkName.fulu;
    });
    expect(chunks.map((c) => c.data.attestedHeader.beacon.slot)).toEqual([3, 70]);
    expect(digests).toHaveLength(2);
    // one fork (fulu from genesis, no blob-parameter change): one 4-byte digest for both
    expect(digests[0]).toMatch(/^0x[0-9a-f]{8}$/);
    expect(digests[1]).toBe(digests[0]);
  });

  it("is 400 for a count of 0, a missing or malformed parameter, and a value past uint64", async () => {
    for (const query of ["start_period=0&count=0", "count=1", "start_period=0", "start_period=one&count=1", "start_period=0&count=-1", "start_period=18446744073709551616&count=1"]) {
      const res = await request(app).get(`/eth/v1/beacon/light_client/updates?${query}`);
      expect([query, res.status, res.body.code]).toEqual([query, 400, 400]);
    }
  });

  it("answers periods past the chain with an empty list, whatever the count", async () => {
    const res = await request(app).get("/eth/v1/beacon/light_client/updates?start_period=18446744073709551615&count=18446744073709551615").expect(200);
    expect(res.body).toEqual([]);
    await request(app).get("/eth/v1/beacon/light_client/updates?start_period=5&count=18446744073709551615").expect(200);
    expect(t.chain.lightClient.rangeCalls.at(-1)![0]).toBe(5);
  });
});

describe("finality and optimistic updates", () => {
  it("are 404 until there is one, then {version, data} with Eth-Consensus-Version", async () => {
    t.chain.lightClient.finality = null;
    t.chain.lightClient.optimistic = null;
    expect((await request(app).get("/eth/v1/beacon/light_client/finality_update").expect(404)).body.code).toBe(404);
    expect((await request(app).get("/eth/v1/beacon/light_client/optimistic_update").expect(404)).body.code).toBe(404);
    const optimistic = ssz.electra.LightClientOptimisticUpdate.defaultValue();
    optimistic.signatureSlot = 9;
    t.chain.lightClient.optimistic = {fork: ForkName.electra, value: optimistic};
    const res = await request(app).get("/eth/v1/beacon/light_client/optimistic_update").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("electra");
    expect(res.body).toEqual({version: "electra", data: ssz.electra.LightClientOptimisticUpdate.toJson(optimistic)});
  });
});
