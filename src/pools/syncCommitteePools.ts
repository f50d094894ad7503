import {BitArray} from "@chainsafe/ssz";
import type {BeaconConfig} from "@lodestar/config";
import {
  DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
  ForkSeq,
  SYNC_COMMITTEE_SIZE,
  SYNC_COMMITTEE_SUBNET_COUNT,
  SYNC_COMMITTEE_SUBNET_SIZE,
} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type SyncCommitteeCache,
  computeEpochAtSlot,
  computeSigningRoot,
  createAggregateSignatureSetFromComponents,
  createIndexedSignatureSetFromComponents,
  isSyncCommitteeAggregator,
} from "@lodestar/state-transition";
import {ssz, type altair} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import {countBits, isDisjoint, isSuperset} from "./aggregate.ts";
import {G2_POINT_AT_INFINITY, aggregateSignatureBytes, assertValidSignatures} from "./signatures.ts";
import {PoolError, type PoolDeps, type PoolEmitter} from "./types.ts";
import {SubmissionsInFlight, deleteBelow, getOrCreate, markSeen} from "./util.ts";

const logger = getLogger("pools");

/** The signatures of one subcommittee for one (slot, block root): bits by position in the subcommittee. */
interface SubnetAggregate {
  aggregationBits: BitArray;
  signature: Uint8Array;
}

/** slot → `${blockRootHex}:${subcommitteeIndex}` → value */
type BySlot<T> = Map<number, Map<string, T>>;

function subnetKey(rootHex: string, subcommitteeIndex: number): string {
  return `${rootHex}:${subcommitteeIndex}`;
}

/**
 * Sync committee messages (aggregated per slot, block root and subcommittee as they arrive) and
 * contributions from contribution-and-proofs; together they make the SyncAggregate of a block.
 */
export class SyncCommitteePools {
  private readonly deps: PoolDeps;
  private readonly emitter: PoolEmitter;
  private readonly messages: BySlot<SubnetAggregate> = new Map();
  /** contributions received; in one list none has a subset of another's bits */
  private readonly contributions: BySlot<SubnetAggregate[]> = new Map();
  /** slot → validators whose message was accepted */
  private readonly seenMessages = new Map<number, Set<number>>();
  /** slot → `${aggregatorIndex}:${subcommitteeIndex}` of accepted contributions */
  private readonly seenAggregators = new Map<number, Set<string>>();
  private readonly inFlight = new SubmissionsInFlight();

  constructor(deps: PoolDeps, emitter: PoolEmitter) {
    this.deps = deps;
    this.emitter = emitter;
  }

  /** Validates a sync committee message and adds it to each subcommittee the validator sits in. */
  async submitSyncCommitteeMessage(msg: altair.SyncCommitteeMessage): Promise<void> {
    const {slot, validatorIndex, beaconBlockRoot, signature} = msg;
    this.assertSlot(slot, "sync committee message");
    // the signature is checked even for a validator already seen this slot: a forged second
    // message must be refused (and reported as such on gossip), not silently dropped
    const {state, committee} = await this.committeeAt(slot);
    const positions = committee.validatorIndexMap.get(validatorIndex);
    if (!positions || positions.length === 0) throw new PoolError(`validator ${validatorIndex} is not in the sync committee for slot ${slot}`);
    const signingRoot = syncMessageSigningRoot(this.deps.config, slot, beaconBlockRoot);
    await assertValidSignatures(this.deps.verifier, [{what: "signature", set: createIndexedSignatureSetFromComponents(validatorIndex, signingRoot, signature)}], state.epochCtx.pubkeyCache);
    if (!markSeen(this.seenMessages, slot, validatorIndex)) return;
    const bySlot = getOrCreate(this.messages, slot, () => new Map<string, SubnetAggregate>());
    const rootHex = toRootHex(beaconBlockRoot);
    // A validator sitting k times in a subcommittee contributes k bits, and its signature k times.
    for (const position of positions) {
      const key = subnetKey(rootHex, Math.floor(position / SYNC_COMMITTEE_SUBNET_SIZE));
      const bit = position % SYNC_COMMITTEE_SUBNET_SIZE;
      const running = bySlot.get(key);
      const aggregationBits = running ? running.aggregationBits.clone() : BitArray.fromBitLen(SYNC_COMMITTEE_SUBNET_SIZE);
      aggregationBits.set(bit, true);
      bySlot.set(key, {aggregationBits, signature: running ? aggregateSignatureBytes([running.signature, signature]) : signature});
    }
  }

