import {describe, it, expect, beforeAll, afterEach} from "@jest/globals";
import {SLOTS_PER_EPOCH, SYNC_COMMITTEE_SIZE} from "@lodestar/params";
import {type CachedBeaconStateAltair, processSlots} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {REJECTED_SLOT, createTestContext, type TestContext} from "./testContext.ts";
import {collectBytes} from "./binary.ts";
import {DiskFullError} from "../../../src/db/diskFull.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;
let genesisRootHex: string;
const RANDAO = "0x" + "ab".repeat(96);
const INFINITY = "0xc0" + "00".repeat(95);
const allIndices = Array.from({length: 64}, (_, i) => String(i));

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
  genesisRootHex = toHex(t.chain.genesisRoot);
});
afterEach(() => {
  t.node.syncing = false;
  t.chain.produced.length = 0;
});

describe("duties", () => {
  it("getProposerDuties of the current epoch: one per slot after genesis, from the state's proposer cache", async () => {
    const res = await request(app).get("/eth/v1/validator/duties/proposer/0").expect(200);
    expect(res.body.dependent_root).toBe(genesisRootHex);
    expect(res.body.execution_optimistic).toBe(false);
    const proposers = t.state.epochCtx.getBeaconProposers();
    expect(res.body.data).toEqual(
      proposers.slice(1).map((index, i) => ({pubkey: toHex(t.state.validators.getReadonly(index).pubkey), validator_index: String(index), slot: String(i + 1)}))
    );
  });

  it("getProposerDuties of the next epoch comes from the state advanced to it; further is 400", async () => {
    const res = await request(app).get("/eth/v1/validator/duties/proposer/1").expect(200);
    expect(res.body.data.map((d: {slot: string}) => d.slot)).toEqual(["8", "9", "10", "11", "12", "13", "14", "15"]);
    expect(res.body.dependent_root).toBe(genesisRootHex);
    expect((await request(app).get("/eth/v1/validator/duties/proposer/2").expect(400)).body.message).toBe("Invalid epoch: 2 is beyond the next epoch 1");
    expect((await request(app).get("/eth/v1/validator/duties/proposer/-2").expect(400)).body).toEqual({code: 400, message: "Invalid epoch: -2"});
  });

  it("getAttesterDuties: every active validator once per epoch, at its place in its committee", async () => {
    const res = await request(app).post("/eth/v1/validator/duties/attester/0").send(allIndices).expect(200);
    expect(res.body.dependent_root).toBe(genesisRootHex);
    expect(res.body.data).toHaveLength(64);
    for (const duty of res.body.data) {
      const committee = t.state.epochCtx.getBeaconCommittee(Number(duty.slot), Number(duty.committee_index));
      expect(committee[Number(duty.validator_committee_index)]).toBe(Number(duty.validator_index));
      expect(duty.committee_length).toBe(String(committee.length));
      expect(duty.committees_at_slot).toBe(String(t.state.epochCtx.getCommitteeCountPerSlot(0)));
      expect(duty.pubkey).toBe(toHex(t.state.validators.getReadonly(Number(duty.validator_index)).pubkey));
    }
  });

  it("getAttesterDuties accepts public keys, skips unknown validators, and serves the next epoch", async () => {
    const pubkey = toHex(t.state.validators.getReadonly(12).pubkey);
    const byIndex = await request(app).post("/eth/v1/validator/duties/attester/1").send(["12", "4000"]).expect(200);
    const byKey = await request(app).post("/eth/v1/validator/duties/attester/1").send([pubkey, "0x" + "aa".repeat(48)]).expect(200);
    expect(byIndex.body.data).toHaveLength(1);
    expect(byKey.body).toEqual(byIndex.body);
  });

  it("getAttesterDuties of the epoch after next, asked at an epoch's start before its first block: from the head advanced one epoch, not two", async () => {
    t.chain.slot = SLOTS_PER_EPOCH; // the clock in epoch 1, the head at slot 0
    const advancedTo: number[] = [];
    const getHeadStateAtEpoch = t.chain.getHeadStateAtEpoch.bind(t.chain);
    t.chain.getHeadStateAtEpoch = (epoch: number) => {
      advancedTo.push(epoch);
      return getHeadStateAtEpoch(epoch);
    };
    try {
      const res = await request(app).post("/eth/v1/validator/duties/attester/2").send(allIndices).expect(200);
      expect(advancedTo).toEqual([1]);
      // the committees of epoch 2 as the spec's state transition gives them at epoch 2 itself
      const atEpoch2 = processSlots(t.state.clone(), 2 * SLOTS_PER_EPOCH);
      expect(res.body.dependent_root).toBe(genesisRootHex);
      expect(res.body.data).toHaveLength(64);
      for (const duty of res.body.data) {
        expect(Number(duty.slot)).toBeGreaterThanOrEqual(2 * SLOTS_PER_EPOCH);
        const committee = atEpoch2.epochCtx.getBeaconCommittee(Number(duty.slot), Number(duty.committee_index));
        expect(committee[Number(duty.validator_committee_index)]).toBe(Number(duty.validator_index));
        expect(duty.committee_length).toBe(String(committee.length));
      }
    } finally {
      t.chain.getHeadStateAtEpoch = getHeadStateAtEpoch;
      t.chain.slot = 0;
    }
  });

  it("getAttesterDuties rejects a body that is not a list of indices or keys, and epochs past the next", async () => {
    expect((await request(app).post("/eth/v1/validator/duties/attester/0").send({indices: ["1"]}).expect(400)).body.message).toMatch(/expected a JSON array/);
    expect((await request(app).post("/eth/v1/validator/duties/attester/0").send(["x"]).expect(400)).body.message).toMatch(/invalid validator indices or public keys item 0/);
    await request(app).post("/eth/v1/validator/duties/attester/3").send(["1"]).expect(400);
  });

  it("getSyncCommitteeDuties: the positions of each member in the period's committee", async () => {
    const res = await request(app).post("/eth/v1/validator/duties/sync/0").send(allIndices).expect(200);
    expect(res.body.execution_optimistic).toBe(false);
    const pubkeys = (t.state as CachedBeaconStateAltair).currentSyncCommittee.toValue().pubkeys.map(toHex);
    let positions = 0;
    for (const duty of res.body.data) {
      expect(duty.validator_sync_committee_indices.length).toBeGreaterThan(0);
      for (const p of duty.validator_sync_committee_indices) expect(pubkeys[Number(p)]).toBe(duty.pubkey);
      positions += duty.validator_sync_committee_indices.length;
    }
    expect(positions).toBe(SYNC_COMMITTEE_SIZE);
    await request(app).post("/eth/v1/validator/duties/sync/1000").send(["1"]).expect(400);
  });

  it("duties answer 503 while the node syncs from a head more than an epoch behind the clock, and are served within an epoch", async () => {
    t.node.syncing = true;
    t.chain.slot = SLOTS_PER_EPOCH + 1; // the head is at slot 0
    try {
      const res = await request(app).get("/eth/v1/validator/duties/proposer/0").expect(503);
      expect(res.body.code).toBe(503);
      expect(res.body.message).toMatch(/currently syncing/);
      // a node syncing another branch from a current head (a split network healing) keeps serving its validators
      t.chain.slot = SLOTS_PER_EPOCH;
      await request(app).get("/eth/v1/validator/duties/proposer/0").expect(200);
    } finally {
      t.chain.slot = 0;
    }
  });
});

