import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import type {CommitteeAggregate} from "./aggregate.ts";

/** signatures kept before they are folded into the aggregate point */
const FOLD_AT = 16;

/**
 * The running aggregate of one (attestation data, committee) group's single attestations. A node
 * on every subnet takes in tens of thousands a slot and is asked for few of their aggregates (its
 * own aggregators', a block's). The aggregate signature is kept as a point, not as bytes: each
 * attestation's signature is decompressed once, folded in by sixteens, and the aggregate
 * compressed only when it is read (and kept until the next attestation). Adding each as it came,
 * bytes to bytes, cost two decompressions, an addition and a compression per attestation on the
 * main thread (bench:gossip's profile: 12% of its busy time). Reading folds at most 15 signatures
 * a group, so a block's packing stays short. Every signature here was verified before.
 */
export class RunningAggregate {
  private readonly base: CommitteeAggregate;
  private readonly bits: BitArray;
  private readonly attesterByBit = new Map<number, number>();
  /** the signatures aggregated so far, and those added since */
  private aggregated: Signature | null = null;
  private pending: Uint8Array[] = [];
  private read: CommitteeAggregate | null = null;

  constructor(first: CommitteeAggregate) {
    this.base = first;
    this.bits = BitArray.fromBitLen(first.aggregationBits.bitLen);
    this.add(first);
  }

  /** Adds the attesters of `more` (same data and committee, none of its bits set here yet). */
  add(more: CommitteeAggregate): void {
    more.aggregationBits.getTrueBitIndexes().forEach((bit, i) => {
      this.bits.set(bit, true);
      this.attesterByBit.set(bit, more.attesters[i]);
    });
    this.pending.push(more.signature);
    if (this.pending.length >= FOLD_AT) this.fold();
    this.read = null;
  }

  private fold(): void {
    const points = this.pending.map((bytes) => Signature.fromBytes(bytes));
    this.aggregated = aggregateSignatures(this.aggregated ? [this.aggregated, ...points] : points);
    this.pending = [];
  }

  /** the group's key parts, known without reading the aggregate */
  get dataRootHex(): string {
    return this.base.dataRootHex;
  }

  get committeeIndex(): number {
    return this.base.committeeIndex;
  }

  /** The aggregate as it stands (the same object until something is added). */
  aggregate(): CommitteeAggregate {
    if (this.read) return this.read;
    if (this.pending.length > 0) this.fold();
    const aggregationBits = this.bits.clone();
    this.read = {
      ...this.base,
      aggregationBits,
      attesters: aggregationBits.getTrueBitIndexes().map((bit) => this.attesterByBit.get(bit) as number),
      signature: (this.aggregated as Signature).toBytes(),
    };
    return this.read;
  }
}
