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
  it("says each change once, with the measured offset: late (validators go on), right, off (they stop), right; the gauge follows", () => {
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
    // 3 s late: this clock ahead, or the network slow; the validators go on
    run(10, 20);
    expect(watch.verdict()).toEqual({offsetMs: 3060, off: false, late: true, peers: 2});
    expect(gauge).toBeCloseTo(3.06);
    offset = 0;
    run(20, 60);
    expect(watch.verdict()).toEqual({offsetMs: 60, off: false, late: false, peers: 2});
    expect(gauge).toBeCloseTo(0.06);
    // messages before their slot: this clock is behind, certainly; the validators stop
    offset = -3000;
    run(60, 100);
    expect(watch.verdict()).toEqual({offsetMs: -2940, off: true, late: false, peers: 2});
    offset = 0;
    run(100, 140);
    const said = lines.filter((l) => /^(the clock|messages from peers)/.test(l.msg));
    expect(said.map((l) => [l.level, l.offsetMs])).toEqual([
      [40, 3060],
      [30, 60],
      [40, -2940],
      [30, 60],
    ]);
    expect(said[0].msg).toMatch(/^messages from peers come late: .*3060 ms after their slot starts.*go on signing/);
    expect(said[1].msg).toBe("the clock agrees with the network's again");
    expect(said[2].msg).toMatch(/^the clock is off from the network's: .*2940 ms before their slot starts.*sign nothing/);
    expect(said[3].msg).toBe("the clock agrees with the network's again: the node's validators sign again");
  });

  it("a verdict stands only while peers' messages come: a network that fell silent does not stay silent", () => {
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    // every peer's messages 3 s before their slot: this clock is behind, and the validators stop
    const clock = nodeClock(() => -2940);
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

  it("on 1-second slots: off past 500 ms before the slot's start or an epoch (8 s) after it; late past 500 ms after the aggregation deadline (667 ms)", () => {
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    const offAt = (ms: number) => {
      const clock = nodeClock(() => ms);
      const watch = new ClockWatch({config, msIntoSlot: clock.msIntoSlot});
      for (let slot = 0; slot < 8; slot++) {
        watch.onArrival("a", slot)();
        clock.tick(watch, slot + 1);
      }
      const {off, late} = watch.verdict()!;
      return off ? "off" : late ? "late" : "right";
    };
    expect([offAt(-501), offAt(-500), offAt(1166), offAt(1168), offAt(8000), offAt(8001)]).toEqual(["off", "right", "right", "late", "late", "off"]);
  });
});
