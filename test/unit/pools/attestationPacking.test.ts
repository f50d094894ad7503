import {describe, it, expect} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_SELECTION_PROOF, ForkSeq, MAX_COMMITTEES_PER_SLOT} from "@lodestar/params";
import {type CachedBeaconStateAltair, computeSigningRoot, processAttestationsAltair, processSlots} from "@lodestar/state-transition";
import {ssz, type electra, type phase0} from "@lodestar/types";
import {type TestEnv, applyBlock, attestationData, committeeAt, createEnv, sign, signAttestationData} from "./helpers.ts";

/** Every member of the slot's committees submits its attestation (phase0 or electra format). */
async function attestAll(env: TestEnv, slot: number, data?: (committeeIndex: number) => phase0.AttestationData): Promise<void> {
  const postElectra = env.config.getForkSeq(slot) >= ForkSeq.electra;
  const count = env.stateAt(slot).epochCtx.getCommitteeCountPerSlot(0);
  for (let index = 0; index < count; index++) {
    const committee = committeeAt(env, slot, index);
    const d = data?.(index) ?? attestationData(env, slot, postElectra ? 0 : index);
    for (const [position, validator] of committee.entries()) {
      const signature = signAttestationData(env, d, validator);
      const att = postElectra
        ? {committeeIndex: index, attesterIndex: validator, data: d, signature}
        : {aggregationBits: BitArray.fromSingleBit(committee.length, position), data: d, signature};
      await env.pools.attestations.submitAttestation(att);
    }
  }
}

describe("getAttestationsForBlock, phase0", () => {
  it("packs attestations a phase0 block accepts (full state transition, signatures verified)", async () => {
    const env = createEnv("phase0", 10);
    await attestAll(env, 9);
    await attestAll(env, 10);
    const atts = env.pools.attestations.getAttestationsForBlock(env.stateAt(11));
    // two committees per slot, two slots, each committee full
    expect(atts).toHaveLength(4);
    for (const att of atts) expect(att.aggregationBits.getTrueBitIndexes()).toHaveLength(att.aggregationBits.bitLen);
    const post = applyBlock(env, 11, {attestations: atts});
    // once included, nothing new is left to include
    expect(env.pools.attestations.getAttestationsForBlock(processSlots(post, 12))).toEqual([]);
  });

  it("holds the inclusion rules: delay, epoch window, source", async () => {
    const env = createEnv("phase0", 10);
    await attestAll(env, 10);
    expect(env.pools.attestations.getAttestationsForBlock(env.stateAt(10))).toEqual([]); // MIN_ATTESTATION_INCLUSION_DELAY
    expect(env.pools.attestations.getAttestationsForBlock(env.stateAt(18))).toHaveLength(2); // slot + SLOTS_PER_EPOCH
    expect(env.pools.attestations.getAttestationsForBlock(env.stateAt(19))).toEqual([]); // too late before deneb

    const wrongSource = createEnv("phase0", 10);
    await attestAll(wrongSource, 10, (index) => ({...attestationData(wrongSource, 10, index), source: {epoch: 0, root: wrongSource.headRoot}}));
    expect(wrongSource.pools.attestations.getAll()).toHaveLength(2);
    expect(wrongSource.pools.attestations.getAttestationsForBlock(wrongSource.stateAt(11))).toEqual([]);
  });
});

