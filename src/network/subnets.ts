import {BitArray} from "@chainsafe/ssz";
import type {ChainConfig} from "@lodestar/config";
import {
  ATTESTATION_SUBNET_COUNT,
  ATTESTATION_SUBNET_PREFIX_BITS,
  MAX_COMMITTEES_PER_SLOT,
  NODE_ID_BITS,
  SLOTS_PER_EPOCH,
  SYNC_COMMITTEE_SIZE,
  SYNC_COMMITTEE_SUBNET_COUNT,
} from "@lodestar/params";
import {computeShuffledIndex} from "@lodestar/state-transition";
import {createHash} from "node:crypto";

/**
 * Which attestation and sync committee subnets the node joins (gossip topics) and advertises
 * (ENR and MetaData `attnets` / `syncnets`):
 * - the long-lived attestation subnets of the phase0 p2p spec ("Attestation subnet subscription"),
 *   picked from the node id and advertised;
 * - the short-lived ones of validators' beacon committee subscriptions (Beacon API
 *   `prepareBeaconCommitteeSubnet`), joined around their slot and not advertised;
 * - the sync committee subnets of validators' sync committee subscriptions, joined and
 *   advertised until their `until_epoch` (altair validator guide, "Sync committee subnet stability").
 */

/** The p2p spec's `compute_subscribed_subnet`. `nodeId` is the ENR node id as a uint256. */
export function computeSubscribedSubnet(config: Pick<ChainConfig, "EPOCHS_PER_SUBNET_SUBSCRIPTION">, nodeId: bigint, epoch: number, index: number): number {
  const nodeIdPrefix = Number(nodeId >> BigInt(NODE_ID_BITS - ATTESTATION_SUBNET_PREFIX_BITS));
  const nodeOffset = Number(nodeId % BigInt(config.EPOCHS_PER_SUBNET_SUBSCRIPTION));
  const period = BigInt(Math.floor((epoch + nodeOffset) / config.EPOCHS_PER_SUBNET_SUBSCRIPTION));
  const periodBytes = Buffer.alloc(8);
  periodBytes.writeBigUInt64LE(period);
  const permutationSeed = createHash("sha256").update(periodBytes).digest();
  const permutatedPrefix = computeShuffledIndex(nodeIdPrefix, 1 << ATTESTATION_SUBNET_PREFIX_BITS, permutationSeed);
  return (permutatedPrefix + index) % ATTESTATION_SUBNET_COUNT;
}

/** The p2p spec's `compute_subscribed_subnets`: the node's SUBNETS_PER_NODE long-lived attestation subnets at `epoch`. */
export function computeSubscribedSubnets(config: Pick<ChainConfig, "EPOCHS_PER_SUBNET_SUBSCRIPTION" | "SUBNETS_PER_NODE">, nodeId: bigint, epoch: number): number[] {
  return Array.from({length: config.SUBNETS_PER_NODE}, (_, index) => computeSubscribedSubnet(config, nodeId, epoch, index));
}

/** The phase0 validator guide's `compute_subnet_for_attestation`. */
export function computeSubnetForAttestation(committeesPerSlot: number, slot: number, committeeIndex: number): number {
  const committeesSinceEpochStart = committeesPerSlot * (slot % SLOTS_PER_EPOCH);
  return (committeesSinceEpochStart + committeeIndex) % ATTESTATION_SUBNET_COUNT;
}

/** The sync committee subnet of a position in the sync committee (altair `compute_subnets_for_sync_committee`). */
export function syncSubnetOfIndex(syncCommitteeIndex: number): number {
  return Math.floor(syncCommitteeIndex / (SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT));
}

/** A beacon committee subscription, as the Beacon API takes it. */
export interface CommitteeSubscription {
  validatorIndex: number;
  committeeIndex: number;
  committeesAtSlot: number;
  slot: number;
  isAggregator: boolean;
}

/** A sync committee subscription, as the Beacon API takes it; `untilEpoch` is exclusive. */
export interface SyncCommitteeSubscription {
  validatorIndex: number;
  syncCommitteeIndices: number[];
  untilEpoch: number;
}

export interface SubnetState {
  /** `beacon_attestation_{subnet}` topics to be joined, ascending */
  attnets: number[];
  /** `sync_committee_{subnet}` topics to be joined, ascending */
  syncnets: number[];
  /** what the ENR and MetaData advertise: the long-lived subnets (all with subscribe-all) */
  enrAttnets: BitArray;
  enrSyncnets: BitArray;
  /** subnets of committee subscriptions to come, aggregating or not: peers are wanted there (phase0 validator guide) */
  dutyAttnets: number[];
}

