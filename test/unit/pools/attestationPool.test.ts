import {describe, it, expect} from "@jest/globals";
import {PublicKey, Signature, aggregateSignatures, fastAggregateVerify} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_BEACON_ATTESTER, DOMAIN_SELECTION_PROOF, MAX_COMMITTEES_PER_SLOT} from "@lodestar/params";
import {computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey, isAggregatorFromCommitteeLength} from "@lodestar/state-transition";
import {ssz, type electra, type phase0} from "@lodestar/types";
import {type TestEnv, attestationData, committeeAt, createEnv, sign, signAttestationData} from "./helpers.ts";
import {expectRejected} from "./expectRejected.ts";

function single(env: TestEnv, slot: number, committeeIndex: number, attesterIndex: number, data = attestationData(env, slot, 0)): electra.SingleAttestation {
  return {committeeIndex, attesterIndex, data, signature: signAttestationData(env, data, attesterIndex)};
}

function phase0Single(env: TestEnv, slot: number, committeeIndex: number, position: number): phase0.Attestation {
  const committee = committeeAt(env, slot, committeeIndex);
  const data = attestationData(env, slot, committeeIndex);
  return {aggregationBits: BitArray.fromSingleBit(committee.length, position), data, signature: signAttestationData(env, data, committee[position])};
}

/** Verifies an aggregate's signature against the pubkeys of the given attesters. */
function verifyAggregate(env: TestEnv, data: phase0.AttestationData, attesters: number[], signature: Uint8Array): boolean {
  const domain = env.config.getDomain(data.slot, DOMAIN_BEACON_ATTESTER, computeStartSlotAtEpoch(data.target.epoch));
  const pks = attesters.map((i) => PublicKey.fromBytes(interopSecretKey(i).toPublicKey().toBytes()));
  return fastAggregateVerify(computeSigningRoot(ssz.phase0.AttestationData, data, domain), pks, Signature.fromBytes(signature));
}

function aggregateOf(env: TestEnv, data: phase0.AttestationData, validators: number[]): Uint8Array {
  return aggregateSignatures(validators.map((v) => Signature.fromBytes(signAttestationData(env, data, v)))).toBytes();
}


function signedAggregateAndProof(env: TestEnv, aggregate: phase0.Attestation | electra.Attestation, aggregatorIndex: number) {
  const slot = aggregate.data.slot;
  const selectionProof = sign(env, aggregatorIndex, computeSigningRoot(ssz.Slot, slot, env.config.getDomain(slot, DOMAIN_SELECTION_PROOF, slot)));
  const message = {aggregatorIndex, aggregate, selectionProof};
  const type = "committeeBits" in aggregate ? ssz.electra.AggregateAndProof : ssz.phase0.AggregateAndProof;
  const root = computeSigningRoot(type as typeof ssz.phase0.AggregateAndProof, message as phase0.AggregateAndProof, env.config.getDomain(slot, DOMAIN_AGGREGATE_AND_PROOF, slot));
  return {message, signature: sign(env, aggregatorIndex, root)};
}

