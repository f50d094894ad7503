import {toHex} from "@lodestar/utils";
import type {ValidatorBeaconApi} from "./beaconApi.ts";

/** The validator client's keys and the registry indices the beacon node knows them by. */
export class ValidatorIndices {
  private readonly pubkeys: Uint8Array[];
  private readonly indexByPubkey = new Map<string, number>();

  constructor(pubkeys: Uint8Array[]) {
    this.pubkeys = pubkeys;
  }

  /** Indices of the keys the beacon node knows, ascending. */
  get indices(): number[] {
    return [...this.indexByPubkey.values()].sort((a, b) => a - b);
  }

  get allResolved(): boolean {
    return this.indexByPubkey.size === this.pubkeys.length;
  }

  /** Whether `pubkey` is one of ours and known at `index` (duties naming anything else are ignored). */
  owns(pubkey: Uint8Array, index: number): boolean {
    return this.indexByPubkey.get(toHex(pubkey)) === index;
  }

  /**
   * Asks the beacon node (getValidators on head) for the keys not resolved yet.
   * Returns the number of newly resolved keys; keys unknown to the node stay unresolved.
   */
  async resolve(api: ValidatorBeaconApi): Promise<number> {
    const missing = this.pubkeys.filter((pk) => !this.indexByPubkey.has(toHex(pk)));
    if (missing.length === 0) return 0;
    const wanted = new Set(missing.map((pk) => toHex(pk)));
    let added = 0;
    for (const v of await api.getValidators(missing)) {
      const key = toHex(v.pubkey);
      if (wanted.has(key) && !this.indexByPubkey.has(key)) {
        this.indexByPubkey.set(key, v.index);
        added++;
      }
    }
    return added;
  }
}
