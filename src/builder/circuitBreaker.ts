import {SLOTS_PER_HISTORICAL_ROOT} from "@lodestar/params";
import {type CachedBeaconStateAllForks, computeEpochAtSlot} from "@lodestar/state-transition";
import {getLogger} from "../log.ts";

const log = getLogger("builder");

export interface CircuitBreakerOptions {
  /** more missed slots than this in the window trips the breaker (`--builder-fault-slots`) */
  allowedFaults: number;
  /** how many slots before the proposal are inspected (`--builder-fault-window`) */
  faultWindow: number;
  /** finality further behind than this many epochs trips the breaker (Lighthouse's default, 3) */
  maxEpochsSinceFinality: number;
}

/** Lodestar's defaults: a window of 32 slots with 8 faults allowed; Lighthouse's finality lag of 3 epochs. */
export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerOptions = {allowedFaults: 8, faultWindow: 32, maxEpochsSinceFinality: 3};

/**
 * The slots of the window before `preState.slot` without a block on the proposal's chain: a slot
 * whose block root repeats the previous slot's (the state's block roots, as Teku reads them). The
 * window stops at genesis; it is at most SLOTS_PER_HISTORICAL_ROOT long.
 */
export function missedSlots(preState: CachedBeaconStateAllForks, window: number): number {
  const slot = preState.slot;
  const from = Math.max(1, slot - Math.min(window, SLOTS_PER_HISTORICAL_ROOT - 1));
  let missed = 0;
  const rootAt = (s: number): Uint8Array => preState.blockRoots.get(s % SLOTS_PER_HISTORICAL_ROOT);
  for (let s = from; s < slot; s++) {
    if (Buffer.from(rootAt(s)).equals(rootAt(s - 1))) missed++;
  }
  return missed;
}

/** Why builder blocks are off for a proposal on `preState`, or null when the chain is healthy. */
export function unhealthyReason(opts: CircuitBreakerOptions, preState: CachedBeaconStateAllForks): string | null {
  const missed = missedSlots(preState, opts.faultWindow);
  if (missed > opts.allowedFaults) return `${missed} missed slots in the last ${opts.faultWindow} (more than ${opts.allowedFaults})`;
  const lag = computeEpochAtSlot(preState.slot) - preState.finalizedCheckpoint.epoch;
  if (lag > opts.maxEpochsSinceFinality) return `finality ${lag} epochs behind (more than ${opts.maxEpochsSinceFinality})`;
  return null;
}

/**
 * The liveness failsafe of builder-specs bellatrix/validator.md: no builder blocks while the chain
 * is unhealthy. It says when it trips and when it resets, once each.
 */
export class CircuitBreaker {
  private readonly opts: CircuitBreakerOptions;
  private tripped: string | null = null;

  constructor(opts: CircuitBreakerOptions) {
    this.opts = opts;
  }

  get isTripped(): boolean {
    return this.tripped !== null;
  }

  /** Judges the chain a proposal builds on; returns the reason builder blocks are off, or null. */
  check(preState: CachedBeaconStateAllForks): string | null {
    const reason = unhealthyReason(this.opts, preState);
    if (reason && !this.tripped) log.warn({slot: preState.slot, reason}, "builder circuit breaker tripped: proposals build local payloads");
    if (!reason && this.tripped) log.info({slot: preState.slot}, "builder circuit breaker reset: proposals ask the builder again");
    this.tripped = reason;
    return reason;
  }
}
