import {describe, expect, it} from "@jest/globals";
import {packJobs, unpackJobs} from "../../../src/bls/packedJobs.ts";
import type {SerializedSet} from "../../../src/bls/verifier.ts";

const bytes = (length: number, seed: number) => Uint8Array.from({length}, (_, i) => (seed * 31 + i * 7) & 0xff);

describe("a batch of signature sets packed into one buffer for a BLS worker", () => {
  it("unpacks to the same jobs: roots, signatures, own keys and signers, in order", () => {
    const jobs: SerializedSet[][] = [
      [{msg: bytes(32, 1), sig: bytes(96, 2), signers: [7]}],
      [
        {msg: bytes(32, 3), sig: bytes(96, 4), pk: bytes(96, 5)},
        {msg: bytes(32, 6), sig: bytes(96, 7), signers: [0, 1, 2 ** 32 - 1, 999_999]},
      ],
      [],
      // a malformed signature keeps its length: the worker rejects it, as before
      [{msg: bytes(32, 8), sig: bytes(95, 9), signers: [3]}],
    ];
    // byte fields that are views of a larger buffer, as decoded messages' are
    const wide = new Uint8Array(200).fill(0xab);
    wide.set(bytes(32, 10), 50);
    jobs[2].push({msg: wide.subarray(50, 82), sig: bytes(96, 11), signers: [4, 5]});
    const packed = packJobs(jobs);
    const unpacked = unpackJobs(packed);
    expect(unpacked).toEqual(jobs);
    for (const set of unpacked.flat()) {
      expect(set.msg.buffer).toBe(packed);
      expect(set.sig.buffer).toBe(packed);
    }
  });

  it("leaves the sender nothing to hold once transferred, and the worker everything", async () => {
    const {port1, port2} = new MessageChannel();
    const jobs: SerializedSet[][] = [[{msg: bytes(32, 1), sig: bytes(96, 2), signers: [1, 2, 3]}]];
    const packed = packJobs(jobs);
    const received = new Promise<ArrayBuffer>((resolve) => port2.once("message", resolve));
    port1.postMessage(packed, [packed]);
    expect(packed.byteLength).toBe(0);
    expect(unpackJobs(await received)).toEqual(jobs);
    port1.close();
  });
});
