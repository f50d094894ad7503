import {Signature, aggregateSignatures} from "@chainsafe/blst";
import type {ISignatureSet, PubkeyCache} from "@lodestar/state-transition";
import type {SignatureVerifier} from "../bls/verifier.ts";
import {PoolError} from "./types.ts";

/** The compressed G2 point at infinity: the signature of an empty aggregate. */
export const G2_POINT_AT_INFINITY = Uint8Array.from([0xc0, ...new Array<number>(95).fill(0)]);

/** A signature set with what it signs, for the error reason ("invalid selection proof"). */
export interface NamedSignatureSet {
  what: string;
  set: ISignatureSet;
}

/**
 * Verifies every set in one batch; when the batch fails, finds the first bad set so the
 * caller can say which signature was wrong. Throws PoolError("invalid <what>").
 */
export async function assertValidSignatures(verifier: SignatureVerifier, sets: NamedSignatureSet[], pubkeyCache: PubkeyCache): Promise<void> {
  if (await verifier.verify(sets.map((s) => s.set), pubkeyCache)) return;
  const valid = sets.length === 1 ? [false] : await Promise.all(sets.map((s) => verifier.verify([s.set], pubkeyCache)));
  throw new PoolError(`invalid ${sets[Math.max(0, valid.indexOf(false))].what}`);
}

/** Aggregates already-verified compressed signatures. */
export function aggregateSignatureBytes(signatures: Uint8Array[]): Uint8Array {
  if (signatures.length === 0) return G2_POINT_AT_INFINITY.slice();
  if (signatures.length === 1) return signatures[0];
  return aggregateSignatures(signatures.map((s) => Signature.fromBytes(s))).toBytes();
}
