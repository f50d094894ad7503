import type {bellatrix} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {ValidatorContext} from "./context.ts";

/**
 * Builder mode (`validator --builder`, or a node's own validators with `--builder`): each epoch
 * the validators' registrations (fee recipient, gas limit) go to the beacon node, which sends
 * them to its relay; proposals ask for v3 blocks with `builder_boost_factor` and publish a
 * blinded block when the node answers one (proposer.ts).
 */
export interface BuilderModeOptions {
  /** `builder_boost_factor` sent with each block request; the node's own when absent */
  boostFactor?: bigint;
}

/** What a key's registration asks for (per key: set through the keymanager API, else the client's defaults). */
export interface RegistrationPreferences {
  /** where the fees go; the zero address when the client was given none */
  feeRecipientOf(pubkey: string): Uint8Array;
  /** the execution gas limit the validator prefers (`--gas-limit`) */
  gasLimitOf(pubkey: string): number;
}

/**
 * The signed registrations, kept per key and signed again only when a preference changes: the
 * timestamp of a registration names when its preferences were chosen (builder-specs), and a relay
 * keeps the newest.
 */
export class BuilderRegistrations {
  private readonly signed = new Map<string, bellatrix.SignedValidatorRegistrationV1>();
  private readonly preferences: RegistrationPreferences;
  private readonly nowSeconds: () => number;

  constructor(preferences: RegistrationPreferences, nowSeconds: () => number = () => Math.floor(Date.now() / 1000)) {
    this.preferences = preferences;
    this.nowSeconds = nowSeconds;
  }

  /** Registers every validator whose index the node knows (each epoch). */
  async submit(ctx: ValidatorContext): Promise<void> {
    const {api, signer, validators} = ctx;
    if (!api.registerValidator || validators.indices.length === 0) return;
    const list: bellatrix.SignedValidatorRegistrationV1[] = [];
    for (const pubkey of signer.pubkeys) {
      const key = toHex(pubkey);
      let signed = this.signed.get(key);
      const gasLimit = this.preferences.gasLimitOf(key);
      const feeRecipient = this.preferences.feeRecipientOf(key);
      if (!signed || signed.message.gasLimit !== gasLimit || !Buffer.from(signed.message.feeRecipient).equals(feeRecipient)) {
        signed = await signer.signValidatorRegistration({feeRecipient, gasLimit, timestamp: this.nowSeconds(), pubkey});
        this.signed.set(key, signed);
      }
      list.push(signed);
    }
    await api.registerValidator(list);
  }
}
