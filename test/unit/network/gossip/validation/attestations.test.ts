import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_SELECTION_PROOF, MAX_COMMITTEES_PER_SLOT, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type electra, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {type ChainEnv, createChainEnv} from "./chainEnv.ts";

describe("attestation gossip validation (fulu: SingleAttestation, electra aggregates)", () => {
  let env: ChainEnv;
  let block1Root: Uint8Array;
  const SLOT = 2;

  beforeAll(async () => {
    env = await createChainEnv("fulu");
    for (const slot of [1, 2]) {
      env.setTime(slot, 100);
      const imported = await env.chain.importBlock(await env.produceBlock(slot));
      if (slot === 1) block1Root = imported.blockRoot;
    }
  }, 60_000);
  afterAll(() => env.close());

  const committee = async (slot: number, index: number) => Array.from((await env.chain.getHeadStateAtEpoch(0)).epochCtx.getBeaconCommittee(slot, index));
  const committeesPerSlot = async () => (await env.chain.getHeadStateAtEpoch(0)).epochCtx.getCommitteeCountPerSlot(0);
  const subnetOf = async (slot: number, index: number) => ((await committeesPerSlot()) * (slot % SLOTS_PER_EPOCH) + index) % 64;

  async function single(slot: number, committeeIndex: number, attesterIndex: number, edit?: (d: phase0.AttestationData) => void, signer = attesterIndex): Promise<electra.SingleAttestation> {
    const data = await env.attestationData(slot);
    edit?.(data);
    return {committeeIndex, attesterIndex, data, signature: env.signAttestation(data, signer)};
  }
  const validate = async (att: electra.SingleAttestation, subnet?: number) =>
    env.validators.beacon_attestation(env.topic("beacon_attestation", subnet ?? (await subnetOf(att.data.slot, att.committeeIndex))), att, "peer");

  it("ACCEPTs an attestation on its subnet into the pool, then IGNOREs the attester's next one for the target", async () => {
    env.setTime(SLOT, 700);
    const [member] = await committee(SLOT, 0);
    const att = await single(SLOT, 0, member);
    expect(await validate(att)).toMatchObject({result: "ACCEPT"});
    expect(env.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 0})).toHaveLength(1);
    expect(await validate(await single(SLOT, 0, member))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/seen already/)});
  });

  it("on a subnet where no validator of the node aggregates: ACCEPTs (forwarded) and counts the attester as seen, keeps nothing to aggregate", async () => {
    env.setTime(SLOT, 700);
    const members = await committee(SLOT, 1);
    const subnet = await subnetOf(SLOT, 1);
    env.setAggregatesOn((s, slot) => !(s === subnet && slot === SLOT));
    try {
      expect(await validate(await single(SLOT, 1, members[0]))).toMatchObject({result: "ACCEPT"});
      expect(env.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 1})).toHaveLength(0);
      expect(await validate(await single(SLOT, 1, members[0]))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/seen already/)});
      // once an aggregator of ours is there, the subnet's attestations are summed again
      env.setAggregatesOn(() => true);
      expect(await validate(await single(SLOT, 1, members[1]))).toMatchObject({result: "ACCEPT"});
      expect(env.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 1}).map((a) => a.aggregationBits.getTrueBitIndexes())).toEqual([[1]]);
    } finally {
      env.setAggregatesOn(() => true);
    }
  });

  it("REJECTs the wrong subnet, a bad signature, an attester outside the committee, a bad committee index or target", async () => {
    env.setTime(SLOT, 700);
    const [, second, third] = await committee(SLOT, 0);
    const outsider = (await committee(SLOT, 1))[0];
    const right = await subnetOf(SLOT, 0);
    expect(await validate(await single(SLOT, 0, second), (right + 1) % 64)).toMatchObject({result: "REJECT", reason: expect.stringMatching(`belongs to subnet ${right}`)});
    expect(await validate(await single(SLOT, 0, second, undefined, third))).toMatchObject({result: "REJECT", reason: "invalid signature"});
    expect(await validate(await single(SLOT, 0, outsider))).toMatchObject({result: "REJECT", reason: expect.stringMatching(/not in committee 0/)});
    const cps = await committeesPerSlot();
    expect(await validate(await single(SLOT, cps, second), 0)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/committee index \d+ is out of range/)});
    const wrongEpoch = await single(SLOT, 0, second, (d) => (d.target.epoch = 1));
    expect(await validate(wrongEpoch)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/target epoch 1 is not the epoch of its slot/)});
    // the target root must be the voted block's checkpoint block (genesis, for epoch 0)
    const wrongTarget = await single(SLOT, 0, second, (d) => (d.target.root = block1Root));
    expect(await validate(wrongTarget)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/is not the checkpoint block/)});
    expect(env.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 0})[0].aggregationBits.getTrueBitIndexes()).toEqual([0]);
  });

  it("IGNOREs a vote for an unknown block, naming it for sync", async () => {
    env.setTime(SLOT, 700);
    const [, second] = await committee(SLOT, 0);
    const unknown = await single(SLOT, 0, second, (d) => (d.beaconBlockRoot = new Uint8Array(32).fill(0xee)));
    expect(await validate(unknown)).toEqual({result: "IGNORE", reason: expect.stringMatching(/unknown block root/), unknownBlockRoot: "0x" + "ee".repeat(32)});
  });

  it("applies the slot range with the clock disparity allowance: waits for a slot about to start", async () => {
    env.setTime(SLOT - 1, 1400); // 600 ms before SLOT
    const [, , third] = await committee(SLOT, 0);
    expect(await validate(await single(SLOT, 0, third))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/in the future/)});
    env.setTime(SLOT - 1, 1700); // 300 ms before SLOT
    env.slept.ms = 0;
    expect(await validate(await single(SLOT, 0, third))).toMatchObject({result: "ACCEPT"});
    expect(env.slept.ms).toBe(300);
    // EIP-7045: the previous epoch is still accepted, the one before is not
    env.setTime(2 * SLOTS_PER_EPOCH + 1, 0);
    const [fourth] = (await committee(SLOT, 1)).slice(1);
    expect(await validate(await single(SLOT, 1, fourth))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/older than the previous epoch/)});
  });

  describe("beacon_aggregate_and_proof", () => {
    async function aggregateOf(slot: number, index: number, positions: number[]): Promise<electra.Attestation> {
      const members = await committee(slot, index);
      const data = await env.attestationData(slot);
      const signatures = positions.map((p) => Signature.fromBytes(env.signAttestation(data, members[p])));
      return {
        aggregationBits: BitArray.fromBoolArray(members.map((_, i) => positions.includes(i))),
        data,
        committeeBits: BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, index),
        signature: aggregateSignatures(signatures).toBytes(),
      };
    }
    function signedAggregate(aggregate: electra.Attestation, aggregatorIndex: number, signer = aggregatorIndex): electra.SignedAggregateAndProof {
      const slot = aggregate.data.slot;
      const selectionProof = env.sign(aggregatorIndex, computeSigningRoot(ssz.Slot, slot, env.config.getDomain(slot, DOMAIN_SELECTION_PROOF, slot)));
      const message = {aggregatorIndex, aggregate, selectionProof};
      const root = computeSigningRoot(ssz.electra.AggregateAndProof, message, env.config.getDomain(slot, DOMAIN_AGGREGATE_AND_PROOF, slot));
      return {message, signature: env.sign(signer, root)};
    }
    const validateAggregate = (signed: electra.SignedAggregateAndProof) => env.validators.beacon_aggregate_and_proof(env.topic("beacon_aggregate_and_proof"), signed, "peer");

    it("ACCEPTs an aggregate into the pool, IGNOREs its aggregator's next one, REJECTs a forged aggregator signature", async () => {
      env.setTime(SLOT + 1, 100);
      const members = await committee(SLOT, 1);
      const aggregate = await aggregateOf(SLOT, 1, [0, 1, 2]);
      expect(await validateAggregate(signedAggregate(aggregate, members[0], members[1]))).toMatchObject({result: "REJECT", reason: "invalid aggregator signature"});
      expect(await validateAggregate(signedAggregate(aggregate, members[0]))).toMatchObject({result: "ACCEPT"});
      const best = env.chain.pools.attestations.getAggregate(SLOT, ssz.phase0.AttestationData.hashTreeRoot(aggregate.data), 1);
      expect(best?.aggregationBits.getTrueBitIndexes()).toEqual([0, 1, 2]);
      const more = await aggregateOf(SLOT, 1, [0, 1, 2, 3].filter((i) => i < members.length));
      expect(await validateAggregate(signedAggregate(more, members[0]))).toMatchObject({result: "IGNORE"});
      // a subset of a known aggregate adds nothing, whoever sends it
      const subset = await aggregateOf(SLOT, 1, [1]);
      expect(await validateAggregate(signedAggregate(subset, members[1]))).toMatchObject({result: "IGNORE"});
    });

    it("IGNOREs an aggregate from the future and REJECTs one whose target is not the voted block's checkpoint", async () => {
      env.setTime(SLOT + 1, 100);
      const members = await committee(SLOT + 2, 0);
      expect(await validateAggregate(signedAggregate(await aggregateOf(SLOT + 2, 0, [0]), members[0]))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/future/)});
      const aggregate = await aggregateOf(SLOT, 0, [1]);
      aggregate.data = {...aggregate.data, target: {epoch: 0, root: block1Root}};
      expect(await validateAggregate(signedAggregate(aggregate, (await committee(SLOT, 0))[1]))).toMatchObject({
        result: "REJECT",
        reason: expect.stringMatching(new RegExp(`target root ${toRootHex(block1Root)} is not the checkpoint block`)),
      });
    });
  });
});
