import {DOMAIN_SYNC_COMMITTEE, ForkSeq} from "@lodestar/params";
import {type CachedBeaconStateAllForks, computeEpochAtSlot, computeSigningRoot, createIndexedSignatureSetFromComponents} from "@lodestar/state-transition";
import {ssz, type altair} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {syncSubnetOfIndex} from "../../subnets.ts";
import {type PoolAdmissions, poolErrorOutcome} from "./outcomes.ts";
import {SeenBySlot} from "./seenCache.ts";
import {earliestCurrentSlot, latestCurrentSlot, waitForSlot} from "./timing.ts";
import {type GossipValidationResult, type GossipValidatorDeps, type GossipValidatorFn, accept, ignore, reject} from "./types.ts";

/**
 * sync_committee_{subnet_id} and sync_committee_contribution_and_proof (altair
 * p2p-interface.md). The sync committee pools check committee membership, the aggregator's
 * selection, the signatures and the contribution first-seen rules; here: the current-slot rule
 * with the clock disparity allowance, the subnet, and the per-subnet first-seen rule of messages.
 */

/** Slots of first-seen messages kept (the current slot and the one before). */
const SEEN_SLOTS = 3;

function currentSlotOutcome(deps: GossipValidatorDeps, slot: number, what: string): GossipValidationResult | null {
  if (slot > latestCurrentSlot(deps) || slot < earliestCurrentSlot(deps)) {
    return ignore(`${what} slot ${slot} is not the current slot ${deps.clock.currentSlot()}`);
  }
  if (deps.config.getForkSeq(slot) < ForkSeq.altair) return reject(`${what} slot ${slot} is before altair`);
  return null;
}

export function createSyncCommitteeMessageValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  const {config, chain} = deps;
  const seen = new SeenBySlot(SEEN_SLOTS);
  /** slot → validator → (root, signature) of the message accepted first, on any subnet */
  const accepted = new Map<number, Map<number, string>>();

  return async (topic, message) => {
    const msg = message as altair.SyncCommitteeMessage;
    const {slot, validatorIndex} = msg;
    const notCurrent = currentSlotOutcome(deps, slot, "sync committee message");
    if (notCurrent) return notCurrent;
    const minSlot = earliestCurrentSlot(deps) - 1;
    seen.prune(minSlot);
    for (const s of accepted.keys()) if (s < minSlot) accepted.delete(s);

    let positions: number[];
    let state: CachedBeaconStateAllForks;
    try {
      state = await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot));
      positions = state.epochCtx.getIndexedSyncCommittee(slot).validatorIndexMap.get(validatorIndex) ?? [];
    } catch (e) {
      return ignore(`no sync committee known for slot ${slot}: ${(e as Error).message}`);
    }
    if (!positions.some((p) => syncSubnetOfIndex(p) === topic.subnet)) {
      return reject(`validator ${validatorIndex} is not in sync subcommittee ${topic.subnet} at slot ${slot}`);
    }
    const seenKey = `${topic.subnet}:${validatorIndex}`;
    if (seen.has(slot, seenKey)) return ignore(`a message of validator ${validatorIndex} on subnet ${topic.subnet} at slot ${slot} was seen already`);

    // The pool keeps one message per validator and slot and skips the signature of later ones: a
    // different message of a validator already accepted on another subnet is checked here.
    const messageKey = `${toHex(msg.beaconBlockRoot)}:${toHex(msg.signature)}`;
    const prior = accepted.get(slot)?.get(validatorIndex);
    if (prior !== undefined && prior !== messageKey) {
      const domain = config.getDomain(slot, DOMAIN_SYNC_COMMITTEE, slot);
      const set = createIndexedSignatureSetFromComponents(validatorIndex, computeSigningRoot(ssz.Root, msg.beaconBlockRoot, domain), msg.signature);
      if (!(await chain.verifier.verify([set], state.epochCtx.pubkeyCache))) return reject("invalid signature");
    }

    await waitForSlot(deps, slot);
    try {
      await deps.pools.syncCommittee.submitSyncCommitteeMessage(msg);
    } catch (e) {
      return poolErrorOutcome(e);
    }
    if (!seen.add(slot, seenKey)) return ignore(`a message of validator ${validatorIndex} on subnet ${topic.subnet} at slot ${slot} was seen already`);
    let bySlot = accepted.get(slot);
    if (!bySlot) accepted.set(slot, (bySlot = new Map()));
    if (!bySlot.has(validatorIndex)) bySlot.set(validatorIndex, messageKey);
    return accept("sync committee message added to the pool");
  };
}

export function createContributionValidator(deps: GossipValidatorDeps, admissions: PoolAdmissions): GossipValidatorFn {
  return async (_topic, message) => {
    const signed = message as altair.SignedContributionAndProof;
    const {contribution, aggregatorIndex} = signed.message;
    const notCurrent = currentSlotOutcome(deps, contribution.slot, "contribution");
    if (notCurrent) return notCurrent;
    await waitForSlot(deps, contribution.slot);
    try {
      const added = await admissions.submit(signed, deps.pools.syncCommittee.submitContributionAndProof(signed));
      return added
        ? accept("contribution added to the pool")
        : ignore(`aggregator ${aggregatorIndex} of subcommittee ${contribution.subcommitteeIndex} was seen already, or a known contribution covers these bits`);
    } catch (e) {
      return poolErrorOutcome(e);
    }
  };
}
