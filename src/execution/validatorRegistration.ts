import {PublicKey, Signature, verify} from "@chainsafe/blst";
import type {ChainForkConfig} from "@lodestar/config";
import {DOMAIN_APPLICATION_BUILDER} from "@lodestar/params";
import {computeDomain, computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type bellatrix} from "@lodestar/types";

/** The builder domain is computed with a zero validators root and the genesis fork version, on every fork (builder-specs). */
const ZERO_ROOT = new Uint8Array(32);

/** `compute_domain(DOMAIN_APPLICATION_BUILDER)`: registrations and builder bids are signed in it. */
export function builderDomain(config: ChainForkConfig): Uint8Array {
  return computeDomain(DOMAIN_APPLICATION_BUILDER, config.GENESIS_FORK_VERSION, ZERO_ROOT);
}

/** Whether `signature` over `signingRoot` is by `pubkey`; false when either is not a valid point. */
export function isValidBuilderSignature(signingRoot: Uint8Array, pubkey: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(signingRoot, PublicKey.fromBytes(pubkey, true), Signature.fromBytes(signature, true));
  } catch {
    // not a point on the curve, or not in the group
    return false;
  }
}

/** Whether a validator registration (for external builders) is signed by the key it registers. */
export function isValidRegistrationSignature(config: ChainForkConfig, signed: bellatrix.SignedValidatorRegistrationV1): boolean {
  const signingRoot = computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, signed.message, builderDomain(config));
  return isValidBuilderSignature(signingRoot, signed.message.pubkey, signed.signature);
}
