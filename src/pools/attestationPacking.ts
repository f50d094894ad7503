import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq, MAX_ATTESTATIONS, MAX_ATTESTATIONS_ELECTRA, MIN_ATTESTATION_INCLUSION_DELAY, SLOTS_PER_EPOCH} from "@lodestar/params";
import {
  BeaconStateView,
  type CachedBeaconStateAllForks,
  type CachedBeaconStateAltair,
  type CachedBeaconStatePhase0,
  RootCache,
  computeEpochAtSlot,
  getAttestationParticipationStatus,
} from "@lodestar/state-transition";
import {ssz, type Attestation, type phase0} from "@lodestar/types";
import {type CommitteeAggregate, aggregateKey, isDisjoint, isPostElectraSlot, mergeDisjoint, toNetworkAttestation, toOnChainAggregate} from "./aggregate.ts";

/** A committee aggregate with the attesters it would newly credit on the block's state. */
interface Scored {
  agg: CommitteeAggregate;
  newAttesters: number[];
}

/** One attestation the block may carry, with the attesters it newly credits (`epoch:index` keys). */
interface Item {
  build: () => Attestation;
  newAttesters: string[];
}

/**
 * Picks the attestations for a block on `state` (the block's pre-state advanced to the block slot):
 * - only aggregates the state accepts: MIN_ATTESTATION_INCLUSION_DELAY, target in the previous or
 *   current epoch, before deneb at most SLOTS_PER_EPOCH slots old (EIP-7045 lifts that), source equal
 *   to the state's justified checkpoint for the target epoch, committees as the state computes them,
 *   and the attestation format of the block's fork;
 * - only aggregates crediting someone not yet credited on chain (altair+: a participation flag the
 *   attestation earns that the validator lacks; phase0: not in the epoch's pending attestations);
 * - disjoint aggregates of one committee merged; from electra the committees of one data combined
 *   into on-chain aggregates (compute_on_chain_aggregate);
 * - greedy by the count of attesters not yet covered, up to MAX_ATTESTATIONS (MAX_ATTESTATIONS_ELECTRA).
 */
export function packAttestations(config: BeaconConfig, state: CachedBeaconStateAllForks, candidates: CommitteeAggregate[]): Attestation[] {
  const fork = config.getForkSeq(state.slot);
  const postElectra = fork >= ForkSeq.electra;
  const isNewFor = newAttesterCheck(fork, state);
  const justified = {current: state.currentJustifiedCheckpoint.toValue(), previous: state.previousJustifiedCheckpoint.toValue()};
  const scored: Scored[] = [];
  for (const agg of candidates) {
    if (isPostElectraSlot(config, agg.data.slot) !== postElectra || !isIncludable(fork, state, justified, agg)) continue;
    const isNew = isNewFor(agg.data);
    const newAttesters = isNew ? agg.attesters.filter(isNew) : [];
    if (newAttesters.length > 0) scored.push({agg, newAttesters});
  }
  const perCommittee = groupBy(scored, (s) => aggregateKey(s.agg.dataRootHex, s.agg.committeeIndex));
  const merged = [...perCommittee.values()].map(mergeDisjointGreedily);
  const items = postElectra ? onChainItems(merged) : merged.flat().map((s) => item([s], () => toNetworkAttestation(config, s.agg)));
  return pickGreedily(items, postElectra ? MAX_ATTESTATIONS_ELECTRA : MAX_ATTESTATIONS);
}

/** The inclusion rules of process_attestation that do not depend on the aggregation bits. */
function isIncludable(
  fork: ForkSeq,
  state: CachedBeaconStateAllForks,
  justified: {current: phase0.Checkpoint; previous: phase0.Checkpoint},
  agg: CommitteeAggregate
): boolean {
  const {data} = agg;
  const currentEpoch = state.epochCtx.epoch;
  const targetEpoch = data.target.epoch;
  if (targetEpoch !== currentEpoch && targetEpoch !== currentEpoch - 1) return false;
  if (data.slot + MIN_ATTESTATION_INCLUSION_DELAY > state.slot) return false;
  if (fork < ForkSeq.deneb && state.slot > data.slot + SLOTS_PER_EPOCH) return false;
  if (!ssz.phase0.Checkpoint.equals(data.source, targetEpoch === currentEpoch ? justified.current : justified.previous)) return false;
  // The committee the state computes must be the one the aggregate was validated against.
  let committee: Uint32Array;
  try {
    committee = state.epochCtx.getBeaconCommittee(data.slot, agg.committeeIndex);
  } catch {
    return false;
  }
  if (committee.length !== agg.aggregationBits.bitLen) return false;
  const attesters = agg.aggregationBits.intersectValues(Array.from(committee));
  return attesters.length === agg.attesters.length && attesters.every((v, i) => v === agg.attesters[i]);
}

/**
 * For an attestation data, the test "would this attester be newly credited" on `state`,
 * or null when the attestation would earn nothing at all.
 */
