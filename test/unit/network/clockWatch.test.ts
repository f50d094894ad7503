import {describe, expect, it} from "@jest/globals";
import {Writable} from "node:stream";
import {createBeaconConfig} from "@lodestar/config";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import {ClockWatch} from "../../../src/network/clockWatch.ts";

/**
 * A node clock for the watch: peers' messages reach it `arrivalMs()` into their slot, and its own
 * slot ticks run on time, as on a node whose clock is off but which is not busy.
 */
function nodeClock(arrivalMs: () => number) {
  let ticking = false;
  return {
    msIntoSlot: () => (ticking ? 0 : arrivalMs()),
    tick(watch: ClockWatch, slot: number) {
      ticking = true;
      watch.onSlot(slot);
      ticking = false;
    },
  };
}

describe("clock watch", () => {
  it("says once that the clock is off, with the measured offset, and once that it is right again; the gauge follows", () => {
    const lines: {level: number; msg: string; offsetMs?: number}[] = [];
    initLogging({
      directive: parseLogDirective("INFO"),
      format: "json",
      destination: new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
          done();
        },
      }),
    });
    // 1-second slots; MAXIMUM_GOSSIP_CLOCK_DISPARITY 500 ms
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    let offset = 3000;
    let gauge = Number.NaN;
    const clock = nodeClock(() => offset + 60);
    const watch = new ClockWatch({config, msIntoSlot: clock.msIntoSlot, setOffsetSeconds: (s) => (gauge = s)});
    const run = (from: number, to: number) => {
      for (let slot = from; slot < to; slot++) {
        watch.onArrival("a", slot)();
        watch.onArrival("b", slot)();
        // a message found invalid is not counted
        void watch.onArrival("c", slot);
        clock.tick(watch, slot + 1);
      }
    };
    run(10, 20);
    expect(watch.verdict()).toEqual({offsetMs: 3060, off: true, peers: 2});
    expect(gauge).toBeCloseTo(3.06);
    offset = 0;
    run(20, 60);
    expect(watch.verdict()).toEqual({offsetMs: 60, off: false, peers: 2});
    expect(gauge).toBeCloseTo(0.06);
    const said = lines.filter((l) => l.msg.startsWith("the clock"));
    expect(said.map((l) => [l.level, l.offsetMs])).toEqual([
      [40, 3060],
      [30, 60],
    ]);
    expect(said[0].msg).toMatch(/3060 ms after their slot starts/);
  });

  it("a verdict stands only while peers' messages come: a network that fell silent does not stay silent", () => {
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    // every peer late by 3 s (all starved, or this clock ahead): off, and the validators stop
    const clock = nodeClock(() => 3060);
    const watch = new ClockWatch({config, msIntoSlot: clock.msIntoSlot});
    for (let slot = 10; slot < 20; slot++) {
      watch.onArrival("a", slot)();
      clock.tick(watch, slot + 1);
    }
    expect(watch.verdict()).toMatchObject({off: true});
    // nobody signs, so nothing more comes: the verdict lasts while 4 slots of its messages (10 to 19) are of the last 32
    for (let slot = 21; slot < 48; slot++) clock.tick(watch, slot);
    expect(watch.verdict()).toMatchObject({off: true});
    clock.tick(watch, 48);
    expect(watch.verdict()).toBeNull();
  });

  it("on 1-second slots: off past 500 ms before the slot's start or 500 ms after the aggregation deadline (667 ms)", () => {
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    const offAt = (ms: number) => {
      const clock = nodeClock(() => ms);
      const watch = new ClockWatch({config, msIntoSlot: clock.msIntoSlot});
      for (let slot = 0; slot < 8; slot++) {
        watch.onArrival("a", slot)();
        clock.tick(watch, slot + 1);
      }
      return watch.verdict()!.off;
    };
    expect([offAt(-501), offAt(-500), offAt(1166), offAt(1168)]).toEqual([true, false, false, true]);
  });
});
