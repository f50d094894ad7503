/**
 * CPU-bound steps run one per turn of the event loop, in the order they were asked for. A
 * slot's batch of BLS signatures (64 validators sign up to about a hundred messages in one
 * slot, half a millisecond each) would otherwise hold the loop for tens of milliseconds, and
 * every REST request and gossip message waiting behind it with it; taken one per turn, the
 * I/O that arrived meanwhile is served between two steps.
 */
export class LoopTurns {
  private readonly queue: (() => void)[] = [];
  private scheduled = false;

  /** `step`'s result, computed on a later turn of the loop after the steps asked for before it. */
  run<T>(step: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        try {
          resolve(step());
        } catch (err) {
          reject(err);
        }
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase: the sockets that became readable come first
    setImmediate(() => {
      this.scheduled = false;
      this.queue.shift()?.();
      if (this.queue.length > 0) this.schedule();
    });
  }
}
