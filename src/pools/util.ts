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
