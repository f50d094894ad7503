/**
 * The node's own score of each peer, beside gossipsub's: what it did on req/resp, in status
 * handshakes and in sync. Penalties add up, decay back toward zero (half-life 10 minutes), and
 * a peer below the thresholds is disconnected and then banned for a while, as Lighthouse and
 * Lodestar do.
 */

export type PeerAction = "fatal" | "high" | "mid" | "low";

/** Score change of each action: a fatal one bans at once, a high one after a few, a low one after many. */
const ACTION_SCORE: Record<PeerAction, number> = {fatal: -100, high: -10, mid: -5, low: -1};
export const MIN_SCORE = -100;
export const MAX_SCORE = 100;
/** below this, the peer is disconnected */
export const DISCONNECT_THRESHOLD = -20;
/** below this, the peer is also banned */
export const BAN_THRESHOLD = -50;
const HALF_LIFE_MS = 10 * 60_000;
export const BAN_DURATION_MS = 30 * 60_000;

export type ScoreState = "healthy" | "disconnect" | "ban";

interface Entry {
  score: number;
  updatedMs: number;
  bannedUntilMs: number;
}

export class PeerScores {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** The current score of `peer` (decayed to now), 0 for a peer we know nothing about. */
  score(peer: string): number {
    const entry = this.entries.get(peer);
    if (!entry) return 0;
    this.decay(entry);
    return entry.score;
  }

  /** Applies an action and says what should happen to the peer now. */
  apply(peer: string, action: PeerAction): ScoreState {
    const entry = this.entry(peer);
    this.decay(entry);
    entry.score = Math.max(MIN_SCORE, entry.score + ACTION_SCORE[action]);
    const state = this.stateOf(entry.score);
    if (state === "ban") entry.bannedUntilMs = this.now() + BAN_DURATION_MS;
    return state;
  }

  /** Bans `peer` outright, e.g. after a goodbye that says it banned us or a wrong network. */
  ban(peer: string, durationMs = BAN_DURATION_MS): void {
    const entry = this.entry(peer);
    entry.score = MIN_SCORE;
    entry.updatedMs = this.now();
    entry.bannedUntilMs = this.now() + durationMs;
  }

  isBanned(peer: string): boolean {
    const entry = this.entries.get(peer);
    return entry !== undefined && entry.bannedUntilMs > this.now();
  }

  /** What should happen to the peer; `penalty` (≤ 0) is a score from elsewhere added to ours, e.g. gossipsub's. */
  state(peer: string, penalty = 0): ScoreState {
    return this.isBanned(peer) ? "ban" : this.stateOf(this.score(peer) + Math.min(0, penalty));
  }

  /** Forgets peers whose score has decayed back to about zero and whose ban is over. */
  prune(): void {
    for (const [peer, entry] of this.entries) {
      this.decay(entry);
      if (Math.abs(entry.score) < 0.1 && entry.bannedUntilMs <= this.now()) this.entries.delete(peer);
    }
  }

  private stateOf(score: number): ScoreState {
    if (score <= BAN_THRESHOLD) return "ban";
    if (score <= DISCONNECT_THRESHOLD) return "disconnect";
    return "healthy";
  }

  private entry(peer: string): Entry {
    let entry = this.entries.get(peer);
    if (!entry) this.entries.set(peer, (entry = {score: 0, updatedMs: this.now(), bannedUntilMs: 0}));
    return entry;
  }

  private decay(entry: Entry): void {
    const now = this.now();
    // a banned peer's score stays down until its ban ends
    if (entry.bannedUntilMs > now) return;
    const elapsed = now - Math.max(entry.updatedMs, entry.bannedUntilMs);
    if (elapsed > 0) entry.score *= 0.5 ** (elapsed / HALF_LIFE_MS);
    entry.updatedMs = now;
  }
}
