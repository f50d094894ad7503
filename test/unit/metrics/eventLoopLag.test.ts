import {afterEach, beforeEach, describe, expect, it, jest} from "@jest/globals";
import {EventLoopLagMonitor} from "../../../src/metrics/eventLoopLag.ts";

/** The lag is how late the probe timer fires past its due time, sampled again and again. */
describe("EventLoopLagMonitor", () => {
  let now = 0;
  let samples: number[];
  let monitor: EventLoopLagMonitor;

  beforeEach(() => {
    jest.useFakeTimers();
    now = 0;
    samples = [];
    monitor = new EventLoopLagMonitor({intervalMs: 500, onSample: (s) => samples.push(s), now: () => now});
    monitor.start();
  });
  afterEach(() => {
    monitor.stop();
    jest.useRealTimers();
  });

  it("reports no lag when the timer fires on time", () => {
    now = 500;
    jest.advanceTimersByTime(500);
    expect(samples).toEqual([0]);
  });

  it("reports, in seconds, how long past its due time a timer fired", () => {
    // the loop was blocked: the timer due at 500 ms runs at 750 ms
    now = 750;
    jest.advanceTimersByTime(500);
    expect(samples).toEqual([0.25]);
    // the next probe is due 500 ms after that; it runs 1.5 s late
    now = 750 + 500 + 1500;
    jest.advanceTimersByTime(500);
    expect(samples).toEqual([0.25, 1.5]);
  });

  it("keeps sampling until stopped, then stops", () => {
    for (let i = 1; i <= 3; i++) {
      now = i * 500;
      jest.advanceTimersByTime(500);
    }
    expect(samples).toHaveLength(3);
    monitor.stop();
    jest.advanceTimersByTime(5000);
    expect(samples).toHaveLength(3);
    expect(jest.getTimerCount()).toBe(0);
  });
});
