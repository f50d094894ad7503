import {PublicKey, Signature, verify} from "@chainsafe/blst";
import type {ChainForkConfig} from "@lodestar/config";
import {DOMAIN_APPLICATION_BUILDER} from "@lodestar/params";
import {computeDomain, computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type bellatrix} from "@lodestar/types";

/** The builder domain is computed with a zero validators root and the genesis fork version, on every fork (builder-specs). */
const ZERO_ROOT = new Uint8Array(32);

/** Whether a validator registration (for external builders) is signed by the key it registers. */
export function isValidRegistrationSignature(config: ChainForkConfig, signed: bellatrix.SignedValidatorRegistrationV1): boolean {
  const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, config.GENESIS_FORK_VERSION, ZERO_ROOT);
  const signingRoot = computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, signed.message, domain);
  try {
    return verify(signingRoot, PublicKey.fromBytes(signed.message.pubkey, true), Signature.fromBytes(signed.signature, true));
  } catch {
    // not a point on the curve, or not in the group
    return false;
  }
}
