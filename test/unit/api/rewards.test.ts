import {beforeAll, describe, expect, it} from "@jest/globals";
import {BitArray} from "@chainsafe/ssz";
import {
  BASE_REWARD_FACTOR,
  EFFECTIVE_BALANCE_INCREMENT,
  MAX_COMMITTEES_PER_SLOT,
  PROPOSER_WEIGHT,
  SLOTS_PER_EPOCH,
  SYNC_COMMITTEE_SIZE,
  SYNC_REWARD_WEIGHT,
  TIMELY_HEAD_WEIGHT,
  TIMELY_SOURCE_WEIGHT,
  TIMELY_TARGET_WEIGHT,
  WEIGHT_DENOMINATOR,
} from "@lodestar/params";
import {type CachedBeaconStateAllForks, type CachedBeaconStateFulu, processSlots} from "@lodestar/state-transition";
import {ssz, type fulu} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/**
 * Rewards against the spec's formulas evaluated on the test chain's states: a block at slot 1
 * with one full committee's attestation and ten sync committee votes, and the state at the
 * end of epoch 1 where validators 0..31 took part in epoch 0 and 32..63 did not.
 */

let t: TestContext;
let app: ReturnType<typeof createApp>;
let block: fulu.SignedBeaconBlock;
let blockRootHex: string;
/** the state the block at slot 1 applies to */
let preState: CachedBeaconStateAllForks;
const SYNC_VOTES = 10;
const PARTICIPANTS = 32;

const isqrt = (n: number) => Math.floor(Math.sqrt(n));
const increments = (state: CachedBeaconStateAllForks, i: number) => state.validators.getReadonly(i).effectiveBalance / EFFECTIVE_BALANCE_INCREMENT;
const totalActiveIncrements = (state: CachedBeaconStateAllForks) => Array.from({length: 64}, (_, i) => increments(state, i)).reduce((a, b) => a + b, 0);
/** get_base_reward_per_increment of the spec */
const baseRewardPerIncrement = (state: CachedBeaconStateAllForks) =>
  Math.floor((EFFECTIVE_BALANCE_INCREMENT * BASE_REWARD_FACTOR) / isqrt(totalActiveIncrements(state) * EFFECTIVE_BALANCE_INCREMENT));

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
  preState = processSlots(t.state.clone(), 1);
  const committee = Array.from(t.state.epochCtx.getBeaconCommittee(0, 0));
  const attestation = ssz.electra.Attestation.defaultValue();
  attestation.data = {slot: 0, index: 0, beaconBlockRoot: t.chain.genesisRoot, source: t.state.currentJustifiedCheckpoint.toValue(), target: {epoch: 0, root: t.chain.genesisRoot}};
  attestation.aggregationBits = BitArray.fromBoolArray(committee.map(() => true));
  attestation.committeeBits = BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, 0);
  block = ssz.fulu.SignedBeaconBlock.defaultValue();
  block.message.slot = 1;
  block.message.proposerIndex = preState.epochCtx.getBeaconProposer(1);
  block.message.parentRoot = t.chain.genesisRoot;
  block.message.body.attestations = [attestation];
  block.message.body.syncAggregate.syncCommitteeBits = BitArray.fromBoolArray(Array.from({length: SYNC_COMMITTEE_SIZE}, (_, i) => i < SYNC_VOTES));
  blockRootHex = toHex(t.chain.addBlock(block));

  // the state at the last slot of epoch 1: its previous epoch (0) shows validators 0..31 with every flag
  const endOfEpoch1 = processSlots(t.state.clone(), 2 * SLOTS_PER_EPOCH - 1) as CachedBeaconStateFulu;
  for (let i = 0; i < PARTICIPANTS; i++) endOfEpoch1.previousEpochParticipation.set(i, 0b111);
  endOfEpoch1.commit();
  t.chain.addState(endOfEpoch1);
  t.chain.slot = 2 * SLOTS_PER_EPOCH;
});