export interface SubnetServiceOptions {
  config: Pick<ChainConfig, "EPOCHS_PER_SUBNET_SUBSCRIPTION" | "SUBNETS_PER_NODE">;
  /** the ENR node id: `identity.nodeId` (hex) or the uint256 itself */
  nodeId: string | bigint;
  /** the wall-clock slot */
  currentSlot(): number;
  /** --subscribe-all-subnets */
  subscribeAll?: boolean;
}

/**
 * A non-aggregating attester's subnet is joined from the slot before its duty (the spec only
 * needs peers there to publish; the slot ahead lets the mesh form). An aggregator's is joined
 * as soon as it is asked for, to collect the subnet's attestations.
 */
const ATTESTER_SLOTS_AHEAD = 1;

export class SubnetService {
  private readonly opts: SubnetServiceOptions;
  private readonly nodeId: bigint;
  private readonly listeners: Array<(state: SubnetState) => void> = [];
  private all: boolean;
  /** subnet -> the slots of attester duties there (aggregating or not) */
  private readonly attesterSlots = new Map<number, Set<number>>();
  /** subnet -> the slots of aggregator duties there (joined from the subscription through the last) */
  private readonly aggregatorSlots = new Map<number, Set<number>>();
  /** sync subnet -> the epoch its subscription ends (exclusive) */
  private readonly syncUntilEpoch = new Map<number, number>();
  private last: SubnetState = emptyState();

  constructor(opts: SubnetServiceOptions) {
    this.opts = opts;
    this.nodeId = typeof opts.nodeId === "bigint" ? opts.nodeId : BigInt("0x" + opts.nodeId.replace(/^0x/, ""));
    this.all = opts.subscribeAll ?? false;
  }

  /** `listener` gets the new state whenever it changes (first at the next `onSlot` or subscription). */
  onChange(listener: (state: SubnetState) => void): void {
    this.listeners.push(listener);
  }

  /** The subnets the node should be on at the current slot. */
  state(): SubnetState {
    return this.compute(this.opts.currentSlot());
  }

  /** Validates all subscriptions first (throws naming the first bad one, nothing applied), then applies them. */
  addCommitteeSubscriptions(subscriptions: CommitteeSubscription[]): void {
    for (const s of subscriptions) {
      if (!(s.committeesAtSlot >= 1 && s.committeesAtSlot <= MAX_COMMITTEES_PER_SLOT)) {
        throw new Error(`committees_at_slot must be from 1 to ${MAX_COMMITTEES_PER_SLOT}: ${s.committeesAtSlot} (validator ${s.validatorIndex})`);
      }
      if (s.committeeIndex >= s.committeesAtSlot) {
        throw new Error(`committee_index ${s.committeeIndex} is not below committees_at_slot ${s.committeesAtSlot} (validator ${s.validatorIndex})`);
      }
    }
    const current = this.opts.currentSlot();
    for (const s of subscriptions) {
      if (s.slot < current) continue;
      const subnet = computeSubnetForAttestation(s.committeesAtSlot, s.slot, s.committeeIndex);
      addSlot(this.attesterSlots, subnet, s.slot);
      if (s.isAggregator) addSlot(this.aggregatorSlots, subnet, s.slot);
    }
    this.update(current);
  }

  /** Whether a validator of this node aggregates on `subnet` at `slot` (subscribed with is_aggregator, and the slot not yet past). */
  aggregatesOn(subnet: number, slot: number): boolean {
    return this.aggregatorSlots.get(subnet)?.has(slot) ?? false;
  }

  /** Validates all subscriptions first (throws naming the first bad one, nothing applied), then applies them. */
  addSyncCommitteeSubscriptions(subscriptions: SyncCommitteeSubscription[]): void {
    for (const s of subscriptions) {
      const bad = s.syncCommitteeIndices.find((i) => !(i >= 0 && i < SYNC_COMMITTEE_SIZE));
      if (bad !== undefined) throw new Error(`sync_committee_index must be below ${SYNC_COMMITTEE_SIZE}: ${bad} (validator ${s.validatorIndex})`);
    }
    for (const s of subscriptions) {
      for (const index of s.syncCommitteeIndices) extend(this.syncUntilEpoch, syncSubnetOfIndex(index), s.untilEpoch);
    }
    this.update(this.opts.currentSlot());
  }

  /** --subscribe-all-subnets: every attestation and sync committee subnet, joined and advertised. */
  subscribeAll(on: boolean): void {
    this.all = on;
    this.update(this.opts.currentSlot());
  }