  /** The aggregate of the messages of one subcommittee, for its aggregators; null when there are none. */
  produceContribution(slot: number, subcommitteeIndex: number, beaconBlockRoot: Uint8Array): altair.SyncCommitteeContribution | null {
    const agg = this.messages.get(slot)?.get(subnetKey(toRootHex(beaconBlockRoot), subcommitteeIndex));
    if (!agg) return null;
    return {slot, beaconBlockRoot, subcommitteeIndex, aggregationBits: agg.aggregationBits.clone(), signature: agg.signature};
  }

  /**
   * Validates a SignedContributionAndProof (gossip rules of sync_committee_contribution_and_proof;
   * its three signatures in one batch) and keeps the contribution for block production.
   */
  submitContributionAndProof(signed: altair.SignedContributionAndProof): Promise<void> {
    // a contribution is named by its signature (over its block root, by its participants)
    return this.inFlight.after(toHex(signed.message.contribution.signature), () => this.addContributionAndProof(signed));
  }

  private async addContributionAndProof(signed: altair.SignedContributionAndProof): Promise<void> {
    const {config} = this.deps;
    const {aggregatorIndex, contribution, selectionProof} = signed.message;
    const {slot, subcommitteeIndex, beaconBlockRoot, aggregationBits} = contribution;
    this.assertSlot(slot, "contribution");
    if (subcommitteeIndex >= SYNC_COMMITTEE_SUBNET_COUNT) {
      throw new PoolError(`subcommittee index ${subcommitteeIndex} is out of range (${SYNC_COMMITTEE_SUBNET_COUNT} subcommittees)`);
    }
    if (countBits(aggregationBits) === 0) throw new PoolError("contribution has no participants");
    if (!isSyncCommitteeAggregator(selectionProof)) {
      throw new PoolError(`validator ${aggregatorIndex} is not a sync committee aggregator: its selection proof does not select it`);
    }
    const {state, committee} = await this.committeeAt(slot);
    const positions = committee.validatorIndexMap.get(aggregatorIndex) ?? [];
    if (!positions.some((p) => Math.floor(p / SYNC_COMMITTEE_SUBNET_SIZE) === subcommitteeIndex)) {
      throw new PoolError(`aggregator ${aggregatorIndex} is not in sync subcommittee ${subcommitteeIndex} for slot ${slot}`);
    }
    const key = subnetKey(toRootHex(beaconBlockRoot), subcommitteeIndex);
    if (this.hasSuperset(slot, key, aggregationBits) || this.seenAggregators.get(slot)?.has(`${aggregatorIndex}:${subcommitteeIndex}`)) return;

    const subcommitteeStart = subcommitteeIndex * SYNC_COMMITTEE_SUBNET_SIZE;
    const participants = aggregationBits.getTrueBitIndexes().map((bit) => committee.validatorIndices[subcommitteeStart + bit]);
    const selectionData: altair.SyncAggregatorSelectionData = {slot, subcommitteeIndex};
    const selectionRoot = computeSigningRoot(ssz.altair.SyncAggregatorSelectionData, selectionData, config.getDomain(slot, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, slot));
    const proofRoot = computeSigningRoot(ssz.altair.ContributionAndProof, signed.message, config.getDomain(slot, DOMAIN_CONTRIBUTION_AND_PROOF, slot));
    await assertValidSignatures(
      this.deps.verifier,
      [
        {what: "selection proof", set: createIndexedSignatureSetFromComponents(aggregatorIndex, selectionRoot, selectionProof)},
        {what: "aggregator signature", set: createIndexedSignatureSetFromComponents(aggregatorIndex, proofRoot, signed.signature)},
        {
          what: "contribution signature",
          set: createAggregateSignatureSetFromComponents(participants, syncMessageSigningRoot(config, slot, beaconBlockRoot), contribution.signature),
        },
      ],
      state.epochCtx.pubkeyCache
    );
    if (!markSeen(this.seenAggregators, slot, `${aggregatorIndex}:${subcommitteeIndex}`)) return;
    const bySlot = getOrCreate(this.contributions, slot, () => new Map<string, SubnetAggregate[]>());
    const kept = (bySlot.get(key) ?? []).filter((known) => !isSuperset(aggregationBits, known.aggregationBits));
    kept.push({aggregationBits: aggregationBits.clone(), signature: contribution.signature});
    bySlot.set(key, kept);
    logger.debug({slot, subcommitteeIndex, aggregatorIndex, participants: participants.length}, "sync contribution added to the pool");
    this.emitter.emit("contribution_and_proof", signed);
  }