describe("getBlockRewards", () => {
  it("gives the proposer's rewards for the block's attestations and sync aggregate", async () => {
    const perIncrement = baseRewardPerIncrement(preState);
    const attesters = t.state.epochCtx.getBeaconCommittee(0, 0).length;
    // each attester's three flags are new: base_reward * (source + target + head weight), over the proposer's denominator
    const weights = TIMELY_SOURCE_WEIGHT + TIMELY_TARGET_WEIGHT + TIMELY_HEAD_WEIGHT;
    const attestations = Math.floor((attesters * increments(preState, 0) * perIncrement * weights) / (((WEIGHT_DENOMINATOR - PROPOSER_WEIGHT) * WEIGHT_DENOMINATOR) / PROPOSER_WEIGHT));
    // process_sync_aggregate: participant reward, and the proposer's share of it per vote
    const maxParticipantRewards = Math.floor((totalActiveIncrements(preState) * perIncrement * SYNC_REWARD_WEIGHT) / WEIGHT_DENOMINATOR / SLOTS_PER_EPOCH);
    const participantReward = Math.floor(maxParticipantRewards / SYNC_COMMITTEE_SIZE);
    const syncAggregate = SYNC_VOTES * Math.floor((participantReward * PROPOSER_WEIGHT) / (WEIGHT_DENOMINATOR - PROPOSER_WEIGHT));

    const res = await request(app).get(`/eth/v1/beacon/rewards/blocks/${blockRootHex}`).expect(200);
    expect(res.body).toEqual({
      execution_optimistic: false,
      finalized: false,
      data: {
        proposer_index: String(block.message.proposerIndex),
        total: String(attestations + syncAggregate),
        attestations: String(attestations),
        sync_aggregate: String(syncAggregate),
        proposer_slashings: "0",
        attester_slashings: "0",
      },
    });
    expect(attestations).toBeGreaterThan(0);
    expect((await request(app).get("/eth/v1/beacon/rewards/blocks/1").expect(200)).body).toEqual(res.body);
  });

  it("the genesis block earned nothing: zeros, with its proposer index (by name, slot and root)", async () => {
    const zeros = {proposer_index: "0", total: "0", attestations: "0", sync_aggregate: "0", proposer_slashings: "0", attester_slashings: "0"};
    for (const id of ["genesis", "0", toHex(t.chain.genesisRoot)]) {
      expect((await request(app).get(`/eth/v1/beacon/rewards/blocks/${id}`).expect(200)).body).toEqual({execution_optimistic: false, finalized: true, data: zeros});
    }
  });

  it("answers 404 for an unknown block, 400 for a malformed id", async () => {
    expect((await request(app).get(`/eth/v1/beacon/rewards/blocks/0x${"11".repeat(32)}`).expect(404)).body).toEqual({code: 404, message: "Block not found"});
    await request(app).get("/eth/v1/beacon/rewards/blocks/7").expect(404);
    expect((await request(app).get("/eth/v1/beacon/rewards/blocks/justified").expect(400)).body).toEqual({code: 400, message: "Invalid block ID: justified"});
  });
});

describe("getSyncCommitteeRewards", () => {
  /** Each committee position's vote: + participant reward when set, - when not, summed per validator (a validator may sit twice). */
  function expectedRewards(): Map<number, number> {
    const participantReward = preState.epochCtx.syncParticipantReward;
    const pubkeys = (preState as CachedBeaconStateFulu).currentSyncCommittee.toValue().pubkeys;
    const rewards = new Map<number, number>();
    pubkeys.forEach((pk, position) => {
      const index = preState.epochCtx.getValidatorIndex(pk)!;
      rewards.set(index, (rewards.get(index) ?? 0) + (position < SYNC_VOTES ? participantReward : -participantReward));
    });
    return rewards;
  }

  it("gives every committee member's reward or penalty for the block's sync aggregate", async () => {
    const res = await request(app).post(`/eth/v1/beacon/rewards/sync_committee/${blockRootHex}`).expect(200);
    const expected = [...expectedRewards()].map(([index, reward]) => ({validator_index: String(index), reward: String(reward)}));
    expect(res.body).toEqual({execution_optimistic: false, finalized: false, data: expected});
    expect(res.body.data.some((r: {reward: string}) => r.reward.startsWith("-"))).toBe(true);
    const emptyList = await request(app).post("/eth/v1/beacon/rewards/sync_committee/1").send([]).expect(200);
    expect(emptyList.body).toEqual(res.body);
  });

  it("keeps the validators the body names (by index or public key); unknown ones name none", async () => {
    const [first, second] = [...expectedRewards().keys()];
    const pubkey = toHex(t.state.validators.getReadonly(second).pubkey);
    const res = await request(app).post(`/eth/v1/beacon/rewards/sync_committee/${blockRootHex}`).send([String(first), pubkey]).expect(200);
    expect(res.body.data.map((r: {validator_index: string}) => r.validator_index).sort()).toEqual([String(first), String(second)].sort());
    expect((await request(app).post(`/eth/v1/beacon/rewards/sync_committee/${blockRootHex}`).send(["9999"]).expect(200)).body.data).toEqual([]);
  });

  it("the genesis block: every member of the genesis sync committee, once, with 0; the body's ids filter them", async () => {
    const pubkeys = (t.state as CachedBeaconStateFulu).currentSyncCommittee.toValue().pubkeys;
    const members = [...new Set(pubkeys.map((pk) => t.state.epochCtx.getValidatorIndex(pk)!))];
    const res = await request(app).post("/eth/v1/beacon/rewards/sync_committee/genesis").send([]).expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: members.map((i) => ({validator_index: String(i), reward: "0"}))});
    const one = await request(app).post("/eth/v1/beacon/rewards/sync_committee/0").send([String(members[1])]).expect(200);
    expect(one.body.data).toEqual([{validator_index: String(members[1]), reward: "0"}]);
  });

  it("answers 400 for a malformed body or block id, 404 for an unknown block", async () => {
    await request(app).post(`/eth/v1/beacon/rewards/sync_committee/${blockRootHex}`).send(["validator"]).expect(400);
    await request(app).post(`/eth/v1/beacon/rewards/sync_committee/${blockRootHex}`).send({ids: []}).expect(400);
    await request(app).post("/eth/v1/beacon/rewards/sync_committee/0x12").send([]).expect(400);
    await request(app).post(`/eth/v1/beacon/rewards/sync_committee/0x${"22".repeat(32)}`).send([]).expect(404);
  });
});

