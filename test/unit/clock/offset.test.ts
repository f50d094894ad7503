import {describe, expect, it} from "@jest/globals";
import {ClockOffsetMonitor, MIN_PEER_SLOTS, OFFSET_WINDOW_SLOTS, median} from "../../../src/clock/offset.ts";

/** 1-second slots: the attestation deadline at 333 ms, MAXIMUM_GOSSIP_CLOCK_DISPARITY 500 ms, an epoch of 8 s. */
const monitor = () => new ClockOffsetMonitor({toleranceMs: 500, latestSendMs: 333, certainlyAheadMs: 8000});

/** Each peer delivers, for each of `slots` slots, a block at `blockMs` and an attestation later. */
function feed(m: ClockOffsetMonitor, peers: string[], offsetMs: (peer: string) => number, slots = 8, from = 100): void {
  for (let slot = from; slot < from + slots; slot++) {
    for (const peer of peers) {
      m.record(peer, slot, offsetMs(peer) + 40 + (slot % 3) * 10);
      m.record(peer, slot, offsetMs(peer) + 360);
    }
  }
}

describe("clock offset from peers' gossip", () => {
  it("has no estimate until a peer has delivered messages for enough slots", () => {
    const m = monitor();
    feed(m, ["a"], () => 0, MIN_PEER_SLOTS - 1);
    expect(m.verdict()).toBeNull();
    feed(m, ["a"], () => 0, 1, 200);
    expect(m.verdict()).toMatchObject({off: false, peers: 1});
  });

  it("takes each slot's earliest message: a clock right with the network is not off, whatever comes late", () => {
    const m = monitor();
    feed(m, ["a", "b", "c"], () => 0);
    // stragglers of old slots arrive much later: the slot's earliest message counts
    for (let slot = 100; slot < 108; slot++) m.record("a", slot, 5000);
    expect(m.verdict()).toEqual({offsetMs: 50, off: false, late: false, peers: 3});
  });

  it("a clock behind is certain (messages arrive before their slot); messages 3 s late are only late (a clock ahead, or a slow network); an epoch late, certain", () => {
    const behind = monitor();
    feed(behind, ["a", "b"], () => -3000);
    expect(behind.verdict()!.offsetMs).toBeLessThan(-2900);
    expect(behind.verdict()).toMatchObject({off: true, late: false});
    const late = monitor();
    feed(late, ["a", "b"], () => 3000);
    expect(late.verdict()).toMatchObject({off: false, late: true, peers: 2});
    expect(late.verdict()!.offsetMs).toBeGreaterThanOrEqual(3000);
    expect(late.verdict()!.offsetMs).toBeLessThan(3100);
    const ahead = monitor();
    feed(ahead, ["a", "b"], () => 9000);
    expect(ahead.verdict()).toMatchObject({off: true, late: true});
  });

  it("the boundaries: off before the slot by more than the tolerance or after it by more than an epoch; late after the attestation deadline by more than the tolerance", () => {
    const at = (ms: number) => {
      const m = monitor();
      for (let slot = 0; slot < MIN_PEER_SLOTS; slot++) m.record("a", slot, ms);
      const {off, late} = m.verdict()!;
      return off ? "off" : late ? "late" : "right";
    };
    expect([at(-501), at(-500), at(833), at(834), at(8000), at(8001)]).toEqual(["off", "right", "right", "late", "late", "off"]);
  });

  it("a minority of wrong or hostile peers moves nothing; two peers that disagree say nothing", () => {
    const m = monitor();
    feed(m, ["a", "b", "c"], (p) => (p === "c" ? -3000 : 0));
    expect(m.verdict()).toMatchObject({off: false});
    const split = monitor();
    feed(split, ["a", "b"], (p) => (p === "b" ? 3000 : 0));
    expect(split.verdict()).toMatchObject({off: false});
    // a disconnected peer's view goes with it
    const gone = monitor();
    feed(gone, ["a"], () => 3000);
    gone.forget("a");
    expect(gone.verdict()).toBeNull();
  });

  it("clears once the clock is right again, within a window of slots", () => {
    const m = monitor();
    feed(m, ["a", "b"], () => -3000, OFFSET_WINDOW_SLOTS, 100);
    expect(m.verdict()!.off).toBe(true);
    feed(m, ["a", "b"], () => 0, OFFSET_WINDOW_SLOTS / 2 + 1, 100 + OFFSET_WINDOW_SLOTS);
    expect(m.verdict()).toMatchObject({off: false});
  });

  it("a node whose own event loop is late times every message late by as much: its own delay is not taken for a clock ahead", () => {
    // starved of CPU, the node runs its slot ticks, and its gossip handlers, 2-3 s late
    const lateBy = (slot: number) => 2000 + (slot % 4) * 250;
    const starved = monitor();
    for (let slot = 100; slot < 108; slot++) {
      starved.recordTick(slot, lateBy(slot));
      for (const peer of ["a", "b"]) starved.record(peer, slot, lateBy(slot) + 60);
    }
    expect(starved.verdict()).toEqual({offsetMs: 60, off: false, late: false, peers: 2});
    // a message handled in the same late turn of the loop as the tick, before it, is not taken for one sent before the slot
    const sameTurn = monitor();
    for (let slot = 100; slot < 108; slot++) {
      sameTurn.recordTick(slot, 2500);
      for (const peer of ["a", "b"]) sameTurn.record(peer, slot, 2400);
    }
    expect(sameTurn.verdict()).toEqual({offsetMs: 0, off: false, late: false, peers: 2});
    // a clock 3 s ahead ticks on time by itself: its peers' messages still read as late
    const ahead = monitor();
    for (let slot = 100; slot < 108; slot++) ahead.recordTick(slot, 5);
    feed(ahead, ["a", "b"], () => 3000);
    expect(ahead.verdict()).toMatchObject({late: true});
    expect(ahead.verdict()!.offsetMs).toBeGreaterThan(2900);
  });

  it("median: of two middle values, the one nearer zero", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([-3000, 50])).toBe(0);
    expect(median([40, 3000])).toBe(40);
    expect(median([3000, 3100])).toBe(3000);
    expect(median([-3000, 3000])).toBe(0);
  });
});
