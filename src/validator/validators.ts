import {toHex} from "@lodestar/utils";
import type {ValidatorBeaconApi} from "./beaconApi.ts";

/** The validator client's keys and the registry indices the beacon node knows them by. */
export class ValidatorIndices {
  private readonly pubkeys = new Map<string, Uint8Array>();
  private readonly indexByPubkey = new Map<string, number>();
  /** keys whose duties are not performed (doppelganger protection holds them) */
  private readonly held = new Set<string>();
  /** bumped when a key is added or removed (keys to resolve, fee recipients to announce) */
  version = 0;
  /**
   * bumped whenever the keys that perform duties change: a key resolved to its index, removed,
   * held or released. Duties fetched for an earlier generation were asked for other indices: they
   * are fetched again, and never stored over those of a later generation (dutyStore.ts).
   */
  generation = 0;

  constructor(pubkeys: Uint8Array[]) {
    for (const pubkey of pubkeys) this.add(pubkey);
  }

  /** A key to resolve at the next epoch's preparation (or sooner, with `resolve`). */
  add(pubkey: Uint8Array): void {
    this.pubkeys.set(toHex(pubkey), pubkey);
    this.version++;
  }

  /** Duties of this key are ignored until `release`. */
  hold(pubkeyHex: string): void {
    this.held.add(pubkeyHex);
    this.generation++;
  }

  release(pubkeyHex: string): void {
    this.held.delete(pubkeyHex);
    this.generation++;
  }

  /**
   * Duties fetched so far are fetched again (and their subnet subscriptions sent with them), as
   * after a change of keys: a beacon node that comes back may have lost them.
   */
  refetchDuties(): void {
    this.generation++;
  }

  /** Forgets a key: duties naming it are ignored from now on. */
  remove(pubkeyHex: string): void {
    this.held.delete(pubkeyHex);
    this.pubkeys.delete(pubkeyHex);
    this.indexByPubkey.delete(pubkeyHex);
    this.version++;
    this.generation++;
  }

  /** Indices of the keys the beacon node knows, ascending. */
  get indices(): number[] {
    return [...this.indexByPubkey.values()].sort((a, b) => a - b);
  }

  /** The index of a key, if the beacon node knows it. */
  indexOf(pubkeyHex: string): number | undefined {
    return this.indexByPubkey.get(pubkeyHex);
  }

  /** The resolved keys with their indices. */
  entries(): [pubkeyHex: string, index: number][] {
    return [...this.indexByPubkey.entries()];
  }

  get allResolved(): boolean {
    return this.indexByPubkey.size === this.pubkeys.size;
  }

  /** Whether `pubkey` is one of ours, known at `index` and not held (duties naming anything else are ignored). */
  owns(pubkey: Uint8Array, index: number): boolean {
    const hex = toHex(pubkey);
    return this.indexByPubkey.get(hex) === index && !this.held.has(hex);
  }

  /**
   * Asks the beacon node (getValidators on head) for the keys not resolved yet.
   * Returns the number of newly resolved keys; keys unknown to the node stay unresolved.
   */
  async resolve(api: ValidatorBeaconApi): Promise<number> {
    const missing = [...this.pubkeys.entries()].filter(([hex]) => !this.indexByPubkey.has(hex)).map(([, pk]) => pk);
    if (missing.length === 0) return 0;
    const wanted = new Set(missing.map((pk) => toHex(pk)));
    let added = 0;
    for (const v of await api.getValidators(missing)) {
      const key = toHex(v.pubkey);
      // still wanted: a key removed while the request ran stays out
      if (wanted.has(key) && this.pubkeys.has(key) && !this.indexByPubkey.has(key)) {
        this.indexByPubkey.set(key, v.index);
        added++;
      }
    }
    if (added > 0) this.generation++;
    return added;
  }
}
