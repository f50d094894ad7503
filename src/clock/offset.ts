/**
 * How far the node's clock is from its peers', measured from when their gossip reaches it.
 *
 * Honest peers send a slot's block and attestations no earlier than the slot's start (by their
 * clocks) and no later than the attestation deadline. So the earliest message of a slot that a
 * peer delivers, measured from the slot's start by our clock, is our clock's offset plus the
 * network's delay: well before the slot starts, our clock is behind; long after the attestation
 * deadline, even for the earliest message of slot after slot, it is ahead.
 *
 * The node's own delays are not its clock's: a node starved of CPU runs its gossip handlers, and
 * so times each message, as late as its event loop is behind. Its own slot tick, timed the same
 * way, is late by that much too while a clock that is off ticks on time by itself. So each
 * slot's earliest message counts less the lateness of the node's own tick of that slot
 * (`recordTick`), but never as earlier than the slot's start: what is left is the offset plus
 * the network's delay, as on an idle node.
 *
 * Robust to a few hostile or wrong peers: each peer's estimate is the median over its last
 * slots of the earliest message it delivered for each, and the node's estimate is the median
 * of the peers' estimates (of the two middle ones, the one nearer zero: a split network says
 * nothing). A message for a slot is counted once, from the peer that delivered it first.
 *
 * Only one direction is certain. Messages cannot arrive before they are sent: a slot's first
 * messages arriving well before the slot starts mean this clock is behind. Messages arriving
 * late mean this clock is ahead, or the network and its peers are slow (peers starved of CPU
 * propose and attest late): from here the two look alike. So a late estimate is `late`, and
 * `off` (the validators stop) only past what no network delay explains: an epoch.
 */

/** Slots a peer's estimate looks back over. */
export const OFFSET_WINDOW_SLOTS = 32;
/** Slots a peer must have delivered messages for before its estimate counts. */
export const MIN_PEER_SLOTS = 4;
/** Peers followed at once (the most recently heard from are kept). */
const MAX_PEERS = 64;

export interface ClockOffsetVerdict {
  /**
   * The estimate of the clock's offset from its peers' (positive: ahead), network delay included:
   * when peers' earliest messages of a slot reach the node, in ms from the slot's start by its clock.
   */
  offsetMs: number;
  /** certainly off: before the slot's start by more than the tolerance (this clock is behind), or after it by more than an epoch (ahead) */
  off: boolean;
  /** later than honest peers send, by more than the tolerance: this clock ahead, or the network and its peers slow */
  late: boolean;
  /** peers whose estimates were taken */
  peers: number;
}

export interface ClockOffsetOptions {
  /** MAXIMUM_GOSSIP_CLOCK_DISPARITY, in ms */
  toleranceMs: number;
  /** the latest a slot's first messages may arrive after the slot's start on a right clock (the node takes the aggregation deadline), in ms */
  latestSendMs: number;
  /** how late a slot's first messages may reach the node before only a clock ahead explains it (the node takes an epoch), in ms */
  certainlyAheadMs: number;
}

export class ClockOffsetMonitor {
  private readonly opts: ClockOffsetOptions;
  /** per peer: slot → earliest arrival from that peer, in insertion order (oldest slots first) */
  private readonly peers = new Map<string, Map<number, number>>();
  /** slot → how late the node's own tick of that slot ran, in ms (the last OFFSET_WINDOW_SLOTS slots) */
  private readonly ownLag = new Map<number, number>();

  constructor(opts: ClockOffsetOptions) {
    this.opts = opts;
  }

  /** A gossip message of `slot` from `peer` arrived `msIntoSlot` after the slot's start (negative: before it). */
  record(peer: string, slot: number, msIntoSlot: number): void {
    let slots = this.peers.get(peer);
    if (slots) this.peers.delete(peer);
    else slots = new Map();
    // most recently heard from last: the oldest peer goes first when there are too many
    this.peers.set(peer, slots);
    if (this.peers.size > MAX_PEERS) this.peers.delete(this.peers.keys().next().value!);
    const known = slots.get(slot);
    if (known !== undefined) {
      if (msIntoSlot < known) slots.set(slot, msIntoSlot);
      return;
    }
    slots.set(slot, msIntoSlot);
    if (slots.size > OFFSET_WINDOW_SLOTS) {
      // drop the lowest slot (messages of old slots may arrive late, after newer ones)
      let lowest = slot;
      for (const s of slots.keys()) if (s < lowest) lowest = s;
      slots.delete(lowest);
    }
  }

  /** The node's own tick of `slot` ran `msLate` after the slot's start (its event loop's delay then). */
  recordTick(slot: number, msLate: number): void {
    this.ownLag.set(slot, Math.max(0, msLate));
    for (const known of this.ownLag.keys()) if (known <= slot - OFFSET_WINDOW_SLOTS) this.ownLag.delete(known);
  }

  /** A disconnected peer's messages stop counting. */
  forget(peer: string): void {
    this.peers.delete(peer);
  }

  /**
   * The estimate, or null while no peer has delivered messages for enough slots. With
   * `currentSlot`, only messages of the last OFFSET_WINDOW_SLOTS slots count: old ones say nothing
   * of the clock now (when no message comes, the estimate ends rather than stand for ever).
   */
  verdict(currentSlot?: number): ClockOffsetVerdict | null {
    const estimates: number[] = [];
    const recent = ([slot]: [number, number]): boolean => currentSlot === undefined || slot > currentSlot - OFFSET_WINDOW_SLOTS;
    for (const slots of this.peers.values()) {
      const arrivals = [...slots].filter(recent);
      if (arrivals.length < MIN_PEER_SLOTS) continue;
      // a message handled before the late tick (in the same turn of the loop) is not moved before the slot's start
      estimates.push(median(arrivals.map(([slot, ms]) => ms - Math.min(this.ownLag.get(slot) ?? 0, Math.max(ms, 0)))));
    }
    if (estimates.length === 0) return null;
    const offsetMs = median(estimates);
    const {toleranceMs, latestSendMs, certainlyAheadMs} = this.opts;
    return {
      offsetMs: Math.round(offsetMs),
      off: offsetMs < -toleranceMs || offsetMs > certainlyAheadMs,
      late: offsetMs > latestSendMs + toleranceMs,
      peers: estimates.length,
    };
  }
}

/** The median; of two middle values, the one nearer zero (a tie between two views says nothing). */
export function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[mid];
  const [a, b] = [sorted[mid - 1], sorted[mid]];
  if (a <= 0 && b >= 0) return 0;
  return Math.abs(a) < Math.abs(b) ? a : b;
}
