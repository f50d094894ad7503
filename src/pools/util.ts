/** Small map helpers shared by the pools. */

export function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

/** Adds `member` to the set kept under `key`; false when it was there already. */
export function markSeen<K, T>(seen: Map<K, Set<T>>, key: K, member: T): boolean {
  const set = getOrCreate(seen, key, () => new Set<T>());
  if (set.has(member)) return false;
  set.add(member);
  return true;
}

/** Deletes the entries whose numeric key is below `min`. */
export function deleteBelow(map: Map<number, unknown>, min: number): void {
  for (const key of map.keys()) if (key < min) map.delete(key);
}

/**
 * Submissions being checked now, by what they carry: a submission identical to one in flight
 * (the same aggregate, sent by each of its aggregators, often in one request) waits until that
 * one is in the pool or refused, and is then checked itself, where it mostly ends at once as
 * adding nothing new (the spec's [IGNORE] of an aggregate whose bits were seen) instead of
 * having its signatures checked beside the first's. Identical submissions go one after another,
 * so a bad first one is followed by one check of the next, not of all the others at once.
 * Waiting only orders the checks: each submission is still checked in full, or ignored as the
 * spec says.
 */
export class SubmissionsInFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  /** Runs `submit` once the last submission under `key` in flight has ended, however it ended. */
  async after<T>(key: string, submit: () => Promise<T>): Promise<T> {
    const ahead = this.running.get(key);
    const mine = ahead ? ahead.then(ignore, ignore).then(submit) : submit();
    this.running.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.running.get(key) === mine) this.running.delete(key);
    }
  }
}

function ignore(): void {}