describe("AttestationPool, electra shape (fulu)", () => {
  const SLOT = 10;

  it("accepts a valid single attestation and aggregates a second one", async () => {
    const env = createEnv("fulu", SLOT);
    const committee = committeeAt(env, SLOT, 1);
    await env.pools.attestations.submitAttestation(single(env, SLOT, 1, committee[0]));
    await env.pools.attestations.submitAttestation(single(env, SLOT, 1, committee[2]));

    const data = attestationData(env, SLOT, 0);
    const agg = env.pools.attestations.getAggregate(SLOT, ssz.phase0.AttestationData.hashTreeRoot(data), 1) as electra.Attestation;
    expect(agg).not.toBeNull();
    expect(agg.committeeBits.getTrueBitIndexes()).toEqual([1]);
    expect(agg.committeeBits.bitLen).toBe(MAX_COMMITTEES_PER_SLOT);
    expect(agg.aggregationBits.bitLen).toBe(committee.length);
    expect(agg.aggregationBits.getTrueBitIndexes()).toEqual([0, 2]);
    expect(verifyAggregate(env, data, [committee[0], committee[2]], agg.signature)).toBe(true);
    expect(env.pools.attestations.getAggregate(SLOT, ssz.phase0.AttestationData.hashTreeRoot(data), 0)).toBeNull();

    expect(env.events.map((e) => e.topic)).toEqual(["single_attestation", "single_attestation"]);
    expect(env.votes).toEqual([
      {indices: [committee[0]], root: expect.stringMatching(/^0x/), targetEpoch: 1},
      {indices: [committee[2]], root: expect.stringMatching(/^0x/), targetEpoch: 1},
    ]);
    expect(env.pools.attestations.getAll({slot: SLOT, committeeIndex: 1})).toHaveLength(1);
    expect(env.pools.attestations.getAll({committeeIndex: 0})).toHaveLength(0);
  });

  it("ignores a repeated attester for the same target", async () => {
    const env = createEnv("fulu", SLOT);
    const committee = committeeAt(env, SLOT, 0);
    await env.pools.attestations.submitAttestation(single(env, SLOT, 0, committee[0]));
    await env.pools.attestations.submitAttestation(single(env, SLOT, 0, committee[0]));
    expect(env.events).toHaveLength(1);
    expect(env.pools.attestations.getAll()[0].aggregationBits.getTrueBitIndexes()).toEqual([0]);
  });

  it("rejects, with a reason and without a trace, what fails validation", async () => {
    const env = createEnv("fulu", SLOT);
    const pool = env.pools.attestations;
    const committee = committeeAt(env, SLOT, 0);
    const outsider = committeeAt(env, SLOT, 1)[0];

    const wrongKey = single(env, SLOT, 0, committee[0]);
    wrongKey.signature = signAttestationData(env, wrongKey.data, committee[1]);
    await expectRejected(pool.submitAttestation(wrongKey), /^invalid signature$/);

    await expectRejected(pool.submitAttestation(single(env, SLOT, 0, outsider)), new RegExp(`validator ${outsider} not in committee 0`));

    const unknownRoot = {...attestationData(env, SLOT, 0), beaconBlockRoot: new Uint8Array(32).fill(7)};
    await expectRejected(pool.submitAttestation(single(env, SLOT, 0, committee[0], unknownRoot)), /unknown block root 0x0707/);

    const indexed = {...attestationData(env, SLOT, 0), index: 1};
    await expectRejected(pool.submitAttestation(single(env, SLOT, 0, committee[0], indexed)), /data.index must be 0/);

    await expectRejected(pool.submitAttestation(single(env, SLOT, 5, committee[0])), /committee index 5 is out of range/);

    const badTarget = {...attestationData(env, SLOT, 0), target: {epoch: 0, root: env.headRoot}};
    await expectRejected(pool.submitAttestation(single(env, SLOT, 0, committee[0], badTarget)), /target epoch 0 is not the epoch of its slot 10/);

    await expectRejected(pool.submitAttestation(phase0Single(env, SLOT, 0, 0)), /must use the electra format/);

    env.setSlot(SLOT - 1);
    await expectRejected(pool.submitAttestation(single(env, SLOT, 0, committee[0])), /slot 10 is in the future/);

    // EIP-7045: from deneb an attestation is accepted in the current and previous epoch only.
    env.setSlot(2 * 8 + 1);
    await expectRejected(pool.submitAttestation(single(env, 3, 0, committeeAt(env, 3, 0)[0], attestationData(env, 3, 0))), /attestation slot 3 is too old/);

    expect(pool.getAll()).toHaveLength(0);
    expect(env.events).toHaveLength(0);
    expect(env.votes).toHaveLength(0);
  });

  it("accepts an aggregate-and-proof and rejects one with a wrong aggregator signature", async () => {
    const env = createEnv("fulu", SLOT);
    const committee = committeeAt(env, SLOT, 0);
    const data = attestationData(env, SLOT, 0);
    const aggregate: electra.Attestation = {
      aggregationBits: BitArray.fromBoolArray(committee.map((_, i) => i < 3)),
      data,
      committeeBits: BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, 0),
      signature: aggregateOf(env, data, committee.slice(0, 3)),
    };

    const forged = signedAggregateAndProof(env, aggregate, committee[0]);
    forged.signature = signedAggregateAndProof(env, aggregate, committee[1]).signature;
    await expectRejected(env.pools.attestations.submitAggregateAndProof(forged), /^invalid aggregator signature$/);

    const outsider = committeeAt(env, SLOT, 1)[0];
    await expectRejected(env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, aggregate, outsider)), /aggregator \d+ not in committee 0/);
    expect(env.events).toHaveLength(0);

    await env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, aggregate, committee[0]));
    expect(env.events.map((e) => e.topic)).toEqual(["attestation"]);
    expect(env.votes).toEqual([{indices: committee.slice(0, 3), root: expect.any(String), targetEpoch: 1}]);
    const best = env.pools.attestations.getAggregate(SLOT, ssz.phase0.AttestationData.hashTreeRoot(data), 0);
    expect(best?.aggregationBits.getTrueBitIndexes()).toEqual([0, 1, 2]);
    // A second aggregate whose bits are a subset of the first adds nothing: ignored.
    const subset = {...aggregate, aggregationBits: BitArray.fromSingleBit(committee.length, 1), signature: aggregateOf(env, data, [committee[1]])};
    await env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, subset, committee[1]));
    expect(env.events).toHaveLength(1);
  });

  it("one aggregate sent by each aggregator of its committee at once has its signatures checked once", async () => {
    const env = createEnv("fulu", SLOT);
    const committee = committeeAt(env, SLOT, 0);
    const data = attestationData(env, SLOT, 0);
    const aggregate: electra.Attestation = {
      aggregationBits: BitArray.fromBoolArray(committee.map(() => true)),
      data,
      committeeBits: BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, 0),
      signature: aggregateOf(env, data, committee),
    };
    const checked: number[] = [];
    const verifier = env.deps.verifier;
    env.deps.verifier = {verify: (sets, cache) => (checked.push(sets.length), verifier.verify(sets, cache))};
    await Promise.all(committee.map((v) => env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, aggregate, v))));
    expect(committee.length).toBeGreaterThan(1);
    expect(checked).toEqual([3]);
    expect(env.events.map((e) => e.topic)).toEqual(["attestation"]);
  });
});

