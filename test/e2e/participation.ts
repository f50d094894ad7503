import {SLOTS_PER_EPOCH, TIMELY_TARGET_FLAG_INDEX} from "@lodestar/params";
import type {altair} from "@lodestar/types";

/** Share of the validators active in the previous epoch whose timely-target flag is set. */
export function participationOfPreviousEpoch(state: altair.BeaconState): number {
  const previousEpoch = Math.floor(state.slot / SLOTS_PER_EPOCH) - 1;
  let active = 0;
  let participated = 0;
  for (const [i, v] of state.validators.entries()) {
    if (v.activationEpoch <= previousEpoch && previousEpoch < v.exitEpoch) {
      active++;
      if ((state.previousEpochParticipation[i] >> TIMELY_TARGET_FLAG_INDEX) & 1) participated++;
    }
  }
  return active === 0 ? 0 : participated / active;
}
