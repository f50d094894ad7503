import type {ChainForkConfig} from "@lodestar/config";
import type {BeaconStateAllForks} from "@lodestar/state-transition";
import type {Root, Slot} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {decodeUint64BE, encodeUint64BE, readUint64LE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";
import {DbDamagedError} from "./damage.ts";
import {toRootHex} from "@lodestar/utils";

/** BeaconState SSZ: genesis_time (8) and genesis_validators_root (32) come before the slot. */
const STATE_SLOT_OFFSET = 8 + 32;

/** The slot of a serialized BeaconState, read without deserializing it. */
export function slotOfStateBytes(bytes: Uint8Array): Slot {
  return readUint64LE(bytes, STATE_SLOT_OFFSET);
}

/** state root → slot of the archived state with that root. */
class StateRootIndex extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.stateRootIndex);
  }

  async get(stateRoot: Root): Promise<Slot | null> {
    const bytes = await this.getRaw(stateRoot);
    return bytes ? decodeUint64BE(bytes) : null;
  }

  putOp(stateRoot: Root, slot: Slot): DbOp {
    return this.putRawOp(stateRoot, encodeUint64BE(slot));
  }

  deleteOp(stateRoot: Root): DbOp {
    return this.deleteRawOp(stateRoot);
  }

  /** Delete ops of the index entries pointing at any of `slots`. */
  async deleteOpsForSlots(slots: ReadonlySet<Slot>): Promise<DbOp[]> {
    const entries = await this.entries();
    return entries.filter((e) => slots.has(decodeUint64BE(e.value))).map((e) => this.deleteOp(e.key));
  }
}

/**
 * Finalized BeaconStates by slot (SSZ), with a state-root index. Reads come as a tree-backed
 * view (`get*`) or as the SSZ bytes (`getBytes*`), whichever the caller wants to load.
 */
export class StateArchiveRepository extends Repository {
  private readonly config: ChainForkConfig;
  private readonly rootIndex: StateRootIndex;

  constructor(db: LevelDb, config: ChainForkConfig) {
    super(db, Bucket.stateArchive);
    this.config = config;
    this.rootIndex = new StateRootIndex(db);
  }

  async get(slot: Slot): Promise<BeaconStateAllForks | null> {
    return this.toView(await this.getBytes(slot));
  }

  getBytes(slot: Slot): Promise<Uint8Array | null> {
    return this.getRaw(encodeUint64BE(slot));
  }

  /** The archived state with the highest slot. */
  async getLatest(): Promise<BeaconStateAllForks | null> {
    return this.toView(await this.getLatestBytes());
  }

  async getLatestBytes(): Promise<Uint8Array | null> {
    return (await this.lastEntry())?.value ?? null;
  }

  /**
   * The archived state with the highest slot, checked whole: its hash_tree_root must be the root
   * it was archived under (the state root index), else DbDamagedError names its key.
   */
  async getLatestVerified(): Promise<BeaconStateAllForks | null> {
    const bytes = await this.getLatestBytes();
    if (bytes === null) return null;
    let state: BeaconStateAllForks;
    try {
      state = this.deserialize(bytes);
    } catch (e) {
      throw new DbDamagedError(this.db.location, [`the latest archived finalized state does not decode (${(e as Error).message}): its bytes are damaged`]);
    }
    const root = state.hashTreeRoot();
    if ((await this.rootIndex.get(root)) !== state.slot) {
      throw new DbDamagedError(this.db.location, [`the finalized state archived at slot ${state.slot} (key 0x${Buffer.from(encodeUint64BE(state.slot)).toString("hex")}) hashes to ${toRootHex(root)}, a root it was not archived under: its bytes are damaged`]);
    }
    return state;
  }

  /** The archived state with the highest slot ≤ `slot`. */
  async getAtOrBefore(slot: Slot): Promise<BeaconStateAllForks | null> {
    return this.toView(await this.getBytesAtOrBefore(slot));
  }

