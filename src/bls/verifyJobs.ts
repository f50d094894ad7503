import {PublicKey, Signature, aggregateSerializedPublicKeys, aggregateWithRandomness, verify, verifyMultipleAggregateSignatures, type SignatureSet} from "@chainsafe/blst";
import {keyBytesOf} from "./pubkeyTable.ts";
import type {SerializedSet} from "./verifier.ts";

/**
 * The worker's job, apart from the thread so it can be tested as it is: several callers' sets
 * checked in one batch (one final exponentiation for all); when the batch fails, each caller's
 * sets again on their own, so that one bad signature fails only the job that sent it.
 */
export function verifyJobs(jobs: SerializedSet[][], keyTable?: Uint8Array): boolean[] {
  if (verifySets(jobs.flat(), keyTable)) return jobs.map(() => true);
  if (jobs.length === 1) return [false];
  return jobs.map((sets) => verifySets(sets, keyTable));
}

/** The set's public key: its own, or its signers' from the key table (summed for several); a key from our own cache is taken as valid. */
function publicKeyOf(set: SerializedSet, keyTable: Uint8Array | undefined): PublicKey {
  if (set.pk) return PublicKey.fromBytes(set.pk, false);
  if (!keyTable || !set.signers || set.signers.length === 0) throw new Error("a set without a key");
  if (set.signers.length === 1) return PublicKey.fromBytes(keyBytesOf(keyTable, set.signers[0]), false);
  return aggregateSerializedPublicKeys(set.signers.map((index) => keyBytesOf(keyTable, index)), false);
}

/**
 * True when every set is valid. Sets that sign the same message (a committee's attestations, the
 * same aggregate sent by several peers) are folded into one: their keys and signatures each summed
 * with the same random scalars, so one pairing checks them all and a forged pair that cancels out
 * (S1 + D, S2 - D) does not pass. A signature that is malformed or not in the group fails the sets.
 */
function verifySets(sets: SerializedSet[], keyTable: Uint8Array | undefined): boolean {
  if (sets.length === 0) return true;
  const byMessage = new Map<string, SerializedSet[]>();
  for (const set of sets) {
    const key = Buffer.from(set.msg.buffer, set.msg.byteOffset, set.msg.byteLength).toString("hex");
    const group = byMessage.get(key);
    if (group) group.push(set);
    else byMessage.set(key, [set]);
  }
  try {
    const folded: SignatureSet[] = [];
    for (const group of byMessage.values()) {
      if (group.length === 1) {
        const {msg, sig} = group[0];
        folded.push({msg, pk: publicKeyOf(group[0], keyTable), sig: Signature.fromBytes(sig, true)});
      } else {
        // each signature is group-checked as it is read
        const {pk, sig} = aggregateWithRandomness(group.map((set) => ({pk: publicKeyOf(set, keyTable), sig: set.sig})));
        folded.push({msg: group[0].msg, pk, sig});
      }
    }
    // one set needs no random scalar of its own (0.95 ms against 1.4)
    if (folded.length === 1) return verify(folded[0].msg, folded[0].pk, folded[0].sig);
    return verifyMultipleAggregateSignatures(folded);
  } catch {
    return false;
  }
}
