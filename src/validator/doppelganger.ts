import type {TopicLogger} from "../log.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";
import {errorMessage} from "./context.ts";
import type {ValidatorIndices} from "./validators.ts";

/**
 * Doppelganger protection (`--doppelganger-protection`): a key added in epoch E (at start, or
 * imported) performs no duty until the beacon node's liveness endpoint has seen it idle in the
 * two full epochs E+1 and E+2, asked at the start of each next epoch (the endpoint answers for
 * the previous epoch); it signs from epoch E+3 on. Epoch E itself is asked too, for an earlier
 * warning. A key seen live means another client signs with it: `onDetected` is called (the
 * client stops) and the key is never released. An epoch whose answer failed, or in which the
 * key had no index yet, does not count.
 */

/** full epochs a key must be seen idle in before it signs */
export const DOPPELGANGER_EPOCHS = 2;

interface Pending {
  /** the epoch the key was added in */
  from: number;
  /** full epochs seen idle */
  idle: number;
}

export interface DoppelgangerDetection {
  pubkey: string;
  index: number;
  epoch: number;
}

export class DoppelgangerProtection {
  private readonly pending = new Map<string, Pending>();
  private readonly api: ValidatorBeaconApi;
  private readonly validators: ValidatorIndices;
  private readonly log: TopicLogger;
  private readonly onDetected: (detection: DoppelgangerDetection) => void;

  /** A key released changes the key set's generation: its duties are fetched at the next poll (dutyStore.ts). */
  constructor(api: ValidatorBeaconApi, validators: ValidatorIndices, log: TopicLogger, onDetected: (d: DoppelgangerDetection) => void) {
    this.api = api;
    this.validators = validators;
    this.log = log;
    this.onDetected = onDetected;
  }

  /** Holds a key added in `epoch` until it has been seen idle long enough. */
  register(pubkey: string, epoch: number): void {
    this.pending.set(pubkey, {from: epoch, idle: 0});
    this.validators.hold(pubkey);
  }

  forget(pubkey: string): void {
    this.pending.delete(pubkey);
  }

  /** The keys still held. */
  get waiting(): number {
    return this.pending.size;
  }

  /** At the start of `epoch`: asks the liveness of epoch - 1 for the held keys with an index. */
  async onEpoch(epoch: number): Promise<void> {
    const checked = epoch - 1;
    const asked = [...this.pending.entries()]
      .filter(([, p]) => checked >= p.from)
      .map(([pubkey]) => ({pubkey, index: this.validators.indexOf(pubkey)}))
      .filter((k): k is {pubkey: string; index: number} => k.index !== undefined);
    if (asked.length === 0) return;
    let answers: {index: number; isLive: boolean}[];
    try {
      answers = await this.api.getLiveness(checked, asked.map((k) => k.index));
    } catch (err) {
      this.log.warn({epoch: checked, error: errorMessage(err)}, "Doppelganger protection could not ask the liveness of its keys: the epoch does not count");
      return;
    }
    const live = new Set(answers.filter((a) => a.isLive).map((a) => a.index));
    const answered = new Set(answers.map((a) => a.index));
    // any key live stops everything: nothing is released in the same answer
    const found = asked.find((k) => live.has(k.index));
    if (found) {
      this.log.error({validatorIndex: found.index, pubkey: found.pubkey, epoch: checked}, `Doppelganger detected: validator ${found.index} was live in epoch ${checked} while this client held its key; stopping`);
      this.onDetected({pubkey: found.pubkey, index: found.index, epoch: checked});
      return;
    }
    for (const {pubkey, index} of asked) {
      const pending = this.pending.get(pubkey);
      if (!pending || !answered.has(index) || checked === pending.from) continue;
      if (++pending.idle >= DOPPELGANGER_EPOCHS) {
        this.pending.delete(pubkey);
        this.validators.release(pubkey);
        this.log.info({validatorIndex: index, pubkey, epoch}, "Doppelganger protection: no other client signs with this key, it signs from now on");
      }
    }
  }
}