function newAttesterCheck(fork: ForkSeq, state: CachedBeaconStateAllForks): (data: phase0.AttestationData) => ((index: number) => boolean) | null {
  const currentEpoch = state.epochCtx.epoch;
  if (fork === ForkSeq.phase0) {
    const included = new Map<number, Set<number>>();
    return (data) => {
      const epoch = data.target.epoch;
      let set = included.get(epoch);
      if (!set) {
        set = includedPhase0Attesters(state as CachedBeaconStatePhase0, epoch === currentEpoch);
        included.set(epoch, set);
      }
      const inState = set;
      return (index) => !inState.has(index);
    };
  }
  const altairState = state as CachedBeaconStateAltair;
  const rootCache = new RootCache(new BeaconStateView(state));
  const participation = new Map<number, number[]>();
  return (data) => {
    let flags: number;
    try {
      flags = getAttestationParticipationStatus(fork, data, state.slot - data.slot, currentEpoch, rootCache, null, null).flags;
    } catch {
      return null;
    }
    if (flags === 0) return null;
    const epoch = data.target.epoch;
    let epochParticipation = participation.get(epoch);
    if (!epochParticipation) {
      epochParticipation = (epoch === currentEpoch ? altairState.currentEpochParticipation : altairState.previousEpochParticipation).getAll();
      participation.set(epoch, epochParticipation);
    }
    const known = epochParticipation;
    return (index) => ((known[index] ?? 0) & flags) !== flags;
  };
}

/** The validators credited by the pending attestations of the current or previous epoch (phase0). */
function includedPhase0Attesters(state: CachedBeaconStatePhase0, currentEpoch: boolean): Set<number> {
  const pending = (currentEpoch ? state.currentEpochAttestations : state.previousEpochAttestations).getAllReadonly();
  const set = new Set<number>();
  for (const {data, aggregationBits} of pending) {
    const committee = state.epochCtx.getBeaconCommittee(data.slot, data.index);
    for (const index of aggregationBits.intersectValues(Array.from(committee))) set.add(index);
  }
  return set;
}

/** Merges aggregates of one committee whose bits are disjoint, best first. */
function mergeDisjointGreedily(group: Scored[]): Scored[] {
  const out: Scored[] = [];
  for (const s of [...group].sort((a, b) => b.newAttesters.length - a.newAttesters.length)) {
    const i = out.findIndex((o) => isDisjoint(o.agg.aggregationBits, s.agg.aggregationBits));
    if (i < 0) out.push(s);
    else out[i] = {agg: mergeDisjoint(out[i].agg, s.agg), newAttesters: [...out[i].newAttesters, ...s.newAttesters]};
  }
  return out.sort((a, b) => b.newAttesters.length - a.newAttesters.length);
}

/**
 * From electra: the committee aggregates of one data combined, round by round (the best of each
 * committee, then the second best of each, ...).
 */
function onChainItems(mergedPerCommittee: Scored[][]): Item[] {
  const byData = groupBy(mergedPerCommittee, (group) => group[0].agg.dataRootHex);
  const items: Item[] = [];
  for (const committees of byData.values()) {
    const rounds = Math.max(...committees.map((c) => c.length));
    for (let r = 0; r < rounds; r++) {
      const parts = committees.flatMap((c) => (c[r] ? [c[r]] : []));
      items.push(item(parts, () => toOnChainAggregate(parts.map((p) => p.agg))));
    }
  }
  return items;
}

function item(parts: Scored[], build: () => Attestation): Item {
  return {build, newAttesters: parts.flatMap((p) => p.newAttesters.map((index) => `${p.agg.data.target.epoch}:${index}`))};
}

/**
 * Repeatedly takes the item crediting the most attesters not covered yet. An item's fresh count never
 * exceeds its initial one, so with items sorted by initial count the scan stops early (lazy greedy).
 */
function pickGreedily(items: Item[], max: number): Attestation[] {
  const covered = new Set<string>();
  const picked: Attestation[] = [];
  const remaining = [...items].sort((a, b) => b.newAttesters.length - a.newAttesters.length);
  while (picked.length < max) {
    let bestIndex = -1;
    let bestCount = 0;
    for (let i = 0; i < remaining.length && remaining[i].newAttesters.length > bestCount; i++) {
      const count = remaining[i].newAttesters.reduce((n, key) => (covered.has(key) ? n : n + 1), 0);
      if (count > bestCount) {
        bestCount = count;
        bestIndex = i;
      }
    }
    if (bestIndex < 0) break;
    const [best] = remaining.splice(bestIndex, 1);
    for (const key of best.newAttesters) covered.add(key);
    picked.push(best.build());
  }
  return picked;
}

function groupBy<T>(values: T[], keyOf: (value: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const value of values) {
    const key = keyOf(value);
    const group = groups.get(key);
    if (group) group.push(value);
    else groups.set(key, [value]);
  }
  return groups;
}
