import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_AGGREGATE_AND_PROOF, DOMAIN_SELECTION_PROOF, ForkSeq, SLOTS_PER_EPOCH} from "@lodestar/params";
import {
  type EpochShuffling,
  computeEpochAtSlot,
  computeSigningRoot,
  createAggregateSignatureSetFromComponents,
  createIndexedSignatureSetFromComponents,
  getAttestationDataSigningRoot,
  isAggregatorFromCommitteeLength,
} from "@lodestar/state-transition";
import {ssz, type SignedAggregateAndProof, type electra, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {type CommitteeAggregate, isPostElectraSlot} from "./aggregate.ts";
import {assertValidSignatures, type NamedSignatureSet} from "./signatures.ts";
import {PoolError, type PoolDeps} from "./types.ts";

/** An attestation that passed validation, as a one-committee aggregate (one bit for a single attestation). */
export interface ValidatedAttestation {
  aggregate: CommitteeAggregate;
  targetEpoch: number;
}

/** The checks of the submission path that might, instead, mean "already seen": the pool answers them. */
export interface SeenChecks {
  isAttesterSeen(targetEpoch: number, validatorIndex: number): boolean;
  isAggregatorSeen(targetEpoch: number, aggregatorIndex: number): boolean;
  /** has an aggregate-and-proof of this data and committee brought all of these bits already */
  hasSupersetAggregate(agg: CommitteeAggregate): boolean;
}

interface CommitteeContext {
  committee: Uint32Array;
  targetEpoch: number;
}

/**
 * Gossip checks shared by single attestations and aggregates (p2p-interface.md, phase0 with the
 * deneb EIP-7045 window): slot not in the future and not too old, target epoch = epoch of slot,
 * committee index in range. Returns the committee from the state of the attestation's target
 * (fork-choice.md on_attestation: the target checkpoint's state), which must be known: another
 * branch may have other committees than the head's.
 */
async function resolveCommittee(deps: PoolDeps, data: phase0.AttestationData, committeeIndex: number): Promise<CommitteeContext> {
  const {config} = deps;
  const currentSlot = deps.currentSlot();
  const slot = data.slot;
  if (slot > currentSlot) {
    throw new PoolError(`attestation slot ${slot} is in the future (current slot ${currentSlot})`);
  }
  if (config.getForkSeq(currentSlot) >= ForkSeq.deneb) {
    if (computeEpochAtSlot(slot) + 1 < computeEpochAtSlot(currentSlot)) {
      throw new PoolError(`attestation slot ${slot} is too old: not in the current or previous epoch (current slot ${currentSlot})`);
    }
  } else if (slot + config.ATTESTATION_PROPAGATION_SLOT_RANGE < currentSlot) {
    throw new PoolError(
      `attestation slot ${slot} is too old: more than ${config.ATTESTATION_PROPAGATION_SLOT_RANGE} slots before current slot ${currentSlot}`
    );
  }
  const targetEpoch = data.target.epoch;
  if (targetEpoch !== computeEpochAtSlot(slot)) {
    throw new PoolError(`attestation target epoch ${targetEpoch} is not the epoch of its slot ${slot}`);
  }
  const targetRoot = toRootHex(data.target.root);
  if (!deps.hasBlock(targetRoot)) throw new PoolError(`unknown block root ${targetRoot} (the target)`);
  let shuffling: EpochShuffling;
  try {
    shuffling = await deps.getTargetShuffling({epoch: targetEpoch, root: targetRoot});
  } catch (e) {
    throw new PoolError(`no committees known for slot ${slot}: ${(e as Error).message}`);
  }
  const committeeCount = shuffling.committeesPerSlot;
  if (committeeIndex >= committeeCount) throw new PoolError(`committee index ${committeeIndex} is out of range: slot ${slot} has ${committeeCount} committees`);
  return {committee: shuffling.committees[slot % SLOTS_PER_EPOCH][committeeIndex], targetEpoch};
}

function assertBlockKnown(deps: PoolDeps, data: phase0.AttestationData): void {
  const rootHex = toRootHex(data.beaconBlockRoot);
  if (!deps.hasBlock(rootHex)) throw new PoolError(`unknown block root ${rootHex}`);
}

function assertForkShape(deps: PoolDeps, slot: number, isElectraShape: boolean, what: string): void {
  const postElectra = isPostElectraSlot(deps.config, slot);
  if (postElectra && !isElectraShape) throw new PoolError(`${what} at slot ${slot} must use the electra format`);
  if (!postElectra && isElectraShape) throw new PoolError(`${what} at slot ${slot} must use the pre-electra format`);
}

function attestationSignatureSet(
  deps: PoolDeps,
  what: string,
  data: phase0.AttestationData,
  indices: number[],
  signature: Uint8Array
): NamedSignatureSet {
  const signingRoot = getAttestationDataSigningRoot(deps.config, data.slot, data);
  const set =
    indices.length === 1
      ? createIndexedSignatureSetFromComponents(indices[0], signingRoot, signature)
      : createAggregateSignatureSetFromComponents(indices, signingRoot, signature);
  return {what, set};
}

/**
 * Validates an unaggregated attestation as submitted to the pool (pre-electra Attestation with one
 * aggregation bit, or electra SingleAttestation). Returns null when its attester was already seen
 * for the target epoch (a duplicate: ignored, not an error). Throws PoolError otherwise.
 */
export async function validateSingleAttestation(
  deps: PoolDeps,
  att: phase0.Attestation | electra.SingleAttestation,
  seen: SeenChecks
): Promise<ValidatedAttestation | null> {
  const {data} = att;
  const isSingle = "attesterIndex" in att;
  assertForkShape(deps, data.slot, isSingle, "attestation");
  let committeeIndex: number;
  if (isSingle) {
    if (data.index !== 0) throw new PoolError(`attestation data.index must be 0 from electra, got ${data.index}`);
    committeeIndex = att.committeeIndex;
  } else {
    committeeIndex = data.index;
  }
  const {committee, targetEpoch} = await resolveCommittee(deps, data, committeeIndex);

  let position: number;
  let attesterIndex: number;
  if (isSingle) {
    attesterIndex = att.attesterIndex;
    position = committee.indexOf(attesterIndex);
    if (position < 0) throw new PoolError(`validator ${attesterIndex} not in committee ${committeeIndex} at slot ${data.slot}`);
  } else {
    const bits = att.aggregationBits;
    if (bits.bitLen !== committee.length) {
      throw new PoolError(`aggregation bits length ${bits.bitLen} does not match committee ${committeeIndex} size ${committee.length}`);
    }
    const setBits = bits.getTrueBitIndexes();
    if (setBits.length !== 1) throw new PoolError(`attestation must have exactly one aggregation bit set, has ${setBits.length}`);
    position = setBits[0];
    attesterIndex = committee[position];
  }

  if (seen.isAttesterSeen(targetEpoch, attesterIndex)) return null;
  assertBlockKnown(deps, data);
  await assertValidSignatures(deps.verifier, [attestationSignatureSet(deps, "signature", data, [attesterIndex], att.signature)], deps.pubkeyCache());
  // the same attester's other attestation may have been accepted while this one's signature was checked
  if (seen.isAttesterSeen(targetEpoch, attesterIndex)) return null;

  const aggregationBits = isSingle ? BitArray.fromSingleBit(committee.length, position) : att.aggregationBits;
  const aggregate: CommitteeAggregate = {
    data,
    dataRootHex: toRootHex(ssz.phase0.AttestationData.hashTreeRoot(data)),
    committeeIndex,
    aggregationBits,
    attesters: [attesterIndex],
    signature: att.signature,
  };
  return {aggregate, targetEpoch};
}

/**
 * Validates a SignedAggregateAndProof (gossip rules of beacon_aggregate_and_proof, electra
 * changes included). Returns null when it adds nothing (a received aggregate with a superset of
 * its bits, or the aggregator already sent one for the epoch). Throws PoolError otherwise.
 * The REJECT checks come before those IGNORE ones, so a caller learns when it is wrong.
 */
export async function validateAggregateAndProof(
  deps: PoolDeps,
  signed: SignedAggregateAndProof,
  seen: SeenChecks
): Promise<ValidatedAttestation | null> {
  const {config} = deps;
  const proof = signed.message;
  const {aggregate, aggregatorIndex, selectionProof} = proof;
  const {data} = aggregate;
  const isElectraShape = "committeeBits" in aggregate;
  assertForkShape(deps, data.slot, isElectraShape, "aggregate");
  let committeeIndex: number;
  if (isElectraShape) {
    const committeeIndices = (aggregate as electra.Attestation).committeeBits.getTrueBitIndexes();
    if (committeeIndices.length !== 1) {
      throw new PoolError(`aggregate must have exactly one committee bit set, has ${committeeIndices.length}`);
    }
    if (data.index !== 0) throw new PoolError(`aggregate data.index must be 0 from electra, got ${data.index}`);
    committeeIndex = committeeIndices[0];
  } else {
    committeeIndex = data.index;
  }
  const {committee, targetEpoch} = await resolveCommittee(deps, data, committeeIndex);
  const bits = aggregate.aggregationBits;
  if (bits.bitLen !== committee.length) {
    throw new PoolError(`aggregation bits length ${bits.bitLen} does not match committee ${committeeIndex} size ${committee.length}`);
  }
  const attesters = bits.intersectValues(Array.from(committee));
  if (attesters.length === 0) throw new PoolError("aggregate has no participants");

  const candidate: CommitteeAggregate = {
    data,
    dataRootHex: toRootHex(ssz.phase0.AttestationData.hashTreeRoot(data)),
    committeeIndex,
    aggregationBits: bits,
    attesters,
    signature: aggregate.signature,
  };
  if (!committee.includes(aggregatorIndex)) {
    throw new PoolError(`aggregator ${aggregatorIndex} not in committee ${committeeIndex} at slot ${data.slot}`);
  }
  if (!isAggregatorFromCommitteeLength(committee.length, selectionProof)) {
    throw new PoolError(`validator ${aggregatorIndex} is not an aggregator for slot ${data.slot} committee ${committeeIndex}`);
  }
  if (seen.hasSupersetAggregate(candidate) || seen.isAggregatorSeen(targetEpoch, aggregatorIndex)) return null;
  assertBlockKnown(deps, data);

  const selectionRoot = computeSigningRoot(ssz.Slot, data.slot, config.getDomain(data.slot, DOMAIN_SELECTION_PROOF, data.slot));
  const proofType = isElectraShape ? ssz.electra.AggregateAndProof : ssz.phase0.AggregateAndProof;
  const proofRoot = computeSigningRoot(proofType as typeof ssz.phase0.AggregateAndProof, proof as phase0.AggregateAndProof, config.getDomain(data.slot, DOMAIN_AGGREGATE_AND_PROOF, data.slot));
  await assertValidSignatures(
    deps.verifier,
    [
      {what: "selection proof", set: createIndexedSignatureSetFromComponents(aggregatorIndex, selectionRoot, selectionProof)},
      {what: "aggregator signature", set: createIndexedSignatureSetFromComponents(aggregatorIndex, proofRoot, signed.signature)},
      attestationSignatureSet(deps, "aggregate signature", data, attesters, aggregate.signature),
    ],
    deps.pubkeyCache()
  );
  // checked again: another aggregate may have been accepted while the signatures were checked
  if (seen.hasSupersetAggregate(candidate) || seen.isAggregatorSeen(targetEpoch, aggregatorIndex)) return null;
  return {aggregate: candidate, targetEpoch};
}
