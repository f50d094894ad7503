import {describe, expect, it} from "@jest/globals";
import {SHUFFLE_ROUND_COUNT, SLOTS_PER_EPOCH} from "@lodestar/params";
import {createHash} from "node:crypto";
import {
  computeSubnetForAttestation,
  computeSubscribedSubnets,
  SubnetService,
  syncSubnetOfIndex,
  type SubnetState,
} from "../../../src/network/subnets.ts";

/**
 * The long-lived subnets against a transcription of the spec's python (phase0 p2p-interface
 * "Attestation subnet subscription", phase0 beacon-chain `compute_shuffled_index`), written
 * here with BigInt and node:crypto rather than with the implementation's helpers.
 */
const NODE_ID_BITS = 256n;
const ATTESTATION_SUBNET_COUNT = 64n;
const ATTESTATION_SUBNET_PREFIX_BITS = 6n; // ceillog2(64) + ATTESTATION_SUBNET_EXTRA_BITS (0)
const EPOCHS_PER_SUBNET_SUBSCRIPTION = 256n;
const SUBNETS_PER_NODE = 2n;
const config = {EPOCHS_PER_SUBNET_SUBSCRIPTION: Number(EPOCHS_PER_SUBNET_SUBSCRIPTION), SUBNETS_PER_NODE: Number(SUBNETS_PER_NODE)};

const hash = (...parts: Buffer[]): Buffer => createHash("sha256").update(Buffer.concat(parts)).digest();
/** uint_to_bytes: little endian, the byte length of the type */
const uintToBytes = (n: bigint, bytes: number): Buffer => {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
};
const bytesToUint64 = (data: Buffer): bigint => data.reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);

function specComputeShuffledIndex(index: bigint, indexCount: bigint, seed: Buffer): bigint {
  if (!(index < indexCount)) throw new Error("assert index < index_count");
  for (let currentRound = 0n; currentRound < BigInt(SHUFFLE_ROUND_COUNT); currentRound++) {
    const pivot = bytesToUint64(hash(seed, uintToBytes(currentRound, 1)).subarray(0, 8)) % indexCount;
    const flip = (pivot + indexCount - index) % indexCount;
    const position = index > flip ? index : flip;
    const source = hash(seed, uintToBytes(currentRound, 1), uintToBytes(position / 256n, 4));
    const byte = BigInt(source[Number((position % 256n) / 8n)]);
    const bit = (byte >> position % 8n) % 2n;
    index = bit ? flip : index;
  }
  return index;
}

function specComputeSubscribedSubnet(nodeId: bigint, epoch: bigint, index: bigint): bigint {
  const nodeIdPrefix = nodeId >> (NODE_ID_BITS - ATTESTATION_SUBNET_PREFIX_BITS);
  const nodeOffset = nodeId % EPOCHS_PER_SUBNET_SUBSCRIPTION;
  const permutationSeed = hash(uintToBytes((epoch + nodeOffset) / EPOCHS_PER_SUBNET_SUBSCRIPTION, 8));
  const permutatedPrefix = specComputeShuffledIndex(nodeIdPrefix, 1n << ATTESTATION_SUBNET_PREFIX_BITS, permutationSeed);
  return (permutatedPrefix + index) % ATTESTATION_SUBNET_COUNT;
}

const specComputeSubscribedSubnets = (nodeId: bigint, epoch: bigint): number[] =>
  Array.from({length: Number(SUBNETS_PER_NODE)}, (_, i) => Number(specComputeSubscribedSubnet(nodeId, epoch, BigInt(i))));

const nodeIdOf = (seed: string): bigint => BigInt("0x" + createHash("sha256").update(seed).digest("hex"));

describe("compute_subscribed_subnets", () => {
  const nodeIds = [0n, 1n, (1n << 256n) - 1n, 0x8000000000000000000000000000000000000000000000000000000000000000n, ...Array.from({length: 12}, (_, i) => nodeIdOf(`node ${i}`))];
  const epochs = [0, 1, 255, 256, 257, 1000, 123456, 2 ** 32 + 7];

  it("agrees with the spec's python on many node ids and epochs", () => {
    for (const nodeId of nodeIds) {
      for (const epoch of epochs) {
        expect({nodeId, epoch, subnets: computeSubscribedSubnets(config, nodeId, epoch)}).toEqual({nodeId, epoch, subnets: specComputeSubscribedSubnets(nodeId, BigInt(epoch))});
      }
    }
  });

  it("gives SUBNETS_PER_NODE consecutive subnets, fixed for a period of EPOCHS_PER_SUBNET_SUBSCRIPTION epochs that starts at the node's offset", () => {
    const nodeId = nodeIdOf("period");
    const offset = Number(nodeId % EPOCHS_PER_SUBNET_SUBSCRIPTION);
    const start = 256 - offset; // (start + offset) / 256 = 1: the second period begins
    const [a, b] = computeSubscribedSubnets(config, nodeId, start);
    expect(b).toBe((a + 1) % 64);
    expect(computeSubscribedSubnets(config, nodeId, start + 255)).toEqual([a, b]);
    // across many node ids the period changes the subnets somewhere
    const changes = nodeIds.filter((id) => {
      const o = Number(id % EPOCHS_PER_SUBNET_SUBSCRIPTION);
      return computeSubscribedSubnets(config, id, 255 - o)[0] !== computeSubscribedSubnets(config, id, 256 - o)[0];
    });
    expect(changes.length).toBeGreaterThan(0);
  });
});

