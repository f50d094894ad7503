import {EventEmitter} from "node:events";

export interface ClockEvents {
  /** at the start of every slot, in order, none skipped */
  slot: [slot: number];
  /** at the start of every epoch, after that slot's `slot` event */
  epoch: [epoch: number];
}

/**
 * Slots and epochs from genesis time. Each tick is scheduled from genesis time (never by
 * chaining intervals), so the clock does not drift; after a stall (a busy event loop, a
 * suspended machine) it emits every missed slot in order.
 */
export class Clock extends EventEmitter<ClockEvents> {
  private timer: NodeJS.Timeout | null = null;
  private lastEmittedSlot: number;

  readonly genesisTime: number;
  readonly secondsPerSlot: number;
  readonly slotsPerEpoch: number;
  private readonly now: () => number;

  constructor(genesisTime: number, secondsPerSlot: number, slotsPerEpoch: number, now: () => number = Date.now) {
    super();
    this.genesisTime = genesisTime;
    this.secondsPerSlot = secondsPerSlot;
    this.slotsPerEpoch = slotsPerEpoch;
    this.now = now;
    this.lastEmittedSlot = this.currentSlot();
  }

  /** The slot at this instant; slot 0 before genesis. */
  currentSlot(): number {
    return Math.max(0, Math.floor(this.secondsSinceGenesis() / this.secondsPerSlot));
  }

  /** The slot with a tolerance for clock disparity: a slot counts as current slightly before it starts. */
  currentSlotWithTolerance(toleranceMs: number): number {
    return Math.max(0, Math.floor((this.secondsSinceGenesis() + toleranceMs / 1000) / this.secondsPerSlot));
  }

  currentEpoch(): number {
    return Math.floor(this.currentSlot() / this.slotsPerEpoch);
  }

  /** Milliseconds since the start of `slot` (negative before it). */
  msIntoSlot(slot: number): number {
    return this.now() - this.slotStartMs(slot);
  }

  slotStartMs(slot: number): number {
    return (this.genesisTime + slot * this.secondsPerSlot) * 1000;
  }

  start(): void {
    if (this.timer) return;
    this.lastEmittedSlot = this.currentSlot();
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private secondsSinceGenesis(): number {
    return this.now() / 1000 - this.genesisTime;
  }

  private schedule(): void {
    const next = this.lastEmittedSlot + 1;
    const delay = Math.max(0, this.slotStartMs(next) - this.now());
    this.timer = setTimeout(() => this.tick(), delay);
  }

  private tick(): void {
    const current = this.currentSlot();
    while (this.lastEmittedSlot < current) {
      const slot = ++this.lastEmittedSlot;
      this.emit("slot", slot);
      if (slot % this.slotsPerEpoch === 0) this.emit("epoch", slot / this.slotsPerEpoch);
    }
    if (this.timer) this.schedule();
  }
}
