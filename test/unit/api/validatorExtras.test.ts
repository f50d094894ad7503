import {describe, it, expect, beforeAll, afterEach} from "@jest/globals";
import {DOMAIN_APPLICATION_BUILDER, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type bellatrix} from "@lodestar/types";
import request from "supertest";
import {createApiHandlers, createApp} from "../../../src/api/server/index.ts";
import {ValidatorLiveness} from "../../../src/chain/liveness.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
});
afterEach(() => {
  t.chain.slot = 0;
  t.node.syncing = false;
  t.node.registrations.length = 0;
});

describe("getLiveness", () => {
  it("is true for validators seen in the epoch, false for the others", async () => {
    t.chain.liveness.record(0, [1, 2]);
    t.chain.liveness.record(1, [3]);
    const res = await request(app).post("/eth/v1/validator/liveness/0").send(["1", "2", "3"]).expect(200);
    expect(res.body).toEqual({
      data: [
        {index: "1", is_live: true},
        {index: "2", is_live: true},
        {index: "3", is_live: false},
      ],
    });
    const next = await request(app).post("/eth/v1/validator/liveness/1").send(["1", "3"]).expect(200);
    expect(next.body.data).toEqual([
      {index: "1", is_live: false},
      {index: "3", is_live: true},
    ]);
  });

  it("serves the previous, current and next epoch; rejects others, unknown validators and an empty list", async () => {
    t.chain.slot = 3 * 8;
    await request(app).post("/eth/v1/validator/liveness/2").send(["1"]).expect(200);
    await request(app).post("/eth/v1/validator/liveness/4").send(["1"]).expect(200);
    expect((await request(app).post("/eth/v1/validator/liveness/1").send(["1"]).expect(400)).body.message).toMatch(/^Invalid epoch: 1/);
    expect((await request(app).post("/eth/v1/validator/liveness/5").send(["1"]).expect(400)).body.message).toMatch(/^Invalid epoch: 5/);
    expect((await request(app).post("/eth/v1/validator/liveness/3").send(["64"]).expect(400)).body.message).toBe("Invalid validator index: 64");
    await request(app).post("/eth/v1/validator/liveness/3").send([]).expect(400);
    await request(app).post("/eth/v1/validator/liveness/3").send(["x"]).expect(400);
  });

  it("answers 503 while syncing from a head more than an epoch behind", async () => {
    t.node.syncing = true;
    t.chain.slot = 2 * SLOTS_PER_EPOCH;
    try {
      await request(app).post("/eth/v1/validator/liveness/0").send(["1"]).expect(503);
    } finally {
      t.chain.slot = 0;
    }
  });

  it("the record: proposers in their block's epoch, attesters in the target epoch, only the last few epochs kept", () => {
    const liveness = new ValidatorLiveness();
    liveness.recordBlock({slot: 17, proposerIndex: 9, attestations: [{data: {target: {epoch: 1}}, attestingIndices: [4, 1000]}]});
    expect([liveness.isLive(2, 9), liveness.isLive(1, 9), liveness.isLive(1, 4), liveness.isLive(1, 1000), liveness.isLive(2, 4)]).toEqual([true, false, true, true, false]);
    liveness.record(5, [7]);
    expect([liveness.isLive(1, 4), liveness.isLive(2, 9), liveness.isLive(5, 7)]).toEqual([false, true, true]);
    liveness.record(1, [4]);
    expect(liveness.isLive(1, 4)).toBe(false);
  });
});

describe("registerValidator", () => {
  function registration(index: number, signer = index, timestamp = 1000): bellatrix.SignedValidatorRegistrationV1 {
    const message = {feeRecipient: new Uint8Array(20).fill(index), gasLimit: 30_000_000, timestamp, pubkey: interopSecretKey(index).toPublicKey().toBytes()};
    const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, t.chain.config.GENESIS_FORK_VERSION, new Uint8Array(32));
    const signature = interopSecretKey(signer).sign(computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, message, domain)).toBytes();
    return {message, signature};
  }
  const toJson = (regs: bellatrix.SignedValidatorRegistrationV1[]) => regs.map((r) => ssz.bellatrix.SignedValidatorRegistrationV1.toJson(r));

  it("keeps registrations signed with the builder domain", async () => {
    await request(app).post("/eth/v1/validator/register_validator").send(toJson([registration(1), registration(2)])).expect(200);
    expect(t.node.registrations.map((r) => r.feeRecipient[0])).toEqual([1, 2]);
  });

  it("rejects a bad signature with its index in failures, and keeps the valid ones", async () => {
    const bad = registration(3, 4);
    const res = await request(app).post("/eth/v1/validator/register_validator").send(toJson([registration(1), bad])).expect(400);
    expect(res.body).toEqual({code: 400, message: "1 of 2 validator registrations failed", failures: [{index: 1, message: "invalid signature"}]});
    expect(t.node.registrations.map((r) => r.feeRecipient[0])).toEqual([1]);
  });

  it("accepts SSZ bodies; leaves out validators the chain does not know", async () => {
    const body = ssz.bellatrix.SignedValidatorRegistrationV1;
    const list = [registration(5), registration(200)];
    const bytes = Buffer.concat(list.map((r) => body.serialize(r)));
    await request(app).post("/eth/v1/validator/register_validator").set("Content-Type", "application/octet-stream").send(bytes).expect(200);
    expect(t.node.registrations.map((r) => r.feeRecipient[0])).toEqual([5]);
  });
});

describe("selections", () => {
  it("submitBeaconCommitteeSelections answers 501: the job of distributed validator middleware", async () => {
    const res = await request(app)
      .post("/eth/v1/validator/beacon_committee_selections")
      .send([{validator_index: "1", slot: "1", selection_proof: "0x" + "00".repeat(96)}])
      .expect(501);
    expect(res.body).toEqual({code: 501, message: expect.stringMatching(/^Not implemented/)});
  });

  it("submitSyncCommitteeSelections answers 501", async () => {
    const res = await request(app)
      .post("/eth/v1/validator/sync_committee_selections")
      .send([{validator_index: "1", slot: "1", subcommittee_index: "0", selection_proof: "0x" + "00".repeat(96)}])
      .expect(501);
    expect(res.body.code).toBe(501);
  });

  it.each(["beacon_committee_selections", "sync_committee_selections"])("%s: 501 before the body is read: none, malformed, of the wrong type, or over the body limit", async (name) => {
    const url = `/eth/v1/validator/${name}`;
    const small = createApp({bodyLimit: 16}, t.ctx);
    for (const res of [
      await request(app).post(url),
      await request(app).post(url).set("Content-Type", "application/json").send("{not json"),
      await request(app).post(url).set("Content-Type", "application/octet-stream").send(Buffer.from([1, 2, 3])),
      await request(small).post(url).send([{validator_index: "1", slot: "1", selection_proof: "0x" + "00".repeat(96)}]),
    ]) {
      expect({status: res.status, body: res.body}).toEqual({status: 501, body: {code: 501, message: expect.stringMatching(/^Not implemented/)}});
    }
  });

  it("the in-process transport declines the same way, whatever the body", async () => {
    const wire = await createApiHandlers(t.ctx).submitBeaconCommitteeSelections({params: {}, query: {}, headers: {}, body: new Uint8Array([0xff])});
    expect(wire.status).toBe(501);
  });
});
