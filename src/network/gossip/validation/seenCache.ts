/**
 * Keys seen per slot (or epoch): the first-seen rules of gossip validation. Only messages that
 * passed their slot range checks are added, and `prune` drops the slots they can no longer
 * reach; at most `maxSlots` slots are kept whatever happens, the oldest dropped first.
 */
export class SeenBySlot {
  private readonly bySlot = new Map<number, Set<string>>();
  private readonly maxSlots: number;

  constructor(maxSlots: number) {
    this.maxSlots = maxSlots;
  }

  has(slot: number, key: string): boolean {
    return this.bySlot.get(slot)?.has(key) ?? false;
  }

  /** Adds the key; false when it was there already. */
  add(slot: number, key: string): boolean {
    let keys = this.bySlot.get(slot);
    if (!keys) {
      keys = new Set();
      this.bySlot.set(slot, keys);
      if (this.bySlot.size > this.maxSlots) this.bySlot.delete(Math.min(...this.bySlot.keys()));
    }
    if (keys.has(key)) return false;
    keys.add(key);
    return true;
  }

  /** Drops every slot below `minSlot`. */
  prune(minSlot: number): void {
    for (const slot of this.bySlot.keys()) if (slot < minSlot) this.bySlot.delete(slot);
  }

  get slotCount(): number {
    return this.bySlot.size;
  }
}
