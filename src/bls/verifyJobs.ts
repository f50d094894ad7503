import {PublicKey, Signature, verifyMultipleAggregateSignatures, type SignatureSet} from "@chainsafe/blst";
import type {SerializedSet} from "./verifier.ts";

/**
 * The worker's job, apart from the thread so it can be tested as it is: several callers' sets
 * checked in one batch (one final exponentiation for all); when the batch fails, each caller's
 * sets again on their own, so that one bad signature fails only the job that sent it.
 */
export function verifyJobs(jobs: SerializedSet[][]): boolean[] {
  const read = jobs.map(readSets);
  const valid = (sets: SignatureSet[] | null): boolean => sets !== null && (sets.length === 0 || verifyMultipleAggregateSignatures(sets));
  if (read.every((sets) => sets !== null) && valid(read.flat() as SignatureSet[])) return jobs.map(() => true);
  if (jobs.length === 1) return [false];
  return read.map(valid);
}

/** The sets as blst objects; null when a signature is malformed or not in the group (a key from our own cache is taken as valid). */
function readSets(sets: SerializedSet[]): SignatureSet[] | null {
  try {
    return sets.map(({msg, pk, sig}) => ({msg, pk: PublicKey.fromBytes(pk, false), sig: Signature.fromBytes(sig, true)}));
  } catch {
    return null;
  }
}