describe("subnet helpers", () => {
  it("compute_subnet_for_attestation: (committees_per_slot * (slot % SLOTS_PER_EPOCH) + committee_index) % 64", () => {
    expect(computeSubnetForAttestation(1, 0, 0)).toBe(0);
    expect(computeSubnetForAttestation(4, SLOTS_PER_EPOCH + 3, 2)).toBe(14);
    expect(computeSubnetForAttestation(64, 5, 63)).toBe((64 * 5 + 63) % 64);
  });

  it("a sync committee position's subnet: index / (SYNC_COMMITTEE_SIZE / 4)", () => {
    // the minimal preset's SYNC_COMMITTEE_SIZE is 32: 8 positions per subnet
    expect([0, 7, 8, 31].map(syncSubnetOfIndex)).toEqual([0, 0, 1, 3]);
  });
});

describe("SubnetService", () => {
  const nodeId = nodeIdOf("service");
  const longLived = (slot: number) => computeSubscribedSubnets(config, nodeId, Math.floor(slot / SLOTS_PER_EPOCH));

  function setup(subscribeAll = false) {
    const clock = {slot: 10};
    const changes: SubnetState[] = [];
    // the node id as the identity gives it: 64 hex digits
    const service = new SubnetService({config, nodeId: nodeId.toString(16).padStart(64, "0"), currentSlot: () => clock.slot, subscribeAll});
    service.onChange((s) => changes.push(s));
    const tick = (slot: number) => {
      clock.slot = slot;
      service.onSlot(slot);
    };
    return {clock, changes, service, tick, last: () => changes[changes.length - 1]};
  }

  it("joins and advertises the long-lived subnets at the first slot, and tells nothing while nothing changes", () => {
    const {changes, tick, last} = setup();
    tick(10);
    expect(last().attnets).toEqual([...longLived(10)].sort((a, b) => a - b));
    expect(last().enrAttnets.getTrueBitIndexes()).toEqual([...longLived(10)].sort((a, b) => a - b));
    expect(last().syncnets).toEqual([]);
    expect(last().enrSyncnets.getTrueBitIndexes()).toEqual([]);
    tick(11);
    expect(changes.length).toBe(1);
  });

  it("an aggregator's subnet is joined at once and left once its slot has passed; it is never advertised", () => {
    const {service, tick, last} = setup();
    tick(10);
    // a subnet that is not long-lived
    const committeeIndex = [0, 1, 2, 3].find((i) => !longLived(10).includes(computeSubnetForAttestation(4, 20, i)))!;
    const subnet = computeSubnetForAttestation(4, 20, committeeIndex);
    service.addCommitteeSubscriptions([{validatorIndex: 1, committeeIndex, committeesAtSlot: 4, slot: 20, isAggregator: true}]);
    expect(last().attnets).toContain(subnet);
    expect(last().dutyAttnets).toEqual([subnet]);
    expect(last().enrAttnets.get(subnet)).toBe(false);
    tick(20);
    expect(last().attnets).toContain(subnet);
    tick(21);
    expect(last().attnets).not.toContain(subnet);
    expect(last().dutyAttnets).toEqual([]);
  });

  it("tells whether a validator of the node aggregates on a subnet at a slot: an aggregator's duty, not an attester's nor all subnets, until the slot after it", () => {
    const {service, tick} = setup(true);
    tick(10);
    const aggregated = computeSubnetForAttestation(4, 20, 1);
    const attested = computeSubnetForAttestation(4, 21, 2);
    service.addCommitteeSubscriptions([
      {validatorIndex: 1, committeeIndex: 1, committeesAtSlot: 4, slot: 20, isAggregator: true},
      {validatorIndex: 2, committeeIndex: 2, committeesAtSlot: 4, slot: 21, isAggregator: false},
    ]);
    expect(service.aggregatesOn(aggregated, 20)).toBe(true);
    // the same subnet at another slot, the attester's subnet, and any other: no
    expect(service.aggregatesOn(aggregated, 19)).toBe(false);
    expect(service.aggregatesOn(attested, 21)).toBe(false);
    expect(service.aggregatesOn((aggregated + 1) % 64, 20)).toBe(false);
    // a late attestation of the slot just past still counts; one slot later it does not
    tick(21);
    expect(service.aggregatesOn(aggregated, 20)).toBe(true);
    tick(22);
    expect(service.aggregatesOn(aggregated, 20)).toBe(false);
  });

  it("a non-aggregating attester's subnet is joined only from the slot before its duty through the duty's slot; peers are wanted there from the request", () => {
    const {service, tick, last} = setup();
    tick(10);
    const committeeIndex = [0, 1, 2, 3].find((i) => !longLived(10).includes(computeSubnetForAttestation(4, 20, i)))!;
    const subnet = computeSubnetForAttestation(4, 20, committeeIndex);
    service.addCommitteeSubscriptions([
      {validatorIndex: 1, committeeIndex, committeesAtSlot: 4, slot: 20, isAggregator: false},
      // a second duty on the same subnet later on does not hide the first
      {validatorIndex: 2, committeeIndex, committeesAtSlot: 4, slot: 20 + 64, isAggregator: false},
    ]);
    expect(last().attnets).not.toContain(subnet);
    expect(last().dutyAttnets).toEqual([subnet]);
    tick(18);
    expect(last().attnets).not.toContain(subnet);
    tick(19);
    expect(last().attnets).toContain(subnet);
    tick(20);
    expect(last().attnets).toContain(subnet);
    tick(21);
    expect(last().attnets).not.toContain(subnet);
    expect(last().dutyAttnets).toEqual([subnet]);
    tick(20 + 63);
    expect(last().attnets).toContain(subnet);
  });

  it("ignores duties of slots that have passed, and refuses a committee index beyond the slot's committees (applying nothing)", () => {
    const {service, changes, tick} = setup();
    tick(10);
    service.addCommitteeSubscriptions([{validatorIndex: 1, committeeIndex: 0, committeesAtSlot: 1, slot: 9, isAggregator: true}]);
    expect(changes.length).toBe(1);
    expect(() =>
      service.addCommitteeSubscriptions([
        {validatorIndex: 1, committeeIndex: 0, committeesAtSlot: 1, slot: 12, isAggregator: true},
        {validatorIndex: 2, committeeIndex: 3, committeesAtSlot: 3, slot: 12, isAggregator: true},
      ])
    ).toThrow("committee_index 3 is not below committees_at_slot 3 (validator 2)");
    expect(() => service.addCommitteeSubscriptions([{validatorIndex: 3, committeeIndex: 0, committeesAtSlot: 0, slot: 12, isAggregator: false}])).toThrow(
      "committees_at_slot must be from 1"
    );
    expect(changes.length).toBe(1);
  });

  it("sync committee subnets are joined and advertised until until_epoch (exclusive)", () => {
    const {service, tick, last} = setup();
    tick(10);
    service.addSyncCommitteeSubscriptions([{validatorIndex: 4, syncCommitteeIndices: [1, 17], untilEpoch: 3}]);
    expect(last().syncnets).toEqual([0, 2]);
    expect(last().enrSyncnets.getTrueBitIndexes()).toEqual([0, 2]);
    tick(3 * SLOTS_PER_EPOCH - 1);
    expect(last().syncnets).toEqual([0, 2]);
    tick(3 * SLOTS_PER_EPOCH);
    expect(last().syncnets).toEqual([]);
    expect(last().enrSyncnets.getTrueBitIndexes()).toEqual([]);
    expect(() => service.addSyncCommitteeSubscriptions([{validatorIndex: 4, syncCommitteeIndices: [32], untilEpoch: 9}])).toThrow(
      "sync_committee_index must be below 32: 32"
    );
  });

  it("moves to the next long-lived subnets when the node's period ends", () => {
    const {tick, last} = setup();
    const offset = Number(nodeId % EPOCHS_PER_SUBNET_SUBSCRIPTION);
    // the first epoch of a period for this node, and a node whose subnets differ across it
    const boundary = (1 + Math.floor(offset / 256)) * 256 - offset;
    const before = [...specComputeSubscribedSubnets(nodeId, BigInt(boundary - 1))].sort((a, b) => a - b);
    const after = [...specComputeSubscribedSubnets(nodeId, BigInt(boundary))].sort((a, b) => a - b);
    expect(after).not.toEqual(before); // this node id's subnets do change there
    tick((boundary - 1) * SLOTS_PER_EPOCH);
    expect(last().enrAttnets.getTrueBitIndexes()).toEqual(before);
    expect(last().attnets).toEqual(before);
    tick(boundary * SLOTS_PER_EPOCH);
    expect(last().enrAttnets.getTrueBitIndexes()).toEqual(after);
    expect(last().attnets).toEqual(after);
  });

  it("subscribe-all: every attestation and sync subnet, joined and advertised; turning it off goes back", () => {
    const {service, tick, last} = setup(true);
    tick(10);
    expect(last().attnets).toEqual(Array.from({length: 64}, (_, i) => i));
    expect(last().syncnets).toEqual([0, 1, 2, 3]);
    expect(last().enrAttnets.getTrueBitIndexes().length).toBe(64);
    expect(last().enrSyncnets.getTrueBitIndexes()).toEqual([0, 1, 2, 3]);
    service.subscribeAll(false);
    expect(last().attnets).toEqual([...longLived(10)].sort((a, b) => a - b));
    expect(last().syncnets).toEqual([]);
  });
});
