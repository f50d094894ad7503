import {SYNC_DISTANCE_SLOTS} from "./rangeSync.ts";

/** slots between two refreshes after rounds that got nowhere (peers limit how often status is asked: Lighthouse 5 in 15 s) */
export const STALLED_REFRESH_SLOTS = 4;

/**
 * Whether to ask the peers for their status again after a range sync round, rather than wait
 * for their next status (minutes). A round syncs to the heads the peers last reported; when it
 * ends with the node still behind the clock, their heads have moved on meanwhile, and only a
 * fresh status starts the next round. A round that got somewhere asks at once. One that got
 * nowhere (the peer's answer failed, it went away and came back, its status was stale) asks
 * again too, at most every STALLED_REFRESH_SLOTS, so that a node behind does not sit out
 * without a round until the next status comes by itself.
 */
export class StatusRefreshAfterRounds {
  private lastStalledRefreshSlot = -Infinity;

  /** A round ended at `headSlot` (`progressed`: the head moved), the clock at `clockSlot`. */
  shouldRefresh(headSlot: number, progressed: boolean, clockSlot: number): boolean {
    if (clockSlot - headSlot < SYNC_DISTANCE_SLOTS) return false;
    if (progressed) return true;
    if (clockSlot - this.lastStalledRefreshSlot < STALLED_REFRESH_SLOTS) return false;
    this.lastStalledRefreshSlot = clockSlot;
    return true;
  }
}