describe("block production", () => {
  it("answers 503 with the reason while the disk is full: no block the node could not store is produced", async () => {
    t.chain.writesPaused = new DiskFullError("/data/beacon");
    try {
      const res = await request(app).get(`/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}`).expect(503);
      expect(res.body).toEqual({code: 503, message: expect.stringMatching(/^no space left on the disk of \/data\/beacon/)});
    } finally {
      t.chain.writesPaused = null;
    }
  });

  it("produceBlockV3 answers the block contents with its values in body and headers", async () => {
    const res = await request(app).get(`/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}&graffiti=hello%20world`).expect(200);
    expect(res.headers).toMatchObject({
      "eth-consensus-version": "fulu",
      "eth-execution-payload-blinded": "false",
      "eth-execution-payload-value": "12345",
      "eth-consensus-block-value": "7000000000",
    });
    expect(res.body).toMatchObject({version: "fulu", execution_payload_blinded: false, execution_payload_value: "12345", consensus_block_value: "7000000000"});
    expect(res.body.data).toMatchObject({kzg_proofs: [], blobs: [], block: {slot: "1", proposer_index: "3", parent_root: genesisRootHex}});
    expect(new TextDecoder().decode(t.chain.produced[0].graffiti).replace(/\0+$/, "")).toBe("hello world");
    expect(toHex(t.chain.produced[0].randaoReveal)).toBe(RANDAO);
  });

  it("produceBlockV3 takes graffiti as 0x hex; the node's graffiti when absent", async () => {
    await request(app).get(`/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}&graffiti=0x6869`).expect(200);
    expect(Array.from(t.chain.produced[0].graffiti!.slice(0, 3))).toEqual([0x68, 0x69, 0]);
    await request(app).get(`/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}`).expect(200);
    expect(t.chain.produced[1].graffiti).toEqual(t.node.graffiti());
  });

  it("produceBlockV3 as SSZ round-trips the block contents", async () => {
    const res = await request(app)
      .get(`/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}`)
      .set("Accept", "application/octet-stream")
      .buffer(true)
      .parse(collectBytes)
      .expect(200);
    const contents = ssz.fulu.BlockContents.deserialize(new Uint8Array(res.body));
    expect(contents.block.slot).toBe(1);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
  });

  it.each([
    ["a missing randao_reveal", "/eth/v3/validator/blocks/1", "Missing required parameter randao_reveal"],
    ["a short randao_reveal", "/eth/v3/validator/blocks/1?randao_reveal=0x1234", "Invalid randao_reveal: 0x1234"],
    ["graffiti over 32 bytes", `/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}&graffiti=${"x".repeat(33)}`, `Invalid graffiti: ${"x".repeat(33)}`],
    ["the head's slot", `/eth/v3/validator/blocks/0?randao_reveal=${RANDAO}`, "Invalid slot: 0 is not after the head slot 0"],
    ["a future slot", `/eth/v3/validator/blocks/5?randao_reveal=${RANDAO}`, "Invalid slot: 5 is in the future (current slot 0)"],
    ["an unverified randao that is not the infinity point", `/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}&skip_randao_verification`, "randao_reveal must be the point at infinity when skip_randao_verification is set"],
    ["a builder_boost_factor over 2^64-1", `/eth/v3/validator/blocks/1?randao_reveal=${RANDAO}&builder_boost_factor=18446744073709551616`, "Invalid builder_boost_factor: 18446744073709551616"],
  ])("produceBlockV3 rejects %s with 400", async (_what, url, message) => {
    expect((await request(app).get(url).expect(400)).body).toEqual({code: 400, message});
  });

  it("produceBlockV3 accepts skip_randao_verification with the infinity point, and a large builder_boost_factor", async () => {
    await request(app).get(`/eth/v3/validator/blocks/1?randao_reveal=${INFINITY}&skip_randao_verification=&builder_boost_factor=18446744073709551615`).expect(200);
  });

  it("produceBlockV2 (the product spec's endpoint) answers version, contents, and the values old validator clients read", async () => {
    const res = await request(app).get(`/eth/v2/validator/blocks/1?randao_reveal=${RANDAO}&graffiti=0x01`).expect(200);
    expect(res.headers).toMatchObject({"eth-consensus-version": "fulu", "eth-execution-payload-value": "12345", "eth-consensus-block-value": "7000000000"});
    // Lodestar 1.5 (early 2023) reads a top-level `block_value`: the execution payload value in wei, a decimal string
    expect(res.body).toMatchObject({version: "fulu", block_value: "12345", consensus_block_value: "7000000000"});
    expect(Object.keys(res.body).sort()).toEqual(["block_value", "consensus_block_value", "data", "version"]);
    expect(res.body.data.block.body.graffiti).toBe("0x01" + "00".repeat(31));
  });

  it("produceBlockV2 as SSZ carries the values in the v3 headers", async () => {
    const res = await request(app).get(`/eth/v2/validator/blocks/1?randao_reveal=${RANDAO}`).set("Accept", "application/octet-stream").buffer(true).parse(collectBytes).expect(200);
    expect(res.headers).toMatchObject({"eth-consensus-version": "fulu", "eth-execution-payload-value": "12345", "eth-consensus-block-value": "7000000000"});
    expect(ssz.fulu.BlockContents.deserialize(new Uint8Array(res.body)).block.slot).toBe(1);
  });
});

