import {describe, expect, it} from "@jest/globals";
import {SecretKey, Signature, aggregateSignatures, fastAggregateVerify} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {ssz} from "@lodestar/types";
import type {CommitteeAggregate} from "../../../src/pools/aggregate.ts";
import {RunningAggregate} from "../../../src/pools/runningAggregate.ts";

/**
 * The running aggregate of a committee's single attestations, against @chainsafe/blst directly:
 * read after any number of attestations (folded by sixteens or not yet), its signature is the
 * aggregate of exactly the signatures added and verifies against its attesters' keys; its bits
 * and attesters are those added, in committee order.
 */
const COMMITTEE = 40;
const message = Uint8Array.from({length: 32}, (_, i) => i + 1);
const keys = Array.from({length: COMMITTEE}, (_, i) => SecretKey.fromKeygen(Uint8Array.from({length: 32}, (_, j) => (i * 31 + j) % 256)));
const signatures = keys.map((key) => key.sign(message));
const data = ssz.phase0.AttestationData.defaultValue();

/** The single attestation of the committee member at `bit` (validator 1000 + bit). */
function single(bit: number): CommitteeAggregate {
  return {
    data,
    dataRootHex: "0xab",
    committeeIndex: 3,
    aggregationBits: BitArray.fromSingleBit(COMMITTEE, bit),
    attesters: [1000 + bit],
    signature: signatures[bit].toBytes(),
  };
}

describe("running aggregate of single attestations", () => {
  it("reads as the aggregate of exactly what was added, after every attestation, in any order", () => {
    // a seeded order of the committee's members
    const order = Array.from({length: COMMITTEE}, (_, i) => (i * 17 + 5) % COMMITTEE);
    const running = new RunningAggregate(single(order[0]));
    for (let n = 1; ; n++) {
      const added = order.slice(0, n).sort((a, b) => a - b);
      const read = running.aggregate();
      expect(read.aggregationBits.getTrueBitIndexes()).toEqual(added);
      expect(read.attesters).toEqual(added.map((bit) => 1000 + bit));
      const expected = aggregateSignatures(added.map((bit) => signatures[bit])).toBytes();
      expect(Buffer.from(read.signature).equals(Buffer.from(expected))).toBe(true);
      expect(fastAggregateVerify(message, added.map((bit) => keys[bit].toPublicKey()), Signature.fromBytes(read.signature, true))).toBe(true);
      // the same object until something is added
      expect(running.aggregate()).toBe(read);
      if (n === COMMITTEE) break;
      running.add(single(order[n]));
    }
  });

  it("folds without being read: 16, 17 and 33 attestations added at once read the same as one by one", () => {
    for (const count of [16, 17, 33]) {
      const running = new RunningAggregate(single(0));
      for (let bit = 1; bit < count; bit++) running.add(single(bit));
      const bits = Array.from({length: count}, (_, i) => i);
      expect(running.aggregate().aggregationBits.getTrueBitIndexes()).toEqual(bits);
      expect(Buffer.from(running.aggregate().signature).equals(Buffer.from(aggregateSignatures(bits.map((bit) => signatures[bit])).toBytes()))).toBe(true);
    }
  });

  it("keeps a read apart from what is added after it, and names its group without a read", () => {
    const running = new RunningAggregate(single(0));
    const first = running.aggregate();
    running.add(single(1));
    expect(first.aggregationBits.getTrueBitIndexes()).toEqual([0]);
    expect(first.attesters).toEqual([1000]);
    expect(running.aggregate().aggregationBits.getTrueBitIndexes()).toEqual([0, 1]);
    expect(running.dataRootHex).toBe("0xab");
    expect(running.committeeIndex).toBe(3);
  });
});
