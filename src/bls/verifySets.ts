import {Signature, verifyMultipleAggregateSignatures, type SignatureSet} from "@chainsafe/blst";
import {getSignatureSetPubkey, type ISignatureSet, type PubkeyCache} from "@lodestar/state-transition";

/**
 * Verifies signature sets in one batch (random linear combination, one pairing check).
 * False when any signature is malformed, not in the group, or wrong.
 */
export function verifySignatureSetsBatch(sets: ISignatureSet[], pubkeyCache: PubkeyCache): boolean {
  if (sets.length === 0) return true;
  const batch: SignatureSet[] = [];
  try {
    for (const set of sets) {
      batch.push({msg: set.signingRoot, pk: getSignatureSetPubkey(set, pubkeyCache), sig: Signature.fromBytes(set.signature, true)});
    }
  } catch {
    return false;
  }
  return verifyMultipleAggregateSignatures(batch);
}
