import {describe, expect, it} from "@jest/globals";
import {RateLimiter} from "../../../../src/network/reqresp/rateLimiter.ts";

describe("rate limiter", () => {
  it("refills tokens continuously, per peer and protocol, on the injected clock", () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({quotas: {beacon_blocks_by_range: {tokens: 1024, periodMs: 10_000}}, maxWithholdMs: 0}, () => now);
    expect(limiter.take("a", "beacon_blocks_by_range", 1000)).toBe(0);
    expect(limiter.take("a", "beacon_blocks_by_range", 64)).toBeNull(); // 24 left
    expect(limiter.take("b", "beacon_blocks_by_range", 64)).toBe(0); // another peer
    expect(limiter.take("a", "beacon_blocks_by_root", 64)).toBe(0); // another protocol
    now += 390; // 24 + 39.936 = 63.9 tokens
    expect(limiter.take("a", "beacon_blocks_by_range", 64)).toBeNull();
    now += 1;
    expect(limiter.take("a", "beacon_blocks_by_range", 64)).toBe(0);
    now += 60_000; // never above the quota
    expect(limiter.take("a", "beacon_blocks_by_range", 1024)).toBe(0);
    expect(limiter.take("a", "beacon_blocks_by_range", 1)).toBeNull();
  });

  it("refuses outright a request costing more than the whole quota", () => {
    const limiter = new RateLimiter({quotas: {beacon_blocks_by_range: {tokens: 100, periodMs: 1000}}}, () => 0);
    expect(limiter.take("a", "beacon_blocks_by_range", 101)).toBeNull();
    expect(limiter.take("a", "beacon_blocks_by_range", 100)).toBe(0);
  });

  it("holds back a request that the bucket covers within maxWithholdMs, reserving its tokens", () => {
    let now = 0;
    const limiter = new RateLimiter({quotas: {status: {tokens: 5, periodMs: 15_000}}, maxWithholdMs: 6_000}, () => now);
    for (let i = 0; i < 5; i++) expect(limiter.take("a", "status", 1)).toBe(0);
    expect(limiter.take("a", "status", 1)).toBe(3_000); // one token per 3 s
    expect(limiter.take("a", "status", 1)).toBe(6_000); // behind the one already promised
    expect(limiter.take("a", "status", 1)).toBeNull();
    now += 6_000;
    expect(limiter.take("a", "status", 1)).toBe(3_000);
  });

  it("defaults: status, ping and metadata 5 per 15 s, goodbye 1 per 10 s, blocks 1024 per 10 s", () => {
    const limiter = new RateLimiter({maxWithholdMs: 0}, () => 0);
    for (const protocol of ["status", "ping", "metadata"] as const) {
      for (let i = 0; i < 5; i++) expect(limiter.take("a", protocol, 1)).toBe(0);
      expect(limiter.take("a", protocol, 1)).toBeNull();
    }
    expect(limiter.take("a", "goodbye", 1)).toBe(0);
    expect(limiter.take("a", "goodbye", 1)).toBeNull();
    expect(limiter.take("a", "beacon_blocks_by_range", 1024)).toBe(0);
    expect(limiter.take("a", "beacon_blocks_by_range", 1)).toBeNull();
  });

  it("forgets only buckets that have refilled, so reconnecting resets nothing", () => {
    let now = 0;
    const limiter = new RateLimiter({maxWithholdMs: 0}, () => now);
    limiter.take("a", "goodbye", 1);
    limiter.take("b", "ping", 1);
    now += 5_000; // b's ping bucket refilled 5/15 of its 5 tokens: full again
    limiter.prune();
    expect(limiter.trackedPeers).toBe(1);
    expect(limiter.take("a", "goodbye", 1)).toBeNull();
    now += 10_000;
    limiter.prune();
    expect(limiter.trackedPeers).toBe(0);
  });
});
