import {describe, it, expect} from "@jest/globals";
import {PublicKey, Signature, fastAggregateVerify} from "@chainsafe/blst";
import {
  DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
  SYNC_COMMITTEE_SIZE,
  SYNC_COMMITTEE_SUBNET_SIZE,
} from "@lodestar/params";
import {type CachedBeaconStateAltair, computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type altair} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {type TestEnv, applyBlock, createEnv, sign} from "./helpers.ts";
import {expectRejected} from "./expectRejected.ts";

const SLOT = 10;


function syncCommittee(env: TestEnv, slot: number): number[] {
  return Array.from(env.stateAt(slot).epochCtx.getIndexedSyncCommittee(slot).validatorIndices);
}

function message(env: TestEnv, validatorIndex: number, slot = SLOT, root = env.headRoot, signer = validatorIndex): altair.SyncCommitteeMessage {
  const signingRoot = computeSigningRoot(ssz.Root, root, env.config.getDomain(slot, DOMAIN_SYNC_COMMITTEE, slot));
  return {slot, beaconBlockRoot: root, validatorIndex, signature: sign(env, signer, signingRoot)};
}

function contributionAndProof(env: TestEnv, contribution: altair.SyncCommitteeContribution, aggregatorIndex: number): altair.SignedContributionAndProof {
  const {slot, subcommitteeIndex} = contribution;
  const selectionRoot = computeSigningRoot(
    ssz.altair.SyncAggregatorSelectionData,
    {slot, subcommitteeIndex},
    env.config.getDomain(slot, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, slot)
  );
  const message = {aggregatorIndex, contribution, selectionProof: sign(env, aggregatorIndex, selectionRoot)};
  const root = computeSigningRoot(ssz.altair.ContributionAndProof, message, env.config.getDomain(slot, DOMAIN_CONTRIBUTION_AND_PROOF, slot));
  return {message, signature: sign(env, aggregatorIndex, root)};
}