  /**
   * The SyncAggregate of a block at `slot`: the signatures of slot-1 for `parentBlockRoot`, per
   * subcommittee the largest aggregate, merged with any disjoint ones. Empty (no bits, the G2 point
   * at infinity) when there are none.
   */
  getSyncAggregate(slot: number, parentBlockRoot: Uint8Array): altair.SyncAggregate {
    const syncCommitteeBits = BitArray.fromBitLen(SYNC_COMMITTEE_SIZE);
    const signatures: Uint8Array[] = [];
    const rootHex = toRootHex(parentBlockRoot);
    for (let subnet = 0; subnet < SYNC_COMMITTEE_SUBNET_COUNT; subnet++) {
      const key = subnetKey(rootHex, subnet);
      const message = this.messages.get(slot - 1)?.get(key);
      const candidates = [...(message ? [message] : []), ...(this.contributions.get(slot - 1)?.get(key) ?? [])].sort(
        (a, b) => countBits(b.aggregationBits) - countBits(a.aggregationBits)
      );
      const taken = BitArray.fromBitLen(SYNC_COMMITTEE_SUBNET_SIZE);
      for (const candidate of candidates) {
        if (!isDisjoint(taken, candidate.aggregationBits)) continue;
        taken.mergeOrWith(candidate.aggregationBits);
        signatures.push(candidate.signature);
      }
      for (const bit of taken.getTrueBitIndexes()) syncCommitteeBits.set(subnet * SYNC_COMMITTEE_SUBNET_SIZE + bit, true);
    }
    const syncCommitteeSignature = signatures.length > 0 ? aggregateSignatureBytes(signatures) : G2_POINT_AT_INFINITY.slice();
    return {syncCommitteeBits, syncCommitteeSignature};
  }

  /** Keeps the messages and contributions of `slot` and `slot - 1` (the block of `slot` needs the latter). */
  prune(slot: number): void {
    for (const map of [this.messages, this.contributions, this.seenMessages, this.seenAggregators]) deleteBelow(map, slot - 1);
  }

  /**
   * Sync committee gossip accepts the current slot only (MAXIMUM_GOSSIP_CLOCK_DISPARITY); with a
   * slot clock, that is taken as the current slot or the one just ended.
   */
  private assertSlot(slot: number, what: string): void {
    if (this.deps.config.getForkSeq(slot) < ForkSeq.altair) throw new PoolError(`${what} at slot ${slot} is before altair`);
    const currentSlot = this.deps.currentSlot();
    if (slot > currentSlot) throw new PoolError(`${what} slot ${slot} is in the future (current slot ${currentSlot})`);
    if (slot < currentSlot - 1) throw new PoolError(`${what} slot ${slot} is too old (current slot ${currentSlot})`);
  }

  /** The sync committee signing at `slot` (that of the period of slot + 1). */
  private async committeeAt(slot: number): Promise<{state: CachedBeaconStateAllForks; committee: SyncCommitteeCache}> {
    const state = await this.deps.getStateForEpoch(computeEpochAtSlot(slot));
    try {
      return {state, committee: state.epochCtx.getIndexedSyncCommittee(slot)};
    } catch (e) {
      throw new PoolError(`no sync committee known for slot ${slot}: ${(e as Error).message}`);
    }
  }

  /** Has a received contribution of this slot, root and subcommittee brought all of these bits already. */
  private hasSuperset(slot: number, key: string, bits: BitArray): boolean {
    return (this.contributions.get(slot)?.get(key) ?? []).some((k) => isSuperset(k.aggregationBits, bits));
  }
}

function syncMessageSigningRoot(config: BeaconConfig, slot: number, blockRoot: Uint8Array): Uint8Array {
  return computeSigningRoot(ssz.Root, blockRoot, config.getDomain(slot, DOMAIN_SYNC_COMMITTEE, slot));
}