describe("attestations and aggregation", () => {
  it("produceAttestationData as JSON and SSZ", async () => {
    const res = await request(app).get("/eth/v1/validator/attestation_data?slot=0&committee_index=0").expect(200);
    expect(res.body.data).toMatchObject({slot: "0", index: "0", beacon_block_root: genesisRootHex});
    const bytes = await request(app).get("/eth/v1/validator/attestation_data?slot=0&committee_index=0").set("Accept", "application/octet-stream").buffer(true).expect(200);
    expect(bytes.headers["content-type"]).toBe("application/octet-stream");
    expect((await request(app).get("/eth/v1/validator/attestation_data?slot=0").expect(400)).body.message).toBe("Missing required parameter committee_index");
  });

  it("getAggregatedAttestationV2: the pool's aggregate with its version; 404 without one", async () => {
    const root = "0x" + "00".repeat(32);
    const res = await request(app).get(`/eth/v2/validator/aggregate_attestation?attestation_data_root=${root}&slot=1&committee_index=0`).expect(200);
    expect(res.body).toEqual({version: "fulu", data: ssz.electra.Attestation.toJson(t.aggregate)});
    await request(app).get(`/eth/v2/validator/aggregate_attestation?attestation_data_root=${root}&slot=2&committee_index=0`).expect(404);
    // v1 serves pre-electra attestations only
    expect((await request(app).get(`/eth/v1/validator/aggregate_attestation?attestation_data_root=${root}&slot=1`).expect(400)).body.message).toMatch(/expects electra/);
  });

  it("submitPoolAttestationsV2 applies the valid items and reports the others by index", async () => {
    const single = (slot: number) => ssz.electra.SingleAttestation.toJson({...ssz.electra.SingleAttestation.defaultValue(), data: {...ssz.phase0.AttestationData.defaultValue(), slot}});
    const before = t.submitted.attestations.length;
    const res = await request(app).post("/eth/v2/beacon/pool/attestations").set("Eth-Consensus-Version", "fulu").send([single(1), single(REJECTED_SLOT), single(2)]).expect(400);
    expect(res.body).toEqual({code: 400, message: "1 of 3 attestations failed", failures: [{index: 1, message: `rejected: slot ${REJECTED_SLOT}`}]});
    expect(t.submitted.attestations.length - before).toBe(2);
    await request(app).post("/eth/v2/beacon/pool/attestations").set("Eth-Consensus-Version", "fulu").send([single(1)]).expect(200);
  });

  it("submitPoolAttestations (v1) rejects pre-electra attestations at electra slots, per item", async () => {
    const att = ssz.phase0.Attestation.toJson(ssz.phase0.Attestation.defaultValue());
    const res = await request(app).post("/eth/v1/beacon/pool/attestations").send([att]).expect(400);
    expect(res.body.failures).toEqual([{index: 0, message: "slot 0 is in fork fulu, which expects electra attestation objects"}]);
  });

  it("publishAggregateAndProofsV2 in JSON and SSZ, with per-item failures", async () => {
    const signed = (slot: number) => {
      const value = ssz.electra.SignedAggregateAndProof.defaultValue();
      value.message.aggregate.data.slot = slot;
      return value;
    };
    const post = () => request(app).post("/eth/v2/validator/aggregate_and_proofs").set("Eth-Consensus-Version", "fulu");
    const res = await post().send([signed(1), signed(REJECTED_SLOT)].map((v) => ssz.electra.SignedAggregateAndProof.toJson(v))).expect(400);
    expect(res.body.failures).toEqual([{index: 1, message: `rejected: slot ${REJECTED_SLOT}`}]);
    const list = [signed(1), signed(2)];
    const bytes = Buffer.concat(list.map((v) => ssz.electra.SignedAggregateAndProof.serialize(v)).map((b) => Buffer.from(b)));
    // a list of variable-size items: 4-byte offsets first
    const offsets = Buffer.alloc(8);
    offsets.writeUInt32LE(8, 0);
    offsets.writeUInt32LE(8 + ssz.electra.SignedAggregateAndProof.serialize(list[0]).length, 4);
    await post().set("Content-Type", "application/octet-stream").send(Buffer.concat([offsets, bytes])).expect(200);
  });
});

