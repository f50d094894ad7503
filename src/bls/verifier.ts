import {getSignatureSetPubkey, type ISignatureSet, type PubkeyCache} from "@lodestar/state-transition";
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

/** One signature set as bytes a worker can take: the signing root, the (aggregate) public key uncompressed, the signature as sent. */
export interface SerializedSet {
  msg: Uint8Array;
  pk: Uint8Array;
  sig: Uint8Array;
}

/** The set with its public key looked up (aggregated for an aggregate set) and written out; uncompressed keys are read back without a square root. */
export function serializeSet(set: ISignatureSet, pubkeyCache: PubkeyCache): SerializedSet {
  return {msg: set.signingRoot, pk: getSignatureSetPubkey(set, pubkeyCache).toBytes(false), sig: set.signature};
}
