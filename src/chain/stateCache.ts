import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {fullStateBytes, stateDelta} from "./stateCost.ts";

interface CacheEntry {
  state: CachedBeaconStateAllForks;
  /** what keeping this state adds to the cache: its full cost, or what it adds beside its base */
  bytes: number;
  /** what this state would cost alone */
  fullBytes: number;
  /** the cached state it was made from (it shares that state's unchanged subtrees), or null */
  base: string | null;
}

/**
 * Recently used states, keyed by a string (a block root for post-states, `root@slot` for
 * states advanced through empty slots), within a budget in bytes. A state made from a cached
 * state (by a block, or by empty slots) is charged only for what it does not share with it
 * (stateCost.ts); when that base state leaves, the states made from it are charged again
 * against the base's own base, or in full. Least recently used entries go first once the
 * cache is over budget; `pinned` keys (the head, the justified and finalized states) are never
 * evicted, and count in the budget.
 */
export class StateCache {
  private readonly entries = new Map<string, CacheEntry>();
  /** base key → keys of the cached states made from it */
  private readonly derived = new Map<string, Set<string>>();
  private readonly pinned = new Set<string>();
  /** the key last set in `entries`, which is its newest entry (null when unknown) */
  private newestKey: string | null = null;
  private readonly maxBytes: number;
  private totalBytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): CachedBeaconStateAllForks | undefined {
    const entry = this.entries.get(key);
    // moved to the newest end, unless it is there already: the head state is asked for many times
    // a request, and each delete and set leaves a hole in the Map's table, which is then rebuilt
    if (entry && key !== this.newestKey) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.newestKey = key;
    }
    return entry?.state;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Keeps `state` under `key`; `baseKey` names the cached state it was made from, if any. */
  add(key: string, state: CachedBeaconStateAllForks, baseKey?: string): void {
    if (this.entries.get(key)?.state === state) {
      this.get(key);
      return;
    }
    this.remove(key);
    const base = baseKey !== undefined && baseKey !== key ? this.entries.get(baseKey) : undefined;
    const entry: CacheEntry = base ? {state, ...this.chargeAgainst(base, state), base: baseKey!} : fullEntry(state);
    this.entries.set(key, entry);
    this.newestKey = key;
    if (entry.base !== null) this.derivedFrom(entry.base).add(key);
    this.totalBytes += entry.bytes;
    this.evict();
  }

  /** Only these keys are protected from eviction from now on. */
  setPinned(keys: string[]): void {
    this.pinned.clear();
    for (const key of keys) this.pinned.add(key);
    this.evict();
  }

  delete(key: string): void {
    this.remove(key);
  }

  /** Drops every entry whose key fails the test (e.g. states of pruned blocks). */
  retain(keep: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) {
      if (!keep(key) && !this.pinned.has(key)) this.remove(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The estimated memory the cached states hold together, in bytes. */
  get bytes(): number {
    return this.totalBytes;
  }

  private chargeAgainst(base: CacheEntry, state: CachedBeaconStateAllForks): {bytes: number; fullBytes: number} {
    if (base.state === state) return {bytes: 0, fullBytes: base.fullBytes};
    return stateDelta(base.state, base.fullBytes, state);
  }

  private derivedFrom(key: string): Set<string> {
    let keys = this.derived.get(key);
    if (!keys) this.derived.set(key, (keys = new Set()));
    return keys;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (key === this.newestKey) this.newestKey = null;
    this.totalBytes -= entry.bytes;
    if (entry.base !== null) this.derived.get(entry.base)?.delete(key);
    const orphans = this.derived.get(key);
    this.derived.delete(key);
    // What the removed state shared with the states made from it is theirs alone now.
    const newBase = entry.base !== null ? this.entries.get(entry.base) : undefined;
    for (const orphanKey of orphans ?? []) {
      const orphan = this.entries.get(orphanKey)!;
      this.totalBytes -= orphan.bytes;
      if (newBase) {
        orphan.bytes = this.chargeAgainst(newBase, orphan.state).bytes;
        orphan.base = entry.base;
        this.derivedFrom(entry.base!).add(orphanKey);
      } else {
        orphan.bytes = orphan.fullBytes;
        orphan.base = null;
      }
      this.totalBytes += orphan.bytes;
    }
  }

  private evict(): void {
    if (this.totalBytes <= this.maxBytes) return;
    for (const key of [...this.entries.keys()]) {
      if (this.totalBytes <= this.maxBytes) break;
      if (!this.pinned.has(key)) this.remove(key);
    }
  }
}

function fullEntry(state: CachedBeaconStateAllForks): CacheEntry {
  const bytes = fullStateBytes(state);
  return {state, bytes, fullBytes: bytes, base: null};
}

export function advancedStateKey(blockRootHex: string, slot: number): string {
  return `${blockRootHex}@${slot}`;
}

/** The block root of a state's key: the key itself for a post-state, the part before `@` for an advanced one. */
export function blockRootOfStateKey(key: string): string {
  const at = key.indexOf("@");
  return at === -1 ? key : key.slice(0, at);
}
