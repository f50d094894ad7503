/**
 * CPU-bound steps run in the order they were asked for, a few milliseconds' worth per turn of
 * the event loop. A slot's batch of BLS signatures (64 validators sign up to about a hundred
 * messages in one slot, 0.4 ms each) would otherwise hold the loop for tens of milliseconds,
 * and every REST request and gossip message waiting behind it; in turns of `budgetMs`, the I/O
 * that arrived meanwhile is served in between. Not one step per turn: each turn delays the
 * requests in flight, and a hundred short delays a slot would reach more of them than a few.
 */
export class LoopTurns {
  private readonly queue: {step: () => void; expectedMs: () => number}[] = [];
  /** steps are started in one turn until this much time has passed in it */
  readonly budgetMs: number;
  private scheduled = false;
  private readonly now: () => number;

  /**
   * 2 ms by default. A turn delays the REST requests in flight by its length plus the time to
   * answer the requests ahead of them after it (2-3 ms at 32 connections): under load, turns of 5
   * ms (and 7 ms batches of checks) put all of those requests past 5 ms. Attester duties under
   * load with the dev validators' slot work, requests over 5 ms: 5 ms turns 0.96%, 3 ms 0.68%,
   * 3 ms with each step's expected cost declared 0.55%, 2 ms 0.48%
   */
  constructor(budgetMs = 2, now: () => number = () => performance.now()) {
    this.budgetMs = budgetMs;
    this.now = now;
  }

  /**
   * `step`'s result, computed on a later turn of the loop after the steps asked for before it.
   * `expectedMs`, what the step is expected to take (read when it is next in line): a step starts in
   * a turn that has already run others only if it fits in what is left of the budget, so that a
   * batch of signature checks never follows a budget's worth of signing in the same turn.
   */
  run<T>(step: () => T, expectedMs: () => number = NO_COST): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        step: () => {
          try {
            resolve(step());
          } catch (err) {
            reject(err);
          }
        },
        expectedMs,
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase: the sockets that became readable come first
    setImmediate(() => {
      const start = this.now();
      do this.queue.shift()!.step();
      while (this.queue.length > 0 && this.now() - start + this.queue[0].expectedMs() < this.budgetMs);
      // only now: a step that asks for another step finds this turn still scheduled, and the
      // new step runs in it or in the next, never in an extra turn that finds the queue empty
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
    });
  }
}

/** a step that says nothing of its cost: it starts whenever the budget is not yet spent */
const NO_COST = (): number => 0;

/**
 * What steps of one kind have cost, a moving average of the last few: the `expectedMs` of the
 * next ones, so that a turn of them ends within its budget instead of one step past it.
 */
export class StepCost {
  private averageMs: number;

  /** `initialMs`: what a step is taken to cost until steps have been timed */
  constructor(initialMs: number) {
    this.averageMs = initialMs;
  }

  /** the expected cost of one step, in ms */
  get ms(): number {
    return this.averageMs;
  }

  /** `work`'s result; its time, over `units` steps' worth (sets in a batch, say), moves the average */
  time<T>(work: () => T, units = 1): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.averageMs = 0.8 * this.averageMs + (0.2 * (performance.now() - started)) / units;
    }
  }
}
