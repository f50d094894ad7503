/**
 * The validator client's slot clock. Every timer is computed from genesis time, never by
 * chaining intervals, so late timers do not accumulate drift: a tick for slot N fires at
 * `genesis + N * slotDuration` whatever happened to the ticks before it.
 */
/** The longest delay setTimeout honours (a longer one fires at once). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export class SlotClock {
  readonly genesisTimeMs: number;
  readonly slotDurationMs: number;
  private readonly now: () => number;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(genesisTimeSec: number, slotDurationMs: number, now: () => number = Date.now) {
    if (!(slotDurationMs > 0)) throw new Error(`invalid slot duration ${slotDurationMs}ms`);
    this.genesisTimeMs = genesisTimeSec * 1000;
    this.slotDurationMs = slotDurationMs;
    this.now = now;
  }

  /** The slot at this moment; negative before genesis. */
  currentSlot(): number {
    return Math.floor((this.now() - this.genesisTimeMs) / this.slotDurationMs);
  }

  slotStartMs(slot: number): number {
    return this.genesisTimeMs + slot * this.slotDurationMs;
  }

  /**
   * Calls `onSlot(slot)` at the start of every slot from the next one on (slot 0 at the
   * earliest). A tick the process was too busy to run on time is skipped, not replayed.
   */
  start(onSlot: (slot: number) => void): void {
    const scheduleFrom = (previous: number): void => {
      const next = Math.max(previous + 1, this.currentSlot() + 1, 0);
      this.runAt(next, 0, () => {
        scheduleFrom(next);
        onSlot(next);
      });
    };
    scheduleFrom(this.currentSlot());
  }

  /** Runs `fn` at `offsetMs` into `slot`, or on the next turn of the event loop if that time has passed. */
  runAt(slot: number, offsetMs: number, fn: () => void): void {
    this.runAtMs(this.slotStartMs(slot) + offsetMs, fn);
  }

  /**
   * A timer fired before its time (wall clock moved back, or a delay beyond what setTimeout
   * can hold, about 24 days, before genesis) is armed again for the rest.
   */
  private runAtMs(targetMs: number, fn: () => void): void {
    if (this.stopped) return;
    const delay = Math.max(0, targetMs - this.now());
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      if (this.now() < targetMs) this.runAtMs(targetMs, fn);
      else fn();
    }, Math.min(delay, MAX_TIMER_DELAY_MS));
    this.timers.add(timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
