import {mkdirSync, readFileSync, renameSync, writeFileSync} from "node:fs";
import {dirname} from "node:path";
import {toPubkeyHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import {type SignedValidatorRegistration, SignedValidatorRegistrations} from "./types.ts";

const log = getLogger("builder");

/**
 * The validators' signed builder registrations, the newest per public key (by timestamp), kept in
 * a JSON file (the builder API's own shape) so they survive restarts and reach the relay at start.
 * A registration that is new or changed is "pending" until the relay has taken it.
 */
export class RegistrationStore {
  private readonly byPubkey = new Map<string, SignedValidatorRegistration>();
  private readonly pending = new Set<string>();
  private readonly file: string | null;

  constructor(file: string | null) {
    this.file = file;
    if (!file) return;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return; // none kept yet
    }
    try {
      for (const signed of SignedValidatorRegistrations.fromJson(JSON.parse(text))) this.byPubkey.set(toPubkeyHex(signed.message.pubkey), signed);
    } catch (e) {
      log.warn({file, err: (e as Error).message}, "unreadable builder registrations file: starting without them");
    }
  }

  get size(): number {
    return this.byPubkey.size;
  }

  get(pubkey: Uint8Array): SignedValidatorRegistration | undefined {
    return this.byPubkey.get(toPubkeyHex(pubkey));
  }

  all(): SignedValidatorRegistration[] {
    return [...this.byPubkey.values()];
  }

  /**
   * Keeps the registration unless one with a later timestamp is kept; true when it changes what
   * the relay should know (new key, another fee recipient or gas limit), which makes it pending.
   */
  set(signed: SignedValidatorRegistration): boolean {
    const key = toPubkeyHex(signed.message.pubkey);
    const kept = this.byPubkey.get(key);
    if (kept && kept.message.timestamp > signed.message.timestamp) return false;
    this.byPubkey.set(key, signed);
    const changed = !kept || kept.message.gasLimit !== signed.message.gasLimit || !Buffer.from(kept.message.feeRecipient).equals(signed.message.feeRecipient);
    if (changed) this.pending.add(key);
    return changed;
  }

  /** The registrations the relay has not taken yet. */
  takePending(): SignedValidatorRegistration[] {
    const list = [...this.pending].map((key) => this.byPubkey.get(key)!);
    this.pending.clear();
    return list;
  }

  /** Puts back registrations the relay did not take (they go in the next batch). */
  returnPending(list: SignedValidatorRegistration[]): void {
    for (const signed of list) this.pending.add(toPubkeyHex(signed.message.pubkey));
  }

  /** Writes the file (atomically: a crash leaves the old or the new file, never half of one). */
  save(): void {
    if (!this.file) return;
    mkdirSync(dirname(this.file), {recursive: true});
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(SignedValidatorRegistrations.toJson(this.all())));
    renameSync(tmp, this.file);
  }
}
