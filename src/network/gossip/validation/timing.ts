import {setTimeout as delay} from "node:timers/promises";
import type {GossipValidatorDeps} from "./types.ts";

/**
 * Slot ranges with the spec's MAXIMUM_GOSSIP_CLOCK_DISPARITY allowance: a rule such as
 * `slot <= current_slot` holds if it holds for some clock within the disparity of ours.
 */
export function clockDisparityMs(deps: Pick<GossipValidatorDeps, "config">): number {
  return deps.config.MAXIMUM_GOSSIP_CLOCK_DISPARITY;
}

/** The latest slot that may be current at some clock within the disparity (for `slot <= current_slot`). */
export function latestCurrentSlot(deps: Pick<GossipValidatorDeps, "config" | "clock">): number {
  return deps.clock.currentSlotWithTolerance(clockDisparityMs(deps));
}

/** The earliest slot that may be current at some clock within the disparity (for `slot >= current_slot - n`). */
export function earliestCurrentSlot(deps: Pick<GossipValidatorDeps, "config" | "clock">): number {
  return deps.clock.currentSlotWithTolerance(-clockDisparityMs(deps));
}

/**
 * A message of a slot about to start (within the disparity) waits for it: the pools check slots
 * against the node's own clock.
 */
export async function waitForSlot(deps: Pick<GossipValidatorDeps, "config" | "clock" | "sleep">, slot: number): Promise<void> {
  if (deps.clock.currentSlot() >= slot) return;
  const ms = -deps.clock.msIntoSlot(slot);
  if (ms > 0 && ms <= clockDisparityMs(deps)) await (deps.sleep ?? ((t: number) => delay(t)))(ms);
}
