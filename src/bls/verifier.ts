import {getSignatureSetPubkey, type ISignatureSet, type PubkeyCache, SignatureSetType} from "@lodestar/state-transition";
import type {PubkeyTable} from "./pubkeyTable.ts";
import {verifyJobs} from "./verifyJobs.ts";

/**
 * Checks signature sets: true when every signature is valid, false when any is malformed, not in
 * the group, or wrong. The node's own is the worker pool (workerPool.ts), which keeps the pairings
 * off the event loop; `verifyOnThisThread` does the same work where it is called (tests, tools).
 */
export interface SignatureVerifier {
  verify(sets: ISignatureSet[], pubkeyCache: PubkeyCache, opts?: VerifyOptions): Promise<boolean>;
}

export interface VerifyOptions {
  /** checked before the sets already waiting (a block's, which the chain waits on, ahead of a slot's gossip) */
  priority?: boolean;
}

export const verifyOnThisThread: SignatureVerifier = {
  async verify(sets, pubkeyCache) {
    try {
      return verifyJobs([sets.map((set) => serializeSet(set, pubkeyCache))])[0];
    } catch {
      // a validator index the cache does not know: nothing to verify against
      return false;
    }
  },
};

/**
 * One signature set as a worker can take it: the signing root, the signature as sent, and its
 * key: either the (aggregate) public key uncompressed, or the signers' validator indices, whose
 * keys the worker reads from the pool's key table (and sums for an aggregate).
 */
export interface SerializedSet {
  msg: Uint8Array;
  sig: Uint8Array;
  pk?: Uint8Array;
  signers?: number[];
}

/** The set with its public key looked up (aggregated for an aggregate set) and written out; uncompressed keys are read back without a square root. */
export function serializeSet(set: ISignatureSet, pubkeyCache: PubkeyCache): SerializedSet & {pk: Uint8Array} {
  return {msg: set.signingRoot, pk: getSignatureSetPubkey(set, pubkeyCache).toBytes(false), sig: set.signature};
}

/** The set with its signers' indices, their keys written to `table` first where they are not yet (a set with its own key keeps it). */
export function serializeSetBySigners(set: ISignatureSet, pubkeyCache: PubkeyCache, table: PubkeyTable): SerializedSet {
  if (set.type === SignatureSetType.single) return serializeSet(set, pubkeyCache);
  const signers = set.type === SignatureSetType.indexed ? [set.index] : set.indices;
  table.cover(signers, pubkeyCache);
  return {msg: set.signingRoot, signers, sig: set.signature};
}
