import type {BeaconConfig} from "@lodestar/config";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  computeEpochAtSlot,
  DataAvailabilityStatus,
  ExecutionPayloadStatus,
  processSlots,
  stateTransition,
} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import type {ForkChoice} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import {advancedStateKey, type StateCache} from "./stateCache.ts";

const log = getLogger("chain");

export interface RegenDeps {
  config: BeaconConfig;
  /** a getter: fork choice is built after the regenerator (it asks it for justified states) */
  forkChoice: () => ForkChoice;
  stateCache: StateCache;
  getBlock: (root: Uint8Array) => Promise<SignedBeaconBlock | null>;
  /** the finalized-history fallback: the canonical state at `slot`, from the archive with replay */
  getArchivedState: (slot: number) => Promise<CachedBeaconStateAllForks | null>;
  /** slot of the oldest block fork choice holds (the finalized block after pruning) */
  anchorSlot: () => number;
}

/**
 * Produces any state the node still has: post-states of blocks in fork choice (from the
 * cache, or by replaying blocks from the nearest cached ancestor), states advanced through
 * empty slots, and canonical states by slot.
 */
export class StateRegenerator {
  private readonly deps: RegenDeps;

  constructor(deps: RegenDeps) {
    this.deps = deps;
  }

  /** The post-state of a block known to fork choice, or null. */
  async getPostState(blockRootHex: string): Promise<CachedBeaconStateAllForks | null> {
    const cached = this.deps.stateCache.get(blockRootHex);
    if (cached) return cached;
    if (!this.deps.forkChoice().hasBlock(blockRootHex)) return null;

    // Walk back to the nearest ancestor whose state is cached, then replay forward.
    const toReplay: string[] = [];
    let base: CachedBeaconStateAllForks | undefined;
    let baseKey = "";
    for (const ancestor of this.deps.forkChoice().iterateAncestors(blockRootHex)) {
      base = this.deps.stateCache.get(ancestor.blockRoot);
      if (base) {
        baseKey = ancestor.blockRoot;
        break;
      }
      toReplay.push(ancestor.blockRoot);
    }
    if (!base) throw new Error(`no cached ancestor state to regenerate the state of block ${blockRootHex}`);
    log.debug({block: blockRootHex, blocks: toReplay.length}, "regenerating state by replay");
    let state = base;
    for (const root of toReplay.reverse()) {
      const block = await this.deps.getBlock(fromHex(root));
      if (!block) throw new Error(`block ${root} is in fork choice but not in the database`);
      state = replayBlock(state, block);
      this.deps.stateCache.add(root, state, baseKey);
      baseKey = root;
    }
    return state;
  }

  /** The post-state of `blockRootHex` advanced through empty slots to `slot` (cached at epoch boundaries). */
  async getStateAtSlot(blockRootHex: string, slot: number): Promise<CachedBeaconStateAllForks | null> {
    const post = await this.getPostState(blockRootHex);
    if (!post) return null;
    return this.advance(blockRootHex, post, slot);
  }

  /** The state of `blockRootHex`'s chain at `slot` from the cache alone (advanced here if needed), or null: nothing is replayed. */
  cachedStateAt(blockRootHex: string, slot: number): CachedBeaconStateAllForks | null {
    const state = this.deps.stateCache.get(advancedStateKey(blockRootHex, slot)) ?? this.deps.stateCache.get(blockRootHex);
    return state ? this.advance(blockRootHex, state, slot) : null;
  }

  /** The cache key of the state a block at `slot` on `parentHex` was built on: the parent's state advanced to `slot` when it is cached, else its post-state. */
  preStateKey(parentHex: string, slot: number): string {
    const key = advancedStateKey(parentHex, slot);
    return this.deps.stateCache.has(key) ? key : parentHex;
  }

  /**
   * `state` (the post-state of `blockRootHex` or one advanced from it) advanced to `slot`,
   * starting from the latest epoch-start state of the same block already cached on the way, so
   * an epoch transition done once (by the epoch advance, or for duties) is not done again.
   */
  advance(blockRootHex: string, state: CachedBeaconStateAllForks, slot: number): CachedBeaconStateAllForks {
    if (state.slot >= slot) return state;
    const key = advancedStateKey(blockRootHex, slot);
    const cached = this.deps.stateCache.get(key);
    if (cached) return cached;
    const from = this.latestEpochStartCached(blockRootHex, state.slot, slot) ?? state;
    const advanced = processSlots(from.clone(true), slot, {dontTransferCache: true});
    advanced.commit();
    // Epoch-boundary states are asked for again and again (duties, attestation checks, justified balances).
    if (slot % SLOTS_PER_EPOCH === 0 || computeEpochAtSlot(slot) !== computeEpochAtSlot(state.slot)) {
      this.deps.stateCache.add(key, advanced, blockRootHex);
    }
    return advanced;
  }

  /** The cached state of `blockRootHex` advanced to the latest epoch start in (afterSlot, slot], if any. */
  private latestEpochStartCached(blockRootHex: string, afterSlot: number, slot: number): CachedBeaconStateAllForks | undefined {
    for (let epochStart = slot - (slot % SLOTS_PER_EPOCH); epochStart > afterSlot; epochStart -= SLOTS_PER_EPOCH) {
      const state = this.deps.stateCache.get(advancedStateKey(blockRootHex, epochStart));
      if (state) return state;
    }
    return undefined;
  }

  /**
   * The state at `slot` on the chain of `headRootHex`: the post-state of the last block at or
   * before `slot`, advanced to `slot`. Before the fork choice anchor, from the archive.
   */
  async getCanonicalStateAtSlot(headRootHex: string, slot: number): Promise<CachedBeaconStateAllForks | null> {
    const anchorSlot = this.deps.anchorSlot();
    if (slot >= anchorSlot) {
      const rootAtSlot = this.deps.forkChoice().getAncestor(headRootHex, slot);
      if (!rootAtSlot) return null;
      return this.getStateAtSlot(rootAtSlot, slot);
    }
    return this.deps.getArchivedState(slot);
  }

}

/** Options for blocks verified earlier: nothing checked again, payload and data taken as valid. */
export const TRUSTED_TRANSITION = {
  verifyStateRoot: false,
  verifyProposer: false,
  verifySignatures: false,
  dontTransferCache: true,
  executionPayloadStatus: ExecutionPayloadStatus.valid,
  dataAvailabilityStatus: DataAvailabilityStatus.Available,
};

/** Applies a block we already verified once (from our own store): no signature or root checks. */
export function replayBlock(state: CachedBeaconStateAllForks, block: SignedBeaconBlock): CachedBeaconStateAllForks {
  const post = stateTransition(state, block, TRUSTED_TRANSITION);
  post.commit();
  return post;
}

