import type {BeaconConfig} from "@lodestar/config";
import {type CachedBeaconStateAllForks, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import type {ForkChoice} from "../forkchoice/index.ts";
import {StateRegenerator} from "./regen.ts";
import {StateCache} from "./stateCache.ts";

const DEFAULT_STATE_CACHE_BYTES = 2048 * 1024 * 1024;

export interface HeadStatesDeps {
  config: BeaconConfig;
  /** a getter: fork choice is built after the states (it asks them for justified states) */
  forkChoice: () => ForkChoice;
  /** the head's block root, as the chain holds it now */
  headRoot: () => string;
  /** the anchor's block root and post-state: the first state cached */
  anchor: {root: string; state: CachedBeaconStateAllForks};
  /** slot of the oldest block fork choice holds (the finalized block after pruning) */
  anchorSlot: () => number;
  getBlock: (root: Uint8Array) => Promise<SignedBeaconBlock | null>;
  /** the finalized-history fallback: the canonical state at `slot`, from the archive with replay */
  getArchivedState: (slot: number) => Promise<CachedBeaconStateAllForks | null>;
  /** the state cache's budget, in bytes (stateCost.ts); 2 GiB if not given */
  cacheBytes?: number;
}

/**
 * The chain's states: the cache (stateCache.ts, in bytes) and the regenerator over it (regen.ts),
 * and the states read on the head: its post-state (always cached, pinned with the checkpoints'),
 * and that state advanced through empty slots to an epoch or a slot.
 */
export class HeadStates {
  readonly cache: StateCache;
  readonly regen: StateRegenerator;
  private readonly headRoot: () => string;

  constructor(deps: HeadStatesDeps) {
    this.headRoot = deps.headRoot;
    this.cache = new StateCache(deps.cacheBytes ?? DEFAULT_STATE_CACHE_BYTES);
    this.cache.add(deps.anchor.root, deps.anchor.state);
    this.cache.setPinned([deps.anchor.root]);
    const {config, forkChoice, getBlock, getArchivedState, anchorSlot} = deps;
    this.regen = new StateRegenerator({config, forkChoice, stateCache: this.cache, getBlock, getArchivedState, anchorSlot});
  }

  /** The head's post-state: never evicted (pinned), so always at hand. */
  headState(): CachedBeaconStateAllForks {
    const state = this.cache.get(this.headRoot());
    if (!state) throw new Error(`head state ${this.headRoot()} is not cached`);
    return state;
  }

  /** The head state, advanced to the start of `epoch` if the head is before it. */
  async atEpoch(epoch: number): Promise<CachedBeaconStateAllForks> {
    const head = this.headState();
    const slot = computeStartSlotAtEpoch(epoch);
    return slot <= head.slot ? head : this.regen.advance(this.headRoot(), head, slot);
  }

  /** The head state, advanced to `slot` if the head is before it (what an attestation at `slot` votes on). */
  atSlot(slot: number): CachedBeaconStateAllForks {
    const head = this.headState();
    return head.slot < slot ? this.regen.advance(this.headRoot(), head, slot) : head;
  }

  /** Brings `blockRoot`'s post-state back into the cache (a branch unused for a while may have left it). */
  async ensureCached(blockRoot: string): Promise<void> {
    if (!this.cache.has(blockRoot)) await this.regen.getPostState(blockRoot);
  }

  /** Keeps exactly these states from eviction (the head's and the checkpoints'). */
  pin(roots: string[]): void {
    this.cache.setPinned(roots);
  }
}
