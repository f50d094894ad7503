import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";

/**
 * Recently used states, keyed by a string (a block root for post-states, `root@slot` for
 * states advanced through empty slots). Least recently used entries go first once the cache
 * is full; `pinned` keys (the head, the justified and finalized states) are never evicted.
 */
export class StateCache {
  private readonly states = new Map<string, CachedBeaconStateAllForks>();
  private readonly pinned = new Set<string>();

  private readonly maxStates: number;

  constructor(maxStates: number) {
    this.maxStates = maxStates;
  }

  get(key: string): CachedBeaconStateAllForks | undefined {
    const state = this.states.get(key);
    if (state) {
      this.states.delete(key);
      this.states.set(key, state);
    }
    return state;
  }

  has(key: string): boolean {
    return this.states.has(key);
  }

  add(key: string, state: CachedBeaconStateAllForks): void {
    this.states.delete(key);
    this.states.set(key, state);
    this.evict();
  }

  /** Only these keys are protected from eviction from now on. */
  setPinned(keys: string[]): void {
    this.pinned.clear();
    for (const key of keys) this.pinned.add(key);
  }

  delete(key: string): void {
    this.states.delete(key);
  }

  /** Drops every entry whose key fails the test (e.g. states of pruned blocks). */
  retain(keep: (key: string) => boolean): void {
    for (const key of [...this.states.keys()]) {
      if (!keep(key) && !this.pinned.has(key)) this.states.delete(key);
    }
  }

  get size(): number {
    return this.states.size;
  }

  private evict(): void {
    if (this.states.size <= this.maxStates) return;
    for (const key of this.states.keys()) {
      if (this.states.size <= this.maxStates) break;
      if (!this.pinned.has(key)) this.states.delete(key);
    }
  }
}

export function advancedStateKey(blockRootHex: string, slot: number): string {
  return `${blockRootHex}@${slot}`;
}