describe("getAttestationsForBlock, merging and overlap (phase0)", () => {
  it("merges a disjoint aggregate-and-proof with the singles, and keeps an overlapping one only for what it adds", async () => {
    const env = createEnv("phase0", 10);
    const committee = committeeAt(env, 10, 0);
    const data = attestationData(env, 10, 0);
    const singleOf = (position: number) => ({aggregationBits: BitArray.fromSingleBit(committee.length, position), data, signature: signAttestationData(env, data, committee[position])});
    const aggregateAndProof = (positions: number[], aggregator: number) => {
      const aggregate = {
        aggregationBits: BitArray.fromBoolArray(committee.map((_, i) => positions.includes(i))),
        data,
        signature: aggregateSignatures(positions.map((p) => Signature.fromBytes(signAttestationData(env, data, committee[p])))).toBytes(),
      };
      const selectionProof = sign(env, aggregator, computeSigningRoot(ssz.Slot, 10, env.config.getDomain(10, DOMAIN_SELECTION_PROOF, 10)));
      const message = {aggregatorIndex: aggregator, aggregate, selectionProof};
      const root = computeSigningRoot(ssz.phase0.AggregateAndProof, message, env.config.getDomain(10, DOMAIN_AGGREGATE_AND_PROOF, 10));
      return {message, signature: sign(env, aggregator, root)};
    };
    await env.pools.attestations.submitAttestation(singleOf(0));
    await env.pools.attestations.submitAttestation(singleOf(1));
    await env.pools.attestations.submitAggregateAndProof(aggregateAndProof([2, 3], committee[2]));
    let atts = env.pools.attestations.getAttestationsForBlock(env.stateAt(11));
    expect(atts.map((a) => a.aggregationBits.getTrueBitIndexes())).toEqual([[0, 1, 2, 3]]);
    applyBlock(env, 11, {attestations: atts});

    const overlap = createEnv("phase0", 10);
    await overlap.pools.attestations.submitAttestation(singleOf(0));
    await overlap.pools.attestations.submitAttestation(singleOf(1));
    await overlap.pools.attestations.submitAggregateAndProof(aggregateAndProof([1, 2, 3], committee[3]));
    atts = overlap.pools.attestations.getAttestationsForBlock(overlap.stateAt(11));
    // the larger first; the singles' aggregate still credits validator 0
    expect(atts.map((a) => a.aggregationBits.getTrueBitIndexes())).toEqual([[1, 2, 3], [0, 1]]);
    applyBlock(overlap, 11, {attestations: atts});
  });
});

describe("getAttestationsForBlock, electra format (fulu)", () => {
  it("combines the committees of one data into on-chain aggregates that process_attestation accepts", async () => {
    const env = createEnv("fulu", 10);
    await attestAll(env, 9);
    await attestAll(env, 10);
    const state = env.stateAt(11).clone() as CachedBeaconStateAltair;
    const atts = env.pools.attestations.getAttestationsForBlock(state) as electra.Attestation[];
    expect(atts).toHaveLength(2);
    for (const att of atts) {
      expect(att.committeeBits.bitLen).toBe(MAX_COMMITTEES_PER_SLOT);
      expect(att.committeeBits.getTrueBitIndexes()).toEqual([0, 1]);
      const size = committeeAt(env, att.data.slot, 0).length + committeeAt(env, att.data.slot, 1).length;
      expect(att.aggregationBits.bitLen).toBe(size);
      expect(att.aggregationBits.getTrueBitIndexes()).toHaveLength(size);
    }
    expect(() => processAttestationsAltair(ForkSeq.fulu, state, atts, null, true)).not.toThrow();
    // the participation flags are set now: nothing new to include
    expect(env.pools.attestations.getAttestationsForBlock(state)).toEqual([]);
  });

  it("includes a partly attested committee and keeps the EIP-7045 window", async () => {
    const env = createEnv("fulu", 10);
    const committee = committeeAt(env, 10, 1);
    const data = attestationData(env, 10, 0);
    await env.pools.attestations.submitAttestation({committeeIndex: 1, attesterIndex: committee[2], data, signature: signAttestationData(env, data, committee[2])});
    const state = env.stateAt(11).clone() as CachedBeaconStateAltair;
    const [att] = env.pools.attestations.getAttestationsForBlock(state) as electra.Attestation[];
    expect(att.committeeBits.getTrueBitIndexes()).toEqual([1]);
    expect(att.aggregationBits.getTrueBitIndexes()).toEqual([2]);
    // (the check has teeth: a wrong signature is refused)
    const forged = {...att, signature: signAttestationData(env, data, committee[1])};
    expect(() => processAttestationsAltair(ForkSeq.fulu, state.clone(), [forged], null, true)).toThrow();
    expect(() => processAttestationsAltair(ForkSeq.fulu, state, [att], null, true)).not.toThrow();
    // deneb+: includable until the end of the next epoch (slot 23), not after
    expect(env.pools.attestations.getAttestationsForBlock(env.stateAt(23))).toHaveLength(1);
    expect(env.pools.attestations.getAttestationsForBlock(env.stateAt(24))).toEqual([]);
  });
});
