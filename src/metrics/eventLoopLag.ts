/**
 * Measures how late the event loop runs a timer: a timer is set for `intervalMs`, and the time
 * past that when it fires is the lag (work that blocked the loop, or a loop too busy to keep up).
 */
export interface EventLoopLagOptions {
  intervalMs: number;
  onSample: (lagSeconds: number) => void;
  /** milliseconds, monotonic */
  now?: () => number;
}

export class EventLoopLagMonitor {
  private readonly opts: Required<EventLoopLagOptions>;
  private timer: NodeJS.Timeout | null = null;

  constructor(opts: EventLoopLagOptions) {
    this.opts = {now: () => performance.now(), ...opts};
  }

  start(): void {
    if (this.timer) return;
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    const expected = this.opts.now() + this.opts.intervalMs;
    this.timer = setTimeout(() => {
      this.opts.onSample(Math.max(0, this.opts.now() - expected) / 1000);
      this.schedule();
    }, this.opts.intervalMs);
    this.timer.unref();
  }
}
