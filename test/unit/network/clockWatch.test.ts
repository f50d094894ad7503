import {describe, expect, it} from "@jest/globals";
import {Writable} from "node:stream";
import {createBeaconConfig} from "@lodestar/config";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import {ClockWatch} from "../../../src/network/clockWatch.ts";

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
    const watch = new ClockWatch({config, msIntoSlot: () => offset + 60, setOffsetSeconds: (s) => (gauge = s)});
    const run = (from: number, to: number) => {
      for (let slot = from; slot < to; slot++) {
        watch.onArrival("a", slot)();
        watch.onArrival("b", slot)();
        // a message found invalid is not counted
        void watch.onArrival("c", slot);
        watch.onSlot(slot + 1);
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

  it("on 1-second slots: off past 500 ms before the slot's start or 500 ms after the aggregation deadline (667 ms)", () => {
    const config = createBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "phase0", forkEpochs: {}}), new Uint8Array(32));
    const offAt = (ms: number) => {
      const watch = new ClockWatch({config, msIntoSlot: () => ms});
      for (let slot = 0; slot < 8; slot++) {
        watch.onArrival("a", slot)();
        watch.onSlot(slot + 1);
      }
      return watch.verdict()!.off;
    };
    expect([offAt(-501), offAt(-500), offAt(1166), offAt(1168)]).toEqual([true, false, false, true]);
  });
});
