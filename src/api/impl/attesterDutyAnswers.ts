import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {type AttesterDuty, attesterDuties} from "../../duties/index.ts";
import type {ValidatorId} from "../codecs.ts";
import {markShared} from "../jsonText.ts";
import {indicesOf} from "./resolve.ts";

/** validators whose attester duties are kept per epoch and dependent root (mainnet has a million: not all) */
const MAX_KEPT_DUTIES = 100_000;

/**
 * The attester duties of one epoch and dependent root, kept as they are asked for: each
 * validator's duty (or none) by index, and whole answers by the list of validators they answer.
 * A validator client asks for the same list every slot, for this epoch and the next; the server
 * gives an identical body the same parsed list (server/keptBodies.ts), which finds the same
 * shared answer here, whose JSON is made once (jsonText.ts). Everything here is right for as long
 * as the dependent root: the caller keys it by that root.
 */
export class AttesterDutyAnswers {
  private readonly byIndex = new Map<number, AttesterDuty | null>();
  /** by the very list asked with (lists live as long as the server keeps their body) */
  private readonly byRequest = new WeakMap<ValidatorId[], AttesterDuty[]>();

  answer(state: CachedBeaconStateAllForks, epoch: number, validators: ValidatorId[]): AttesterDuty[] {
    const kept = this.byRequest.get(validators);
    if (kept) return kept;
    const known = this.byIndex;
    const indices = indicesOf(state, validators);
    const missing = indices.filter((index) => !known.has(index));
    const computed = missing.length > 0 ? attesterDuties(state, epoch, missing) : [];
    if (known.size + missing.length <= MAX_KEPT_DUTIES) {
      for (const index of missing) known.set(index, null);
      for (const duty of computed) known.set(duty.validatorIndex, markShared(duty));
    }
    const fresh = new Map(computed.map((duty) => [duty.validatorIndex, duty]));
    const data = indices.flatMap((index) => known.get(index) ?? fresh.get(index) ?? []);
    // a list the server keeps is frozen and can come again; any other may be changed by its owner
    if (Object.isFrozen(validators)) this.byRequest.set(validators, markShared(data));
    return data;
  }
}
