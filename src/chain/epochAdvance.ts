import type {Clock} from "../clock/clock.ts";
import {getLogger} from "../log.ts";

const log = getLogger("chain");

/** How far into an epoch's last slot the head state is advanced into the next epoch (Lighthouse's state advance runs at 3/4 of each slot). */
export const EPOCH_ADVANCE_AT_SLOT_FRACTION = 3 / 4;

export interface EpochAdvanceDeps {
  clock: Pick<Clock, "on" | "off" | "msIntoSlot" | "currentSlot" | "secondsPerSlot" | "slotsPerEpoch">;
  /** the head block's slot */
  headSlot(): number;
  /** advances the head state to the start of `epoch` and keeps it (HeadStates.atEpoch) */
  advanceHeadInto(epoch: number): Promise<unknown>;
}

/**
 * The epoch transition done ahead of time: three quarters into an epoch's last slot, the head
 * state is advanced into the next epoch and cached, as Lighthouse (its state advance timer) and
 * Lodestar (prepareNextSlot) do. The epoch's first block, the duties every validator client asks
 * at the epoch's start and the checks of its first attestations then find the state ready rather
 * than wait for the transition (a few milliseconds on the dev chain, about a second on mainnet's
 * state) at the busiest moment of the epoch. A head that changes afterwards (a late block of the
 * last slot) is advanced again when first asked, as before. Skipped while the node is more than an
 * epoch behind (syncing: its head is not what the next epoch builds on).
 */
export class EpochAdvance {
  private readonly deps: EpochAdvanceDeps;
  private timer: NodeJS.Timeout | null = null;
  private readonly onSlot = (slot: number): void => this.schedule(slot);

  constructor(deps: EpochAdvanceDeps) {
    this.deps = deps;
    deps.clock.on("slot", this.onSlot);
  }

  stop(): void {
    this.deps.clock.off("slot", this.onSlot);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(slot: number): void {
    const {clock} = this.deps;
    if ((slot + 1) % clock.slotsPerEpoch !== 0) return;
    // a slot event that came late (a stalled loop) past the epoch's end: the transition is no longer ahead of time
    if (clock.msIntoSlot(slot + 1) >= 0) return;
    const delayMs = EPOCH_ADVANCE_AT_SLOT_FRACTION * clock.secondsPerSlot * 1000 - clock.msIntoSlot(slot);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.advance((slot + 1) / clock.slotsPerEpoch);
    }, Math.max(0, delayMs));
  }

  private async advance(epoch: number): Promise<void> {
    const behind = this.deps.clock.currentSlot() - this.deps.headSlot();
    if (behind > this.deps.clock.slotsPerEpoch) return;
    const started = performance.now();
    try {
      await this.deps.advanceHeadInto(epoch);
      log.debug({epoch, ms: Math.round(performance.now() - started)}, "head state advanced into the next epoch");
    } catch (e) {
      log.warn({epoch, err: (e as Error).message}, "advancing the head state into the next epoch failed");
    }
  }
}
