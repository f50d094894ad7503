import type {ProtocolName} from "./protocols.ts";

/** `tokens` per `periodMs`, refilled continuously; a request costs the chunks it may get (blocks, sidecars), else 1. */
export interface RateQuota {
  tokens: number;
  periodMs: number;
}

export interface RateLimits {
  quotas?: Partial<Record<ProtocolName, RateQuota>>;
  /**
   * How long a request over its quota may be held back before it is answered (the spec's way of
   * rate limiting: withhold, not refuse). A request that would wait longer is refused.
   */
  maxWithholdMs?: number;
}

/** Per peer and protocol, after Lighthouse's defaults: blocks and sidecars by what they ask for, the rest by request. */
export const DEFAULT_QUOTAS: Record<ProtocolName, RateQuota> = {
  status: {tokens: 5, periodMs: 15_000},
  ping: {tokens: 5, periodMs: 15_000},
  metadata: {tokens: 5, periodMs: 15_000},
  goodbye: {tokens: 1, periodMs: 10_000},
  beacon_blocks_by_range: {tokens: 1024, periodMs: 10_000},
  beacon_blocks_by_root: {tokens: 1024, periodMs: 10_000},
  // MAX_REQUEST_BLOB_SIDECARS_ELECTRA and MAX_REQUEST_DATA_COLUMN_SIDECARS: one full request per period
  blob_sidecars_by_range: {tokens: 1152, periodMs: 10_000},
  blob_sidecars_by_root: {tokens: 1152, periodMs: 10_000},
  data_column_sidecars_by_range: {tokens: 16384, periodMs: 10_000},
  data_column_sidecars_by_root: {tokens: 16384, periodMs: 10_000},
  light_client_bootstrap: {tokens: 5, periodMs: 15_000},
  // MAX_REQUEST_LIGHT_CLIENT_UPDATES: one full request per period
  light_client_updates_by_range: {tokens: 128, periodMs: 10_000},
  light_client_finality_update: {tokens: 5, periodMs: 15_000},
  light_client_optimistic_update: {tokens: 5, periodMs: 15_000},
};
export const DEFAULT_MAX_WITHHOLD_MS = 2_000;

interface Bucket {
  /** may go below zero: tokens already promised to withheld requests */
  tokens: number;
  updatedMs: number;
}

/** Token buckets per peer and protocol, on an injected clock. */
export class RateLimiter {
  private readonly quotas: Record<ProtocolName, RateQuota>;
  private readonly maxWithholdMs: number;
  private readonly buckets = new Map<string, Map<ProtocolName, Bucket>>();
  private readonly now: () => number;

  constructor(limits: RateLimits = {}, now: () => number = Date.now) {
    this.now = now;
    this.quotas = {...DEFAULT_QUOTAS, ...limits.quotas};
    this.maxWithholdMs = limits.maxWithholdMs ?? DEFAULT_MAX_WITHHOLD_MS;
  }

  /**
   * Takes `cost` tokens: 0 when the request may be served now, the milliseconds to hold it back
   * when the tokens will be there within maxWithholdMs (they are reserved), or null when it is
   * over the limit (nothing is taken).
   */
  take(peer: string, protocol: ProtocolName, cost: number): number | null {
    const quota = this.quotas[protocol];
    if (cost > quota.tokens) return null;
    const nowMs = this.now();
    let perPeer = this.buckets.get(peer);
    if (!perPeer) {
      perPeer = new Map();
      this.buckets.set(peer, perPeer);
    }
    let bucket = perPeer.get(protocol);
    if (!bucket) {
      bucket = {tokens: quota.tokens, updatedMs: nowMs};
      perPeer.set(protocol, bucket);
    }
    const ratePerMs = quota.tokens / quota.periodMs;
    bucket.tokens = Math.min(quota.tokens, bucket.tokens + Math.max(0, nowMs - bucket.updatedMs) * ratePerMs);
    bucket.updatedMs = nowMs;
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    const waitMs = Math.ceil((cost - bucket.tokens) / ratePerMs);
    if (waitMs > this.maxWithholdMs) return null;
    bucket.tokens -= cost;
    return waitMs;
  }

  /**
   * Drops the buckets that have refilled completely, which is what a new bucket would be. Peers
   * are not forgotten on disconnect, so that reconnecting does not reset their limits.
   */
  prune(): void {
    const nowMs = this.now();
    for (const [peer, perPeer] of this.buckets) {
      for (const [protocol, bucket] of perPeer) {
        const quota = this.quotas[protocol];
        const refilled = bucket.tokens + Math.max(0, nowMs - bucket.updatedMs) * (quota.tokens / quota.periodMs);
        if (refilled >= quota.tokens) perPeer.delete(protocol);
      }
      if (perPeer.size === 0) this.buckets.delete(peer);
    }
  }

  /** peers with a bucket that is not full (for tests and metrics) */
  get trackedPeers(): number {
    return this.buckets.size;
  }
}
