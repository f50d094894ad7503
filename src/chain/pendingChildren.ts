import {getLogger} from "../log.ts";

const log = getLogger("chain");

/** Children waiting for their parents' imports at once; past this the oldest waiter is let go. */
const MAX_WAITING = 32;
/** Slots a child waits at most (a parent whose import takes longer is left to parent lookup). */
const MAX_WAIT_SLOTS = 2;

/** How the import of the parent a child waited for ended. */
export type ParentImport =
  | {kind: "imported"}
  /** the import threw `error` (a BlockError, or the node's own failure) */
  | {kind: "failed"; error: unknown}
  /** the child waited too long, or too many children waited */
  | {kind: "dropped"; reason: string};

interface Waiter {
  parentRoot: string;
  /** the slot the child began to wait at */
  since: number;
  resolve: (outcome: ParentImport) => void;
}

/**
 * Blocks being imported (from their hand-over to the chain until fork choice holds them or the
 * import failed), and the gossip blocks waiting for one of them as their parent. A block whose
 * parent has passed gossip validation but is still importing (its data, its state transition)
 * waits here instead of being ignored and its parent fetched again by root; it goes on the
 * moment the parent's import ends. The wait is bounded in count (the oldest waiter goes first)
 * and in slots.
 */
export class PendingChildren {
  private readonly importing = new Map<string, object>();
  /** oldest first */
  private waiting: Waiter[] = [];
  private readonly currentSlot: () => number;
  private readonly maxWaiting: number;

  constructor(currentSlot: () => number, maxWaiting = MAX_WAITING) {
    this.currentSlot = currentSlot;
    this.maxWaiting = maxWaiting;
  }

  /** Records `rootHex` as being imported; the function returned ends that, with how it ended, and lets its children go on. */
  begin(rootHex: string): (outcome: ParentImport) => void {
    const token = {};
    this.importing.set(rootHex, token);
    return (outcome) => {
      if (this.importing.get(rootHex) === token) this.importing.delete(rootHex);
      this.release((w) => w.parentRoot === rootHex, outcome);
    };
  }

  /** Children waiting now. */
  get size(): number {
    return this.waiting.length;
  }

  /** Waits for the import of `parentRoot` to end; null when no import of it is under way. */
  waitForParent(parentRoot: string): Promise<ParentImport> | null {
    if (!this.importing.has(parentRoot)) return null;
    if (this.waiting.length >= this.maxWaiting) {
      const oldest = this.waiting.shift()!;
      log.warn({parent: oldest.parentRoot, waiting: this.maxWaiting}, "too many blocks wait for their parent's import: the oldest one is left to parent lookup");
      oldest.resolve({kind: "dropped", reason: `more than ${this.maxWaiting} blocks wait for their parents`});
    }
    return new Promise((resolve) => this.waiting.push({parentRoot, since: this.currentSlot(), resolve}));
  }

  /** Lets go the children that have waited more than MAX_WAIT_SLOTS slots (call at each slot). */
  prune(currentSlot: number): void {
    const expired = (w: Waiter) => currentSlot - w.since > MAX_WAIT_SLOTS;
    if (!this.waiting.some(expired)) return;
    log.warn({count: this.waiting.filter(expired).length}, `blocks waited more than ${MAX_WAIT_SLOTS} slots for their parent's import: left to parent lookup`);
    this.release(expired, {kind: "dropped", reason: `the parent's import took more than ${MAX_WAIT_SLOTS} slots`});
  }

  private release(match: (w: Waiter) => boolean, outcome: ParentImport): void {
    const released = this.waiting.filter(match);
    if (released.length === 0) return;
    this.waiting = this.waiting.filter((w) => !match(w));
    for (const w of released) w.resolve(outcome);
  }
}
