import {type CachedBeaconStateAllForks, computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {Attestation, SignedAggregateAndProof, electra, phase0} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import {type CommitteeAggregate, aggregateKey, countBits, isSuperset, toNetworkAttestation} from "./aggregate.ts";
import {packAttestations} from "./attestationPacking.ts";
import {RunningAggregate} from "./runningAggregate.ts";
import {type SeenChecks, validateAggregateAndProof, validateSingleAttestation} from "./attestationValidation.ts";
import type {PoolDeps, PoolEmitter} from "./types.ts";
import {SubmissionsInFlight, deleteBelow, getOrCreate} from "./util.ts";
import {ValidatorBits} from "./validatorBits.ts";

const logger = getLogger("pools");

/** slot → (data root, committee) key → value */
type BySlot<T> = Map<number, Map<string, T>>;

/**
 * Attestations: single attestations from the attesters (aggregated per data and committee as they
 * arrive) and the aggregates of aggregate-and-proofs. Both feed the aggregate served to
 * aggregators, the pool endpoint, and block production.
 */
export class AttestationPool {
  private readonly deps: PoolDeps;
  private readonly emitter: PoolEmitter;
  /** the running aggregate of the single attestations received for each data and committee */
  private readonly singles: BySlot<RunningAggregate> = new Map();
  /** aggregates from aggregate-and-proofs; in one list none has a subset of another's bits */
  private readonly aggregates: BySlot<CommitteeAggregate[]> = new Map();
  /** by target epoch: attesters whose single attestation was accepted */
  private readonly seenAttesters = new ValidatorBits();
  /** by target epoch: aggregators whose aggregate was accepted */
  private readonly seenAggregators = new ValidatorBits();
  private readonly seen: SeenChecks;
  private readonly inFlight = new SubmissionsInFlight();

  constructor(deps: PoolDeps, emitter: PoolEmitter) {
    this.deps = deps;
    this.emitter = emitter;
    this.seen = {
      isAttesterSeen: (epoch, index) => this.seenAttesters.has(epoch, index),
      isAggregatorSeen: (epoch, index) => this.seenAggregators.has(epoch, index),
      hasSupersetAggregate: (agg) =>
        (this.aggregates.get(agg.data.slot)?.get(aggregateKey(agg.dataRootHex, agg.committeeIndex)) ?? []).some((known) =>
          isSuperset(known.aggregationBits, agg.aggregationBits)
        ),
    };
  }

  /**
   * Validates a single attestation and adds it to its group's aggregate; a repeated attester is
   * ignored. `aggregate` false: validated, seen and counted in fork choice, but not kept for
   * aggregation (gossip of a subnet where none of the node's validators aggregates at its slot).
   */
  async submitAttestation(att: phase0.Attestation | electra.SingleAttestation, {aggregate: keep = true}: {aggregate?: boolean} = {}): Promise<void> {
    const validated = await validateSingleAttestation(this.deps, att, this.seen);
    // The state lookup awaited: a concurrent submission of the same attester may have won.
    if (!validated || !this.seenAttesters.add(validated.targetEpoch, validated.aggregate.attesters[0])) {
      logger.debug({slot: att.data.slot}, "duplicate attestation ignored");
      return;
    }
    const {aggregate, targetEpoch} = validated;
    if (keep) {
      const bySlot = getOrCreate(this.singles, aggregate.data.slot, () => new Map<string, RunningAggregate>());
      const key = aggregateKey(aggregate.dataRootHex, aggregate.committeeIndex);
      const running = bySlot.get(key);
      if (running) running.add(aggregate);
      else bySlot.set(key, new RunningAggregate(aggregate));
    }
    this.deps.onAttestationVotes(aggregate.attesters, toRootHex(aggregate.data.beaconBlockRoot), targetEpoch, aggregate.data.slot);
    if ("attesterIndex" in att) this.emitter.emit("single_attestation", att);
    else this.emitter.emit("attestation", att);
  }

  /** Validates an aggregate-and-proof and keeps its aggregate for block packing. */
  submitAggregateAndProof(signed: SignedAggregateAndProof): Promise<void> {
    // an aggregate is named by its signature (over its data, by its participants)
    return this.inFlight.after(toHex(signed.message.aggregate.signature), () => this.addAggregateAndProof(signed));
  }

  private async addAggregateAndProof(signed: SignedAggregateAndProof): Promise<void> {
    const validated = await validateAggregateAndProof(this.deps, signed, this.seen);
    const aggregatorIndex = signed.message.aggregatorIndex;
    if (!validated || !this.seenAggregators.add(validated.targetEpoch, aggregatorIndex)) {
      logger.debug({slot: signed.message.aggregate.data.slot, aggregatorIndex}, "aggregate adds nothing new, ignored");
      return;
    }
    const {aggregate, targetEpoch} = validated;
    const bySlot = getOrCreate(this.aggregates, aggregate.data.slot, () => new Map<string, CommitteeAggregate[]>());
    const key = aggregateKey(aggregate.dataRootHex, aggregate.committeeIndex);
    const kept = (bySlot.get(key) ?? []).filter((known) => !isSuperset(aggregate.aggregationBits, known.aggregationBits));
    kept.push({...aggregate, aggregationBits: aggregate.aggregationBits.clone()});
    bySlot.set(key, kept);
    this.deps.onAttestationVotes(aggregate.attesters, toRootHex(aggregate.data.beaconBlockRoot), targetEpoch, aggregate.data.slot);
    this.emitter.emit("attestation", signed.message.aggregate);
  }

  /**
   * The aggregate with the most attesters for this data (and committee, from electra; without
   * one, the best of any committee). Pre-electra phase0.Attestation, electra.Attestation with the
   * committee's bit from electra.
   */
  getAggregate(slot: number, attestationDataRoot: Uint8Array, committeeIndex?: number): Attestation | null {
    const rootHex = toRootHex(attestationDataRoot);
    let best: CommitteeAggregate | null = null;
    const matches = (group: {dataRootHex: string; committeeIndex: number}) => group.dataRootHex === rootHex && (committeeIndex === undefined || group.committeeIndex === committeeIndex);
    for (const agg of this.candidatesAtSlot(slot, matches)) {
      if (!best || countBits(agg.aggregationBits) > countBits(best.aggregationBits)) best = agg;
    }
    return best ? toNetworkAttestation(this.deps.config, best) : null;
  }

  /** Everything the pool holds (running aggregates of single attestations, and received aggregates). */
  getAll(filter: {slot?: number; committeeIndex?: number} = {}): Attestation[] {
    const slots = filter.slot !== undefined ? [filter.slot] : this.slots();
    return slots
      .flatMap((slot) => this.candidatesAtSlot(slot))
      .filter((agg) => filter.committeeIndex === undefined || agg.committeeIndex === filter.committeeIndex)
      .map((agg) => toNetworkAttestation(this.deps.config, agg));
  }

  /** Aggregates for a block on `state` (the pre-state advanced to the block slot); see attestationPacking.ts. */
  getAttestationsForBlock(state: CachedBeaconStateAllForks): Attestation[] {
    const candidates = this.slots().flatMap((slot) => this.candidatesAtSlot(slot));
    return packAttestations(this.deps.config, state, candidates);
  }

  /** Drops what can no longer be submitted, served or included at `currentSlot`. */
  prune(currentSlot: number): void {
    const previousEpochStart = computeStartSlotAtEpoch(Math.max(0, computeEpochAtSlot(currentSlot) - 1));
    const minSlot = Math.min(currentSlot - this.deps.config.ATTESTATION_PROPAGATION_SLOT_RANGE, previousEpochStart);
    const minEpoch = computeEpochAtSlot(Math.max(0, minSlot));
    deleteBelow(this.singles, minSlot);
    deleteBelow(this.aggregates, minSlot);
    this.seenAttesters.deleteBelow(minEpoch);
    this.seenAggregators.deleteBelow(minEpoch);
  }

  private slots(): number[] {
    return [...new Set([...this.singles.keys(), ...this.aggregates.keys()])].sort((a, b) => a - b);
  }

  /** The aggregates of a slot (of the groups `matches` picks: the running ones are read only then). */
  private candidatesAtSlot(slot: number, matches: (group: {dataRootHex: string; committeeIndex: number}) => boolean = () => true): CommitteeAggregate[] {
    const singles = [...(this.singles.get(slot)?.values() ?? [])].filter(matches).map((running) => running.aggregate());
    return [...singles, ...[...(this.aggregates.get(slot)?.values() ?? [])].flat().filter(matches)];
  }
}