describe("sync committee and subscriptions", () => {
  it("submitPoolSyncCommitteeSignatures and publishContributionAndProofs report failures by index", async () => {
    const msg = (slot: number) => ssz.altair.SyncCommitteeMessage.toJson({...ssz.altair.SyncCommitteeMessage.defaultValue(), slot});
    const res = await request(app).post("/eth/v1/beacon/pool/sync_committees").send([msg(REJECTED_SLOT), msg(1)]).expect(400);
    expect(res.body.failures).toEqual([{index: 0, message: `rejected: slot ${REJECTED_SLOT}`}]);
    const contribution = ssz.altair.SignedContributionAndProof.defaultValue();
    contribution.message.contribution.slot = 1;
    await request(app).post("/eth/v1/validator/contribution_and_proofs").send([ssz.altair.SignedContributionAndProof.toJson(contribution)]).expect(200);
    expect(t.submitted.contributions).toHaveLength(1);
  });

  it("produceSyncCommitteeContribution: the pool's contribution; 404 without one; 400 for a bad subcommittee", async () => {
    const url = (slot: number, sub: number) => `/eth/v1/validator/sync_committee_contribution?slot=${slot}&subcommittee_index=${sub}&beacon_block_root=${genesisRootHex}`;
    const res = await request(app).get(url(1, 2)).expect(200);
    expect(res.body.data).toMatchObject({slot: "1", subcommittee_index: "2", beacon_block_root: genesisRootHex});
    await request(app).get(url(2, 0)).expect(404);
    await request(app).get(url(1, 9)).expect(400);
  });

  it("prepareBeaconProposer records fee recipients; subscriptions are accepted", async () => {
    const address = "0x" + "12".repeat(20);
    await request(app).post("/eth/v1/validator/prepare_beacon_proposer").send([{validator_index: "4", fee_recipient: address}]).expect(200);
    expect(toHex(t.feeRecipients.get(4)!)).toBe(address);
    await request(app).post("/eth/v1/validator/prepare_beacon_proposer").send([{validator_index: "4", fee_recipient: "0x12"}]).expect(400);
    const sub = {validator_index: "1", committee_index: "0", committees_at_slot: "1", slot: "1", is_aggregator: true};
    await request(app).post("/eth/v1/validator/beacon_committee_subscriptions").send([sub]).expect(200);
    await request(app).post("/eth/v1/validator/sync_committee_subscriptions").send([{validator_index: "1", sync_committee_indices: ["0"], until_epoch: "1"}]).expect(200);
  });
});