  async getBytesAtOrBefore(slot: Slot): Promise<Uint8Array | null> {
    return (await this.lastEntry(encodeUint64BE(Math.min(slot, Number.MAX_SAFE_INTEGER))))?.value ?? null;
  }

  async getByRoot(stateRoot: Root): Promise<BeaconStateAllForks | null> {
    return this.toView(await this.getBytesByRoot(stateRoot));
  }

  async getBytesByRoot(stateRoot: Root): Promise<Uint8Array | null> {
    const slot = await this.rootIndex.get(stateRoot);
    return slot === null ? null : this.getBytes(slot);
  }

  /** The slot of the archived state with this root, or null. */
  getSlotByRoot(stateRoot: Root): Promise<Slot | null> {
    return this.rootIndex.get(stateRoot);
  }

  /** Slots of the archived states, ascending. */
  async getSlots(): Promise<Slot[]> {
    return (await this.keys()).map(decodeUint64BE);
  }

  put(state: BeaconStateAllForks): Promise<void> {
    return this.write(this.putOp(state));
  }

  /** Ops storing the state and its root index entry (hashes the state if its root is not cached). */
  putOp(state: BeaconStateAllForks): DbOp[] {
    return this.putBytesOp(state.hashTreeRoot(), state.serialize());
  }

  /** For callers that already hold the SSZ bytes and the state root. */
  putBytesOp(stateRoot: Root, bytes: Uint8Array): DbOp[] {
    const slot = slotOfStateBytes(bytes);
    return [this.putRawOp(encodeUint64BE(slot), bytes), this.rootIndex.putOp(stateRoot, slot)];
  }

  deleteOp(slot: Slot, stateRoot: Root): DbOp[] {
    return [this.deleteRawOp(encodeUint64BE(slot)), this.rootIndex.deleteOp(stateRoot)];
  }

  /**
   * Ops deleting the archived states below `belowSlot`, except one state per window of
   * `keepEvery` slots: in each window [k·keepEvery, (k+1)·keepEvery) the lowest archived state stays.
   */
  async pruneOps(belowSlot: Slot, keepEvery: number): Promise<DbOp[]> {
    return this.deleteSlotsOps(await this.prunableSlots(belowSlot, keepEvery));
  }

  /** Applies `pruneOps` in one batch; returns how many states were deleted. */
  async prune(belowSlot: Slot, keepEvery: number): Promise<number> {
    const slots = await this.prunableSlots(belowSlot, keepEvery);
    await this.write(await this.deleteSlotsOps(slots));
    return slots.size;
  }

  /** SSZ bytes to a tree-backed state of the fork active at the slot written in the bytes. */
  deserialize(bytes: Uint8Array): BeaconStateAllForks {
    return this.config.getForkTypes(slotOfStateBytes(bytes)).BeaconState.deserializeToViewDU(bytes) as BeaconStateAllForks;
  }

  private async prunableSlots(belowSlot: Slot, keepEvery: number): Promise<Set<Slot>> {
    if (!Number.isSafeInteger(keepEvery) || keepEvery < 1) throw new Error(`keepEvery must be a positive integer, got ${keepEvery}`);
    const slots = (await this.keys({lt: encodeUint64BE(belowSlot)})).map(decodeUint64BE);
    const doomed = new Set<Slot>();
    let lastWindow = -1;
    for (const slot of slots) {
      const window = Math.floor(slot / keepEvery);
      if (window === lastWindow) doomed.add(slot);
      lastWindow = window;
    }
    return doomed;
  }

  private async deleteSlotsOps(slots: ReadonlySet<Slot>): Promise<DbOp[]> {
    if (slots.size === 0) return [];
    const stateOps = [...slots].map((slot) => this.deleteRawOp(encodeUint64BE(slot)));
    return [...stateOps, ...(await this.rootIndex.deleteOpsForSlots(slots))];
  }

  private toView(bytes: Uint8Array | null): BeaconStateAllForks | null {
    return bytes ? this.deserialize(bytes) : null;
  }
}
