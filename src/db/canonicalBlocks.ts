import type {Root, Slot} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {decodeUint64BE, encodeUint64BE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";

export interface SlotRoot {
  slot: Slot;
  blockRoot: Root;
}

/**
 * slot → block root of the finalized canonical chain, so finalized history can be served by slot.
 * Empty slots have no entry: `getAtOrBefore` finds the block whose post-state a slot builds on.
 */
export class CanonicalBlockIndex extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.canonicalBlockRoot);
  }

  /** The canonical block root at exactly `slot`, or null (empty or unknown slot). */
  get(slot: Slot): Promise<Root | null> {
    return this.getRaw(encodeUint64BE(slot));
  }

  /** The canonical block at the highest indexed slot ≤ `slot`, or null. */
  async getAtOrBefore(slot: Slot): Promise<SlotRoot | null> {
    const entry = await this.lastEntry(encodeUint64BE(Math.min(slot, Number.MAX_SAFE_INTEGER)));
    return entry ? {slot: decodeUint64BE(entry.key), blockRoot: entry.value} : null;
  }

  /** Entries with `fromSlot ≤ slot ≤ toSlot`, ascending. */
  async getRange(fromSlot: Slot, toSlot: Slot): Promise<SlotRoot[]> {
    const entries = await this.entries({gte: encodeUint64BE(fromSlot), lte: encodeUint64BE(toSlot)});
    return entries.map((e) => ({slot: decodeUint64BE(e.key), blockRoot: e.value}));
  }

  put(slot: Slot, blockRoot: Root): Promise<void> {
    return this.write([this.putOp(slot, blockRoot)]);
  }

  putOp(slot: Slot, blockRoot: Root): DbOp {
    return this.putRawOp(encodeUint64BE(slot), blockRoot);
  }

  deleteOp(slot: Slot): DbOp {
    return this.deleteRawOp(encodeUint64BE(slot));
  }
}
