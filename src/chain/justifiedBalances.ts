import {type CachedBeaconStateAllForks, computeStartSlotAtEpoch, getEffectiveBalanceIncrementsZeroInactive} from "@lodestar/state-transition";
import type {CheckpointHex} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";

const log = getLogger("chain");

export interface JustifiedBalancesDeps {
  /** the state of `root`'s chain at `slot` from the cache alone, or null */
  cachedStateAt: (blockRootHex: string, slot: number) => CachedBeaconStateAllForks | null;
  /** the same, regenerated (replayed from a cached ancestor) when not cached; null for an unknown block */
  getStateAtSlot: (blockRootHex: string, slot: number) => Promise<CachedBeaconStateAllForks | null>;
  /** the last resort, when the checkpoint state cannot be had at all */
  getHeadState: () => CachedBeaconStateAllForks;
}

/**
 * The balances fork choice weighs votes with: the effective balances (in increments, 0 for
 * inactive and slashed validators) of the justified checkpoint's state (fork-choice.md get_weight:
 * store.checkpoint_states[store.justified_checkpoint]). Fork choice asks for them synchronously
 * when its justified checkpoint has changed; `prepare` regenerates that state beforehand (the chain
 * calls it before each head computation), so the answer is the checkpoint state's even when the
 * state had left the cache.
 */
export class JustifiedBalances {
  private readonly deps: JustifiedBalancesDeps;
  private prepared: {key: string; balances: number[]} | null = null;
  /** the checkpoint whose state could not be regenerated (not tried again at every head computation) */
  private failedKey: string | null = null;

  constructor(deps: JustifiedBalancesDeps) {
    this.deps = deps;
  }

  /** Whether the balances of `checkpoint` are at hand (`prepare` has nothing to do). */
  isPrepared(checkpoint: CheckpointHex): boolean {
    const key = keyOf(checkpoint);
    return this.prepared?.key === key || this.failedKey === key;
  }

  /** Regenerates the checkpoint state of `checkpoint` if need be and keeps its balances. */
  async prepare(checkpoint: CheckpointHex): Promise<void> {
    const key = keyOf(checkpoint);
    if (this.prepared?.key === key) return;
    let state: CachedBeaconStateAllForks | null;
    try {
      state = await this.deps.getStateAtSlot(checkpoint.root, computeStartSlotAtEpoch(checkpoint.epoch));
    } catch (e) {
      log.warn({checkpoint, err: (e as Error).message}, "could not regenerate the justified checkpoint state");
      state = null;
    }
    if (state) this.prepared = {key, balances: balancesOf(state)};
    else this.failedKey = key;
  }

  /** The balances of `checkpoint`'s state (fork choice's getter). */
  get(checkpoint: CheckpointHex): number[] {
    const key = keyOf(checkpoint);
    if (this.prepared?.key === key) return this.prepared.balances;
    const cached = this.deps.cachedStateAt(checkpoint.root, computeStartSlotAtEpoch(checkpoint.epoch));
    if (cached) {
      this.prepared = {key, balances: balancesOf(cached)};
      return this.prepared.balances;
    }
    // only when `prepare` failed (the checkpoint block's state cannot be rebuilt): say so
    log.error({checkpoint}, "justified checkpoint state not available (see the regeneration error): weighing votes with the head state's balances");
    return balancesOf(this.deps.getHeadState());
  }
}

function keyOf(checkpoint: CheckpointHex): string {
  return `${checkpoint.epoch}:${checkpoint.root}`;
}

function balancesOf(state: CachedBeaconStateAllForks): number[] {
  return Array.from(getEffectiveBalanceIncrementsZeroInactive(state));
}