describe("AttestationPool, phase0 shape", () => {
  const SLOT = 10;

  it("accepts single-bit attestations and serves their phase0 aggregate", async () => {
    const env = createEnv("phase0", SLOT);
    const committee = committeeAt(env, SLOT, 1);
    await env.pools.attestations.submitAttestation(phase0Single(env, SLOT, 1, 0));
    await env.pools.attestations.submitAttestation(phase0Single(env, SLOT, 1, 3));
    const data = attestationData(env, SLOT, 1);
    const agg = env.pools.attestations.getAggregate(SLOT, ssz.phase0.AttestationData.hashTreeRoot(data));
    expect(agg).not.toBeNull();
    expect("committeeBits" in (agg as object)).toBe(false);
    expect(agg?.aggregationBits.getTrueBitIndexes()).toEqual([0, 3]);
    expect(verifyAggregate(env, data, [committee[0], committee[3]], (agg as phase0.Attestation).signature)).toBe(true);
    expect(env.events.map((e) => e.topic)).toEqual(["attestation", "attestation"]);
  });

  it("rejects an attestation with two bits, a too-old slot, and the electra format", async () => {
    const env = createEnv("phase0", SLOT);
    const two = phase0Single(env, SLOT, 0, 0);
    two.aggregationBits.set(1, true);
    await expectRejected(env.pools.attestations.submitAttestation(two), /exactly one aggregation bit set, has 2/);
    await expectRejected(env.pools.attestations.submitAttestation(single(env, SLOT, 0, committeeAt(env, SLOT, 0)[0])), /must use the pre-electra format/);
    env.setSlot(SLOT + env.config.ATTESTATION_PROPAGATION_SLOT_RANGE + 1);
    await expectRejected(env.pools.attestations.submitAttestation(phase0Single(env, SLOT, 0, 0)), /slot 10 is too old: more than 32 slots/);
    expect(env.pools.attestations.getAll()).toHaveLength(0);
  });

  it("rejects an aggregate-and-proof from a validator its selection proof does not select", async () => {
    // 1024 validators: committees of 32, so is_aggregator selects about one validator in two.
    const env = createEnv("phase0", SLOT, {count: 1024});
    const committee = committeeAt(env, SLOT, 0);
    expect(committee.length).toBe(32);
    const data = attestationData(env, SLOT, 0);
    const aggregate: phase0.Attestation = {aggregationBits: BitArray.fromSingleBit(committee.length, 0), data, signature: aggregateOf(env, data, [committee[0]])};
    const isSelected = (v: number) =>
      isAggregatorFromCommitteeLength(committee.length, signedAggregateAndProof(env, aggregate, v).message.selectionProof);
    const nonAggregator = committee.find((v) => !isSelected(v)) as number;
    const aggregator = committee.find((v) => isSelected(v)) as number;
    await expectRejected(
      env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, aggregate, nonAggregator)),
      new RegExp(`validator ${nonAggregator} is not an aggregator for slot 10 committee 0`)
    );
    expect(env.pools.attestations.getAll()).toHaveLength(0);
    await env.pools.attestations.submitAggregateAndProof(signedAggregateAndProof(env, aggregate, aggregator));
    expect(env.pools.attestations.getAll()).toHaveLength(1);
  });

  it("prune drops attestations too old to serve or include", async () => {
    const env = createEnv("phase0", SLOT);
    await env.pools.attestations.submitAttestation(phase0Single(env, SLOT, 0, 0));
    env.pools.prune(SLOT + 32);
    expect(env.pools.attestations.getAll()).toHaveLength(1);
    env.pools.prune(SLOT + 33);
    expect(env.pools.attestations.getAll()).toHaveLength(0);
  });
});
