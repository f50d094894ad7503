import type {Root, Slot} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {decodeUint64BE, encodeUint64BE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";
import type {SlotRoot} from "./canonicalBlocks.ts";
import type {ExecutionValidity} from "../forkchoice/types.ts";

/** what the engine has said of the block's payload, as stored: nothing for valid (or no payload), the only value older data dirs hold */
const STORED_VALIDITY: Record<ExecutionValidity, Uint8Array> = {valid: new Uint8Array(0), optimistic: Uint8Array.of(1), invalid: Uint8Array.of(2)};

export interface HotBlock extends SlotRoot {
  validity: ExecutionValidity;
}

/**
 * The blocks imported since the last finalized checkpoint, in slot order, each with what the
 * engine has said of its payload. At start-up the node re-imports them on top of the latest
 * archived finalized state, optimistic ones as optimistic, invalid ones not at all; at
 * finalization they leave this index (canonical ones move to the canonical index, abandoned
 * ones are deleted).
 */
export class HotBlockIndex extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.hotBlock);
  }

  putOp(slot: Slot, blockRoot: Root, validity: ExecutionValidity = "valid"): DbOp {
    return this.putRawOp(key(slot, blockRoot), STORED_VALIDITY[validity]);
  }

  deleteOp(slot: Slot, blockRoot: Root): DbOp {
    return this.deleteRawOp(key(slot, blockRoot));
  }

  /** All entries, ascending by slot. */
  async getAll(): Promise<HotBlock[]> {
    return (await this.entries()).map(({key: k, value}) => ({slot: decodeUint64BE(k.subarray(0, 8)), blockRoot: k.slice(8), validity: validityOf(value)}));
  }
}

function validityOf(stored: Uint8Array): ExecutionValidity {
  if (stored.length === 0) return "valid";
  if (stored[0] === STORED_VALIDITY.optimistic[0]) return "optimistic";
  if (stored[0] === STORED_VALIDITY.invalid[0]) return "invalid";
  throw new Error(`unknown stored payload validity ${stored[0]}`);
}

function key(slot: Slot, blockRoot: Root): Uint8Array {
  const out = new Uint8Array(40);
  out.set(encodeUint64BE(slot));
  out.set(blockRoot, 8);
  return out;
}
