import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_CONTRIBUTION_AND_PROOF, DOMAIN_SYNC_COMMITTEE, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, SYNC_COMMITTEE_SUBNET_SIZE} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type altair} from "@lodestar/types";
import {type ChainEnv, createChainEnv} from "./chainEnv.ts";

describe("sync committee gossip validation (fulu)", () => {
  let env: ChainEnv;
  let committee: number[];
  const SLOT = 2;

  beforeAll(async () => {
    env = await createChainEnv("fulu");
    env.setTime(1, 100);
    await env.chain.importBlock(await env.produceBlock(1));
    committee = Array.from((await env.chain.getHeadStateAtEpoch(0)).epochCtx.getIndexedSyncCommittee(SLOT).validatorIndices);
  }, 60_000);
  afterAll(() => env.close());

  const subnetsOf = (v: number) => [...new Set(committee.flatMap((m, i) => (m === v ? [Math.floor(i / SYNC_COMMITTEE_SUBNET_SIZE)] : [])))];
  function message(validatorIndex: number, slot = SLOT, root = env.headRoot(), signer = validatorIndex): altair.SyncCommitteeMessage {
    const signingRoot = computeSigningRoot(ssz.Root, root, env.config.getDomain(slot, DOMAIN_SYNC_COMMITTEE, slot));
    return {slot, beaconBlockRoot: root, validatorIndex, signature: env.sign(signer, signingRoot)};
  }
  const validate = (msg: altair.SyncCommitteeMessage, subnet: number) => env.validators.sync_committee(env.topic("sync_committee", subnet), msg, "peer");

  it("ACCEPTs a member's message on its subnet, IGNOREs it repeated there, REJECTs another subnet or a bad signature", async () => {
    env.setTime(SLOT, 500);
    const member = committee[0];
    const [subnet] = subnetsOf(member);
    const elsewhere = [0, 1, 2, 3].find((s) => !subnetsOf(member).includes(s)) as number;
    expect(await validate(message(member, SLOT, env.headRoot(), committee[9]), subnet)).toMatchObject({result: "REJECT", reason: "invalid signature"});
    expect(await validate(message(member), elsewhere)).toMatchObject({result: "REJECT", reason: expect.stringMatching(`not in sync subcommittee ${elsewhere}`)});
    expect(await validate(message(member), subnet)).toMatchObject({result: "ACCEPT"});
    expect(await validate(message(member), subnet)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/seen already/)});
    expect(env.chain.pools.syncCommittee.produceContribution(SLOT, subnet, env.headRoot())?.aggregationBits.getTrueBitIndexes()).toHaveLength(
      committee.slice(subnet * SYNC_COMMITTEE_SUBNET_SIZE, (subnet + 1) * SYNC_COMMITTEE_SUBNET_SIZE).filter((v) => v === member).length
    );
  });

  it("checks, on each further subnet, the signature of a message that differs from the one accepted", async () => {
    env.setTime(SLOT, 500);
    const twice = committee.find((v) => subnetsOf(v).length >= 2);
    expect(twice).toBeDefined();
    const [first, second] = subnetsOf(twice as number);
    expect(await validate(message(twice as number), first)).toMatchObject({result: "ACCEPT"});
    // the pool skips validators it has a message from: this forgery must still be caught
    const forged = message(twice as number, SLOT, new Uint8Array(32).fill(1), committee.find((v) => v !== twice));
    expect(await validate(forged, second)).toMatchObject({result: "REJECT", reason: "invalid signature"});
    expect(await validate(message(twice as number), second)).toMatchObject({result: "ACCEPT"});
  });

  it("accepts the current slot only, with the clock disparity allowance", async () => {
    const member = committee[1];
    const [subnet] = subnetsOf(member);
    // MAXIMUM_GOSSIP_CLOCK_DISPARITY is 500 ms, on both sides of the slot
    env.setTime(SLOT + 1, 500);
    expect(await validate(message(member, SLOT), subnet)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not the current slot/)});
    env.setTime(SLOT + 1, 499);
    expect(await validate(message(committee[2], SLOT), subnetsOf(committee[2])[0])).toMatchObject({result: "ACCEPT"});
    env.setTime(SLOT, 1499); // 501 ms before the next slot
    expect(await validate(message(member, SLOT + 1), subnet)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not the current slot/)});
    env.setTime(SLOT, 1500); // 500 ms before it
    env.slept.ms = 0;
    expect(await validate(message(member, SLOT + 1), subnet)).toMatchObject({result: "ACCEPT"});
    expect(env.slept.ms).toBe(500);
  });

  describe("sync_committee_contribution_and_proof", () => {
    function contributionAndProof(subcommitteeIndex: number, positions: number[], aggregatorIndex: number, signer = aggregatorIndex): altair.SignedContributionAndProof {
      const members = committee.slice(subcommitteeIndex * SYNC_COMMITTEE_SUBNET_SIZE, (subcommitteeIndex + 1) * SYNC_COMMITTEE_SUBNET_SIZE);
      const single = positions.map((p) => message(members[p]).signature);
      const contribution: altair.SyncCommitteeContribution = {
        slot: SLOT,
        beaconBlockRoot: env.headRoot(),
        subcommitteeIndex,
        aggregationBits: BitArray.fromBoolArray(members.map((_, i) => positions.includes(i))),
        signature: aggregateSignatures(single.map((sig) => Signature.fromBytes(sig))).toBytes(),
      };
      const selectionRoot = computeSigningRoot(ssz.altair.SyncAggregatorSelectionData, {slot: SLOT, subcommitteeIndex}, env.config.getDomain(SLOT, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, SLOT));
      const proof = {aggregatorIndex, contribution, selectionProof: env.sign(aggregatorIndex, selectionRoot)};
      const root = computeSigningRoot(ssz.altair.ContributionAndProof, proof, env.config.getDomain(SLOT, DOMAIN_CONTRIBUTION_AND_PROOF, SLOT));
      return {message: proof, signature: env.sign(signer, root)};
    }
    const validate = (signed: altair.SignedContributionAndProof) =>
      env.validators.sync_committee_contribution_and_proof(env.topic("sync_committee_contribution_and_proof"), signed, "peer");

    it("ACCEPTs a contribution, IGNOREs its aggregator's next one, REJECTs a forged aggregator signature or an old slot", async () => {
      env.setTime(SLOT, 1000);
      const aggregator = committee[SYNC_COMMITTEE_SUBNET_SIZE];
      expect(await validate(contributionAndProof(1, [0], aggregator, committee[0]))).toMatchObject({result: "REJECT", reason: "invalid aggregator signature"});
      expect(await validate(contributionAndProof(1, [0], aggregator))).toMatchObject({result: "ACCEPT"});
      expect(await validate(contributionAndProof(1, [0, 1], aggregator))).toMatchObject({result: "IGNORE"});
      env.setTime(SLOT + 1, 600);
      expect(await validate(contributionAndProof(1, [0, 1], committee[SYNC_COMMITTEE_SUBNET_SIZE + 1]))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not the current slot/)});
    });
  });
});