  /** At each slot: drops what has passed, moves to the next long-lived subnets when their period ends. */
  onSlot(slot: number): void {
    this.update(slot);
  }

  private update(slot: number): void {
    dropSlotsBefore(this.attesterSlots, slot);
    // an attestation of the slot just past may still come in, and an aggregator of it still ask
    dropSlotsBefore(this.aggregatorSlots, slot - 1);
    prune(this.syncUntilEpoch, (until) => until <= Math.floor(slot / SLOTS_PER_EPOCH));
    const next = this.compute(slot);
    if (sameState(next, this.last)) return;
    this.last = next;
    for (const listener of this.listeners) listener(next);
  }

  private compute(slot: number): SubnetState {
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH);
    if (this.all) {
      const attnets = range(ATTESTATION_SUBNET_COUNT);
      const syncnets = range(SYNC_COMMITTEE_SUBNET_COUNT);
      return {attnets, syncnets, enrAttnets: bits(ATTESTATION_SUBNET_COUNT, attnets), enrSyncnets: bits(SYNC_COMMITTEE_SUBNET_COUNT, syncnets), dutyAttnets: dutySubnets(this.attesterSlots, slot)};
    }
    const longLived = computeSubscribedSubnets(this.opts.config, this.nodeId, epoch);
    const joined = new Set(longLived);
    for (const subnet of dutySubnets(this.aggregatorSlots, slot)) joined.add(subnet);
    for (const [subnet, slots] of this.attesterSlots) {
      for (const duty of slots) if (slot >= duty - ATTESTER_SLOTS_AHEAD && slot <= duty) joined.add(subnet);
    }
    const syncnets = [...this.syncUntilEpoch].filter(([, until]) => epoch < until).map(([subnet]) => subnet);
    return {
      attnets: sorted(joined),
      syncnets: sorted(syncnets),
      enrAttnets: bits(ATTESTATION_SUBNET_COUNT, longLived),
      enrSyncnets: bits(SYNC_COMMITTEE_SUBNET_COUNT, syncnets),
      dutyAttnets: dutySubnets(this.attesterSlots, slot),
    };
  }
}

function extend(map: Map<number, number>, key: number, until: number): void {
  map.set(key, Math.max(map.get(key) ?? until, until));
}

function addSlot(slotsBySubnet: Map<number, Set<number>>, subnet: number, slot: number): void {
  slotsBySubnet.set(subnet, (slotsBySubnet.get(subnet) ?? new Set<number>()).add(slot));
}

/** Drops the slots before `slot` from each subnet's set, and the subnets left with none. */
function dropSlotsBefore(slotsBySubnet: Map<number, Set<number>>, slot: number): void {
  for (const [subnet, slots] of slotsBySubnet) {
    for (const duty of slots) if (duty < slot) slots.delete(duty);
    if (slots.size === 0) slotsBySubnet.delete(subnet);
  }
}

function prune(map: Map<number, number>, expired: (value: number) => boolean): void {
  for (const [key, value] of map) if (expired(value)) map.delete(key);
}

/** The subnets with a duty at `slot` or later. */
function dutySubnets(slotsBySubnet: Map<number, Set<number>>, slot: number): number[] {
  return sorted([...slotsBySubnet].filter(([, slots]) => [...slots].some((duty) => slot <= duty)).map(([subnet]) => subnet));
}

const range = (n: number): number[] => Array.from({length: n}, (_, i) => i);
const sorted = (values: Iterable<number>): number[] => [...new Set(values)].sort((a, b) => a - b);

function bits(length: number, set: number[]): BitArray {
  const array = BitArray.fromBitLen(length);
  for (const i of set) array.set(i, true);
  return array;
}

function emptyState(): SubnetState {
  return {attnets: [], syncnets: [], enrAttnets: bits(ATTESTATION_SUBNET_COUNT, []), enrSyncnets: bits(SYNC_COMMITTEE_SUBNET_COUNT, []), dutyAttnets: []};
}

const sameList = (a: number[], b: number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

function sameState(a: SubnetState, b: SubnetState): boolean {
  return (
    sameList(a.attnets, b.attnets) &&
    sameList(a.syncnets, b.syncnets) &&
    sameList(a.dutyAttnets, b.dutyAttnets) &&
    sameList(a.enrAttnets.getTrueBitIndexes(), b.enrAttnets.getTrueBitIndexes()) &&
    sameList(a.enrSyncnets.getTrueBitIndexes(), b.enrSyncnets.getTrueBitIndexes())
  );
}