describe("getAttestationsRewards", () => {
  let state: CachedBeaconStateAllForks;
  let idealSource: number, idealTarget: number, idealHead: number, penaltySource: number, penaltyTarget: number;

  beforeAll(async () => {
    state = (await t.chain.getStateBySlot(2 * SLOTS_PER_EPOCH - 1))!;
    const baseReward = increments(state, 0) * baseRewardPerIncrement(state);
    const active = totalActiveIncrements(state);
    const participating = PARTICIPANTS * increments(state, 0);
    // ideal: the flag's share of the base reward, scaled by the participating stake (rounded as lodestar does)
    const ideal = (weight: number) => Math.round((baseReward * weight * participating) / active / WEIGHT_DENOMINATOR);
    [idealSource, idealTarget, idealHead] = [TIMELY_SOURCE_WEIGHT, TIMELY_TARGET_WEIGHT, TIMELY_HEAD_WEIGHT].map(ideal);
    [penaltySource, penaltyTarget] = [TIMELY_SOURCE_WEIGHT, TIMELY_TARGET_WEIGHT].map((w) => Math.round((baseReward * w) / WEIGHT_DENOMINATOR));
  });

  it("gives the ideal rewards per effective balance and every validator's total", async () => {
    const res = await request(app).post("/eth/v1/beacon/rewards/attestations/0").expect(200);
    expect(res.body.execution_optimistic).toBe(false);
    const ideal = res.body.data.ideal_rewards.find((r: {effective_balance: string}) => r.effective_balance === "32000000000");
    expect(ideal).toEqual({effective_balance: "32000000000", head: String(idealHead), target: String(idealTarget), source: String(idealSource), inactivity: "0"});
    expect(res.body.data.total_rewards).toHaveLength(64);
    expect(res.body.data.total_rewards[0]).toEqual({validator_index: "0", head: String(idealHead), target: String(idealTarget), source: String(idealSource), inactivity: "0"});
    expect(res.body.data.total_rewards[40]).toEqual({validator_index: "40", head: "0", target: String(-penaltyTarget), source: String(-penaltySource), inactivity: "0"});
  });

  it("keeps the validators the body names", async () => {
    const pubkey = toHex(t.state.validators.getReadonly(40).pubkey);
    const res = await request(app).post("/eth/v1/beacon/rewards/attestations/0").send(["3", pubkey, "9999"]).expect(200);
    expect(res.body.data.total_rewards.map((r: {validator_index: string}) => r.validator_index)).toEqual(["3", "40"]);
    expect((await request(app).post("/eth/v1/beacon/rewards/attestations/0").send(["9999"]).expect(200)).body.data.total_rewards).toEqual([]);
  });

  it("answers 404 for an epoch not yet complete, 400 for a malformed epoch or body", async () => {
    const future = await request(app).post("/eth/v1/beacon/rewards/attestations/1").send([]).expect(404);
    expect(future.body.message).toMatch(/^The rewards of epoch 1 are known after slot 23/);
    expect((await request(app).post("/eth/v1/beacon/rewards/attestations/one").send([]).expect(400)).body).toEqual({code: 400, message: "Invalid epoch: one"});
    await request(app).post("/eth/v1/beacon/rewards/attestations/0").send("[").set("Content-Type", "application/json").expect(400);
    await request(app).post("/eth/v1/beacon/rewards/attestations/0").send([5]).expect(400);
  });
});
