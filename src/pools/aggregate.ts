import {BitArray} from "@chainsafe/ssz";
import type {ChainForkConfig} from "@lodestar/config";
import {ForkSeq, MAX_COMMITTEES_PER_SLOT} from "@lodestar/params";
import type {Attestation, electra, phase0} from "@lodestar/types";
import {aggregateSignatureBytes} from "./signatures.ts";

/**
 * One committee's aggregate for one attestation data: the unit the pools store.
 * Pre-electra it is exactly a phase0 Attestation; from electra it becomes an Attestation
 * with a single committee bit (a network aggregate) or part of an on-chain aggregate.
 */
export interface CommitteeAggregate {
  data: phase0.AttestationData;
  /** 0x hex hash_tree_root(data) */
  dataRootHex: string;
  committeeIndex: number;
  /** committee-sized bitfield */
  aggregationBits: BitArray;
  /** validator indices of the set bits, in committee order */
  attesters: number[];
  signature: Uint8Array;
}

/** The key of one (attestation data, committee) group. */
export function aggregateKey(dataRootHex: string, committeeIndex: number): string {
  return `${dataRootHex}:${committeeIndex}`;
}

export function isPostElectraSlot(config: ChainForkConfig, slot: number): boolean {
  return config.getForkSeq(slot) >= ForkSeq.electra;
}

export function countBits(bits: BitArray): number {
  return bits.getTrueBitIndexes().length;
}

/** `a` has every bit of `b` (non-strict superset). */
export function isSuperset(a: BitArray, b: BitArray): boolean {
  if (a.bitLen !== b.bitLen) return false;
  for (let i = 0; i < a.uint8Array.length; i++) {
    if ((b.uint8Array[i] & ~a.uint8Array[i]) !== 0) return false;
  }
  return true;
}

export function isDisjoint(a: BitArray, b: BitArray): boolean {
  if (a.bitLen !== b.bitLen) return false;
  for (let i = 0; i < a.uint8Array.length; i++) {
    if ((a.uint8Array[i] & b.uint8Array[i]) !== 0) return false;
  }
  return true;
}

/** The aggregate of two aggregates with disjoint bits of the same data and committee. */
export function mergeDisjoint(a: CommitteeAggregate, b: CommitteeAggregate): CommitteeAggregate {
  const validatorByBit = new Map<number, number>();
  for (const x of [a, b]) x.aggregationBits.getTrueBitIndexes().forEach((bit, i) => validatorByBit.set(bit, x.attesters[i]));
  const aggregationBits = a.aggregationBits.clone();
  aggregationBits.mergeOrWith(b.aggregationBits);
  return {
    ...a,
    aggregationBits,
    attesters: aggregationBits.getTrueBitIndexes().map((bit) => validatorByBit.get(bit) as number),
    signature: aggregateSignatureBytes([a.signature, b.signature]),
  };
}

/** The aggregate as gossiped / served by the API: phase0 shape, or electra with one committee bit. */
export function toNetworkAttestation(config: ChainForkConfig, agg: CommitteeAggregate): Attestation {
  const base: phase0.Attestation = {aggregationBits: agg.aggregationBits, data: agg.data, signature: agg.signature};
  if (!isPostElectraSlot(config, agg.data.slot)) return base;
  const committeeBits = BitArray.fromSingleBit(MAX_COMMITTEES_PER_SLOT, agg.committeeIndex);
  return {...base, committeeBits} as electra.Attestation;
}

/**
 * compute_on_chain_aggregate (electra validator.md): one Attestation for the aggregates of
 * distinct committees of the same data, committee bitfields concatenated in committee order.
 */
export function toOnChainAggregate(aggs: CommitteeAggregate[]): electra.Attestation {
  const sorted = [...aggs].sort((x, y) => x.committeeIndex - y.committeeIndex);
  const bools: boolean[] = [];
  for (const a of sorted) bools.push(...a.aggregationBits.toBoolArray());
  const committeeBits = BitArray.fromBitLen(MAX_COMMITTEES_PER_SLOT);
  for (const a of sorted) committeeBits.set(a.committeeIndex, true);
  return {
    aggregationBits: BitArray.fromBoolArray(bools),
    data: sorted[0].data,
    committeeBits,
    signature: aggregateSignatureBytes(sorted.map((a) => a.signature)),
  };
}
