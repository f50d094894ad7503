import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_SELECTION_PROOF, MAX_COMMITTEES_PER_SLOT} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type Root, type electra, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {computeSubnetForAttestation} from "../../../src/network/subnets.ts";
import {type ChainEnv, createChainEnv} from "../network/gossip/validation/chainEnv.ts";

/**
 * Committees come from the attestation's target checkpoint state (fork-choice.md on_attestation,
 * p2p-interface.md), not from the head's. Two branches diverge in epoch 0 (a block at slot 1 on
 * one, at slot 2 on the other), so their RANDAO mixes at the end of epoch 0, and with them the
 * shufflings of epoch 2, differ. The node's head is on branch A; an attestation of epoch 2 on
 * branch B, signed by B's committee, is valid and must be accepted. B's committees are read from
 * a second, separate chain that only ever saw branch B.
 */
describe("attestations are checked against the committees of their own target", () => {
  const SLOT = 16; // epoch 2: its shuffling depends on the RANDAO mix at the end of epoch 0
  let node: ChainEnv;
  let branchB: ChainEnv;
  let b2: Root;
  let a16: Root;

  beforeAll(async () => {
    [node, branchB] = await Promise.all([createChainEnv("fulu"), createChainEnv("fulu")]);
    node.setTime(1, 100);
    await node.chain.importBlock(await node.produceBlock(1));
    branchB.setTime(2, 100);
    const blockB2 = await branchB.produceBlock(2);
    b2 = (await branchB.chain.importBlock(blockB2)).blockRoot;
    node.setTime(SLOT, 100);
    a16 = (await node.chain.importBlock(await node.produceBlock(SLOT))).blockRoot;
    await node.chain.importBlock(blockB2);
    branchB.setTime(SLOT, 1000);
    node.setTime(SLOT, 1000);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([node?.close(), branchB?.close()]);
  });

  const committeeOf = async (env: ChainEnv, index: number) => Array.from((await env.chain.getHeadStateAtEpoch(2)).epochCtx.getBeaconCommittee(SLOT, index));

  /** a member of B's committee at (SLOT, index) that the head's committee of the same index lacks */
  async function branchOnlyMember(index: number): Promise<{member: number; committee: number[]}> {
    const committee = await committeeOf(branchB, index);
    const headCommittee = await committeeOf(node, index);
    const member = committee.find((v) => !headCommittee.includes(v));
    if (member === undefined) throw new Error("the branches' committees do not differ: the test would prove nothing");
    return {member, committee};
  }

  it("the head is on branch A, and branch B's target is B's own block", async () => {
    expect(toRootHex(node.chain.getHead().blockRoot)).toBe(toRootHex(a16));
    const data = await branchB.attestationData(SLOT);
    expect(toRootHex(data.beaconBlockRoot)).toBe(toRootHex(b2));
    expect(data.target).toEqual({epoch: 2, root: b2});
  });

  it("an attestation on the head's chain reads the head state's committees: no state is regenerated", async () => {
    const [member] = await committeeOf(node, 1);
    const data = await node.attestationData(SLOT);
    const states = node.chain.cachedStateCount();
    await node.chain.pools.attestations.submitAttestation({committeeIndex: 1, attesterIndex: member, data, signature: node.signAttestation(data, member)});
    expect(node.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 1})).toHaveLength(1);
    expect(node.chain.cachedStateCount()).toBe(states);
  });

  it("ACCEPTs on gossip a single attestation of branch B's committee (the head's committee lacks its attester)", async () => {
    const {member} = await branchOnlyMember(0);
    const data = await branchB.attestationData(SLOT);
    const att: electra.SingleAttestation = {committeeIndex: 0, attesterIndex: member, data, signature: branchB.signAttestation(data, member)};
    const committeesPerSlot = (await branchB.chain.getHeadStateAtEpoch(2)).epochCtx.getCommitteeCountPerSlot(2);
    const topic = node.topic("beacon_attestation", computeSubnetForAttestation(committeesPerSlot, SLOT, 0));
    expect(await node.validators.beacon_attestation(topic, att, "peer")).toMatchObject({result: "ACCEPT"});
    // the vote counts for B's block
    expect(node.chain.pools.attestations.getAll({slot: SLOT, committeeIndex: 0})).toHaveLength(1);
  });

  it("IGNOREs an attestation whose target block is unknown (its committees cannot be known), and asks for its voted block", async () => {
    const [member] = await committeeOf(node, 0);
    const data = await node.attestationData(SLOT);
    const unknown = new Uint8Array(32).fill(0xee);
    const edited = {...data, beaconBlockRoot: unknown, target: {epoch: 2, root: unknown}};
    const att: electra.SingleAttestation = {committeeIndex: 0, attesterIndex: member, data: edited, signature: node.signAttestation(edited, member)};
    const topic = node.topic("beacon_attestation", computeSubnetForAttestation(2, SLOT, 0));
    expect(await node.validators.beacon_attestation(topic, att, "peer")).toMatchObject({result: "IGNORE", unknownBlockRoot: toRootHex(unknown)});
    await expect(node.chain.pools.attestations.submitAttestation(att)).rejects.toMatchObject({reason: expect.stringMatching(/^unknown block root 0xee/)});
  });

  it("accepts an aggregate of branch B's committee, from its cached shuffling", async () => {
    const {member, committee} = await branchOnlyMember(1);
    const data = await branchB.attestationData(SLOT);
    const position = committee.indexOf(member);
    const aggregate: electra.Attestation = {
      aggregationBits: BitArray.fromSingleBit(committee.length, position),
      data,
      signature: branchB.signAttestation(data, member),
      committeeBits: BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, 1),
    };
    const selectionProof = branchB.sign(member, computeSigningRoot(ssz.Slot, SLOT, node.config.getDomain(SLOT, DOMAIN_SELECTION_PROOF, SLOT)));
    const message = {aggregatorIndex: member, aggregate, selectionProof};
    const proofRoot = computeSigningRoot(ssz.electra.AggregateAndProof, message, node.config.getDomain(SLOT, DOMAIN_AGGREGATE_AND_PROOF, SLOT));
    const states = node.chain.cachedStateCount();
    await node.chain.pools.attestations.submitAggregateAndProof({message, signature: branchB.sign(member, proofRoot)});
    expect(node.chain.cachedStateCount()).toBe(states);
    const root = ssz.phase0.AttestationData.hashTreeRoot(data as phase0.AttestationData);
    expect(node.chain.pools.attestations.getAggregate(SLOT, root, 1)).not.toBeNull();
  });
});
