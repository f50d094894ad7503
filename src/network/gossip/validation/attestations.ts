import {ForkSeq} from "@lodestar/params";
import {computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {SignedAggregateAndProof, electra, phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {computeSubnetForAttestation} from "../../subnets.ts";
import {type PoolAdmissions, poolErrorOutcome} from "./outcomes.ts";
import {earliestCurrentSlot, latestCurrentSlot, waitForSlot} from "./timing.ts";
import {type GossipValidationResult, type GossipValidatorDeps, type GossipValidatorFn, accept, ignore, reject} from "./types.ts";

/**
 * beacon_attestation_{subnet_id} and beacon_aggregate_and_proof (phase0, deneb EIP-7045 and
 * electra p2p-interface.md). The attestation pool checks committees, aggregation bits, the
 * aggregator's selection, every signature and the first-seen rules (its caches are shared with
 * the API); here: the clock disparity allowance, the subnet, and the voted block's ancestry.
 */

/** The slot range rule (IGNORE), or null when the slot is in range. */
function slotRangeOutcome(deps: GossipValidatorDeps, slot: number): GossipValidationResult | null {
  const latest = latestCurrentSlot(deps);
  if (slot > latest) return ignore(`attestation slot ${slot} is in the future (current slot ${deps.clock.currentSlot()})`);
  const earliest = earliestCurrentSlot(deps);
  if (deps.config.getForkSeq(latest) >= ForkSeq.deneb) {
    if (computeEpochAtSlot(slot) + 1 < computeEpochAtSlot(earliest)) return ignore(`attestation slot ${slot} is older than the previous epoch`);
  } else if (slot + deps.config.ATTESTATION_PROPAGATION_SLOT_RANGE < earliest) {
    return ignore(`attestation slot ${slot} is older than ATTESTATION_PROPAGATION_SLOT_RANGE slots`);
  }
  return null;
}

/**
 * The rules about the voted block, when it is known (an unknown one is the pool's IGNORE, after
 * its REJECT rules): its checkpoint block at the target epoch is the target root (REJECT), and it
 * descends from the finalized checkpoint (IGNORE).
 */
function voteOutcome(deps: GossipValidatorDeps, data: phase0.AttestationData): GossipValidationResult | null {
  const forkChoice = deps.chain.forkChoice;
  const rootHex = toRootHex(data.beaconBlockRoot);
  if (!forkChoice.hasBlock(rootHex)) return null;
  const targetBlock = forkChoice.getAncestor(rootHex, computeStartSlotAtEpoch(data.target.epoch));
  if (targetBlock === null) return ignore(`the checkpoint block of ${rootHex} at epoch ${data.target.epoch} is not known`);
  if (targetBlock !== toRootHex(data.target.root)) {
    return reject(`target root ${toRootHex(data.target.root)} is not the checkpoint block ${targetBlock} of the voted block`);
  }
  const finalized = forkChoice.getFinalizedCheckpoint();
  if (forkChoice.getAncestor(rootHex, computeStartSlotAtEpoch(finalized.epoch)) !== finalized.root) {
    return ignore(`voted block ${rootHex} does not descend from the finalized checkpoint`);
  }
  return null;
}

export function createAttestationValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return async (topic, message) => {
    const att = message as phase0.Attestation | electra.SingleAttestation;
    const {data} = att;
    const slot = data.slot;
    const outOfRange = slotRangeOutcome(deps, slot);
    if (outOfRange) return outOfRange;
    const targetEpoch = data.target.epoch;
    if (targetEpoch !== computeEpochAtSlot(slot)) return reject(`attestation target epoch ${targetEpoch} is not the epoch of its slot ${slot}`);

    const vote = voteOutcome(deps, data);
    if (vote) return vote;
    const committeeIndex = "attesterIndex" in att ? att.committeeIndex : data.index;
    // the committees of the target's checkpoint state: without the target, they are not known. A
    // known voted block has the target as ancestor (voteOutcome), so the voted block is what to fetch
    const targetRoot = toRootHex(data.target.root);
    if (!deps.chain.forkChoice.hasBlock(targetRoot)) {
      return ignore(`unknown target root ${targetRoot} of voted block ${toRootHex(data.beaconBlockRoot)}`, {unknownBlockRoot: toRootHex(data.beaconBlockRoot)});
    }
    let committeesPerSlot: number;
    try {
      committeesPerSlot = (await deps.chain.targetShufflings.get({epoch: targetEpoch, root: targetRoot})).committeesPerSlot;
    } catch (e) {
      return ignore(`no committees known for epoch ${targetEpoch}: ${(e as Error).message}`);
    }
    if (committeeIndex >= committeesPerSlot) {
      return reject(`committee index ${committeeIndex} is out of range: slot ${slot} has ${committeesPerSlot} committees`);
    }
    const subnet = computeSubnetForAttestation(committeesPerSlot, slot, committeeIndex);
    if (subnet !== topic.subnet) return reject(`attestation of committee ${committeeIndex} at slot ${slot} belongs to subnet ${subnet}, not ${topic.subnet}`);
    await waitForSlot(deps, slot);
    try {
      // as Lodestar: a subnet no validator of ours aggregates on is validated and forwarded, its
      // votes counted, but its attestations are not summed into aggregates nobody will ask for
      // (a signature decompressed and added for each: the largest part of the event loop's pool
      // work under all-subnet gossip); blocks take the aggregates of aggregate-and-proofs
      const aggregate = deps.aggregatesOn?.(subnet, slot) ?? true;
      const added = await admissions.submit(att, deps.pools.attestations.submitAttestation(att, {aggregate}));
      return added ? accept("attestation added to the pool") : ignore(`an attestation of this attester for target epoch ${targetEpoch} was seen already`);
    } catch (e) {
      return poolErrorOutcome(e);
    }
  };
}

export function createAggregateValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return async (_topic, message) => {
    const signed = message as SignedAggregateAndProof;
    const {aggregate} = signed.message;
    const slot = aggregate.data.slot;
    const outOfRange = slotRangeOutcome(deps, slot);
    if (outOfRange) return outOfRange;
    const vote = voteOutcome(deps, aggregate.data);
    if (vote) return vote;
    await waitForSlot(deps, slot);
    try {
      const added = await admissions.submit(aggregate, deps.pools.attestations.submitAggregateAndProof(signed));
      return added
        ? accept("aggregate added to the pool")
        : ignore(`aggregator ${signed.message.aggregatorIndex} was seen already, or a known aggregate covers these attesters`);
    } catch (e) {
      return poolErrorOutcome(e);
    }
  };
}
