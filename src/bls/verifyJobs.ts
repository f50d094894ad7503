import {PublicKey, Signature, aggregateWithRandomness, verify, verifyMultipleAggregateSignatures, type SignatureSet} from "@chainsafe/blst";
import type {SerializedSet} from "./verifier.ts";

/**
 * The worker's job, apart from the thread so it can be tested as it is: several callers' sets
 * checked in one batch (one final exponentiation for all); when the batch fails, each caller's
 * sets again on their own, so that one bad signature fails only the job that sent it.
 */
export function verifyJobs(jobs: SerializedSet[][]): boolean[] {
  if (verifySets(jobs.flat())) return jobs.map(() => true);
  if (jobs.length === 1) return [false];
  return jobs.map(verifySets);
}

/**
 * True when every set is valid. Sets that sign the same message (a committee's attestations, the
 * same aggregate sent by several peers) are folded into one: their keys and signatures each summed
 * with the same random scalars, so one pairing checks them all and a forged pair that cancels out
 * (S1 + D, S2 - D) does not pass. A signature that is malformed or not in the group fails the sets.
 */
function verifySets(sets: SerializedSet[]): boolean {
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
        const {msg, pk, sig} = group[0];
        folded.push({msg, pk: PublicKey.fromBytes(pk, false), sig: Signature.fromBytes(sig, true)});
      } else {
        // a key from our own cache is taken as valid; each signature is group-checked as it is read
        const {pk, sig} = aggregateWithRandomness(group.map((set) => ({pk: PublicKey.fromBytes(set.pk, false), sig: set.sig})));
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