describe("SyncCommitteePools (altair)", () => {
  it("message → contribution → sync aggregate that a block's state transition accepts", async () => {
    const env = createEnv("altair", SLOT);
    const committee = syncCommittee(env, SLOT);
    const pools = env.pools.syncCommittee;
    // the first subcommittee's members only, then the rest through a contribution
    const firstSubnet = committee.slice(0, SYNC_COMMITTEE_SUBNET_SIZE);
    for (const v of new Set(firstSubnet)) await pools.submitSyncCommitteeMessage(message(env, v));
    const contribution = pools.produceContribution(SLOT, 0, env.headRoot);
    expect(contribution?.aggregationBits.getTrueBitIndexes()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(pools.produceContribution(SLOT, 0, new Uint8Array(32).fill(1))).toBeNull();

    await pools.submitContributionAndProof(contributionAndProof(env, contribution as altair.SyncCommitteeContribution, firstSubnet[0]));
    expect(env.events.map((e) => e.topic)).toEqual(["contribution_and_proof"]);

    const aggregate = pools.getSyncAggregate(SLOT + 1, env.headRoot);
    const expected = committee.flatMap((v, i) => (firstSubnet.includes(v) ? [i] : []));
    expect(aggregate.syncCommitteeBits.getTrueBitIndexes()).toEqual(expected);
    // processSyncAggregate checks the signature against the block state's current sync committee
    expect(() => applyBlock(env, SLOT + 1, {syncAggregate: aggregate})).not.toThrow();
    const forged = {...aggregate, syncCommitteeSignature: message(env, firstSubnet[0], SLOT, new Uint8Array(32)).signature};
    expect(() => applyBlock(env, SLOT + 1, {syncAggregate: forged})).toThrow();
  });

  it("an empty aggregate has no bits and the point-at-infinity signature", () => {
    const env = createEnv("altair", SLOT);
    const aggregate = env.pools.syncCommittee.getSyncAggregate(SLOT + 1, env.headRoot);
    expect(aggregate.syncCommitteeBits.bitLen).toBe(SYNC_COMMITTEE_SIZE);
    expect(aggregate.syncCommitteeBits.getTrueBitIndexes()).toEqual([]);
    expect(toHex(aggregate.syncCommitteeSignature)).toBe("0xc0" + "00".repeat(95));
    expect(() => applyBlock(env, SLOT + 1, {syncAggregate: aggregate})).not.toThrow();
  });

  it("rejects messages and contributions that fail validation, keeping nothing", async () => {
    const env = createEnv("altair", SLOT);
    const pools = env.pools.syncCommittee;
    const committee = syncCommittee(env, SLOT);
    const outsider = Array.from({length: 64}, (_, i) => i).find((i) => !committee.includes(i)) as number;
    const member = committee[0];

    await expectRejected(pools.submitSyncCommitteeMessage(message(env, outsider)), new RegExp(`validator ${outsider} is not in the sync committee for slot 10`));
    await expectRejected(pools.submitSyncCommitteeMessage(message(env, member, SLOT, env.headRoot, outsider)), /^invalid signature$/);
    await expectRejected(pools.submitSyncCommitteeMessage(message(env, member, SLOT + 1)), /slot 11 is in the future/);
    await expectRejected(pools.submitSyncCommitteeMessage(message(env, member, SLOT - 2)), /slot 8 is too old/);
    expect(pools.produceContribution(SLOT, 0, env.headRoot)).toBeNull();

    await pools.submitSyncCommitteeMessage(message(env, member));
    const contribution = pools.produceContribution(SLOT, 0, env.headRoot) as altair.SyncCommitteeContribution;
    const notInSubnet = committee.find((v, i) => i >= SYNC_COMMITTEE_SUBNET_SIZE && !committee.slice(0, SYNC_COMMITTEE_SUBNET_SIZE).includes(v)) as number;
    await expectRejected(
      pools.submitContributionAndProof(contributionAndProof(env, contribution, notInSubnet)),
      new RegExp(`aggregator ${notInSubnet} is not in sync subcommittee 0`)
    );
    const badSelection = contributionAndProof(env, contribution, member);
    badSelection.message.selectionProof = message(env, member).signature;
    await expectRejected(pools.submitContributionAndProof(badSelection), /selection proof/);
    const badAggregate = contributionAndProof(env, {...contribution, signature: message(env, member, SLOT, new Uint8Array(32)).signature}, member);
    await expectRejected(pools.submitContributionAndProof(badAggregate), /^invalid contribution signature$/);
    await expectRejected(
      pools.submitContributionAndProof(contributionAndProof(env, {...contribution, subcommitteeIndex: 4}, member)),
      /subcommittee index 4 is out of range/
    );
    expect(env.events).toEqual([]);

    const phase0 = createEnv("phase0", SLOT);
    await expectRejected(phase0.pools.syncCommittee.submitSyncCommitteeMessage(message(phase0, 0)), /before altair/);
  });

  it("one contribution sent by each of its aggregators at once has its signatures checked once; a bad first one does not spare the next", async () => {
    const env = createEnv("altair", SLOT);
    const pools = env.pools.syncCommittee;
    const members = [...new Set(syncCommittee(env, SLOT).slice(0, SYNC_COMMITTEE_SUBNET_SIZE))];
    for (const v of members) await pools.submitSyncCommitteeMessage(message(env, v));
    const contribution = pools.produceContribution(SLOT, 0, env.headRoot) as altair.SyncCommitteeContribution;
    const checked: number[] = [];
    const verifier = env.deps.verifier;
    env.deps.verifier = {verify: (sets, cache) => (checked.push(sets.length), verifier.verify(sets, cache))};

    const forged = contributionAndProof(env, contribution, members[0]);
    forged.message.selectionProof = message(env, members[0]).signature;
    const results = await Promise.allSettled([forged, ...members.slice(1).map((v) => contributionAndProof(env, contribution, v))].map((c) => pools.submitContributionAndProof(c)));
    expect(results[0]).toMatchObject({status: "rejected", reason: {message: expect.stringMatching(/selection proof/)}});
    expect(results.slice(1).map((r) => r.status)).toEqual(members.slice(1).map(() => "fulfilled"));
    // the forged one's batch, then its sets one by one to name the bad one; then the next aggregator's batch, and no other
    expect(checked).toEqual([3, 1, 1, 1, 3]);
    expect(env.events.map((e) => e.topic)).toEqual(["contribution_and_proof"]);
    expect((env.events[0].value as altair.SignedContributionAndProof).message.aggregatorIndex).toBe(members[1]);
  });
});

describe("SyncCommitteePools (fulu)", () => {
  it("aggregates every member's message into a valid SyncAggregate", async () => {
    const env = createEnv("fulu", SLOT);
    const committee = syncCommittee(env, SLOT);
    for (const v of new Set(committee)) await env.pools.syncCommittee.submitSyncCommitteeMessage(message(env, v));
    const aggregate = env.pools.syncCommittee.getSyncAggregate(SLOT + 1, env.headRoot);
    expect(aggregate.syncCommitteeBits.getTrueBitIndexes()).toHaveLength(SYNC_COMMITTEE_SIZE);
    const blockState = env.stateAt(SLOT + 1) as CachedBeaconStateAltair;
    const pubkeys = blockState.currentSyncCommittee.toValue().pubkeys.map((pk) => PublicKey.fromBytes(pk));
    const signingRoot = computeSigningRoot(ssz.Root, env.headRoot, env.config.getDomain(SLOT, DOMAIN_SYNC_COMMITTEE, SLOT));
    expect(fastAggregateVerify(signingRoot, pubkeys, Signature.fromBytes(aggregate.syncCommitteeSignature))).toBe(true);
    env.pools.prune(SLOT + 2);
    expect(env.pools.syncCommittee.getSyncAggregate(SLOT + 1, env.headRoot).syncCommitteeBits.getTrueBitIndexes()).toEqual([]);
  });
});
