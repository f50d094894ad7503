import type {Root, Slot} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {decodeUint64BE, encodeUint64BE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";
import type {SlotRoot} from "./canonicalBlocks.ts";

const EMPTY = new Uint8Array(0);

/**
 * The blocks imported since the last finalized checkpoint, in slot order. At start-up the
 * node re-imports them on top of the latest archived finalized state; at finalization they
 * leave this index (canonical ones move to the canonical index, abandoned ones are deleted).
 */
export class HotBlockIndex extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.hotBlock);
  }

  putOp(slot: Slot, blockRoot: Root): DbOp {
    return this.putRawOp(key(slot, blockRoot), EMPTY);
  }

  deleteOp(slot: Slot, blockRoot: Root): DbOp {
    return this.deleteRawOp(key(slot, blockRoot));
  }

  /** All entries, ascending by slot. */
  async getAll(): Promise<SlotRoot[]> {
    return (await this.keys()).map((k) => ({slot: decodeUint64BE(k.subarray(0, 8)), blockRoot: k.slice(8)}));
  }
}

function key(slot: Slot, blockRoot: Root): Uint8Array {
  const out = new Uint8Array(40);
  out.set(encodeUint64BE(slot));
  out.set(blockRoot, 8);
  return out;
}
