import {describe, expect, it} from "@jest/globals";
import {BAN_DURATION_MS, BAN_THRESHOLD, DISCONNECT_THRESHOLD, MIN_SCORE, PeerScores} from "../../../../src/network/peers/peerScore.ts";

// The numbers the module documents, restated here so that a change to them fails a test:
// high -10, mid -5, low -1, fatal -100; half-life 10 minutes; disconnect at <= -20, ban at <= -50 for 30 minutes.
const MINUTE = 60_000;
const HALF_LIFE = 10 * MINUTE;
const decayed = (score: number, elapsedMs: number) => score * Math.pow(2, -elapsedMs / HALF_LIFE);

function scoresAt(startMs = 1_000_000) {
  const clock = {now: startMs};
  return {clock, scores: new PeerScores(() => clock.now)};
}

describe("PeerScores", () => {
  it("documents the thresholds and the ban duration it uses", () => {
    expect([DISCONNECT_THRESHOLD, BAN_THRESHOLD, MIN_SCORE, BAN_DURATION_MS]).toEqual([-20, -50, -100, 30 * MINUTE]);
  });

  it("scores an unknown peer 0 and healthy", () => {
    const {scores} = scoresAt();
    expect(scores.score("p")).toBe(0);
    expect(scores.state("p")).toBe("healthy");
    expect(scores.isBanned("p")).toBe(false);
  });

  it("halves a penalty every 10 minutes of the injected clock", () => {
    const {clock, scores} = scoresAt();
    expect(scores.apply("p", "high")).toBe("healthy");
    expect(scores.score("p")).toBe(-10);
    clock.now += HALF_LIFE;
    expect(scores.score("p")).toBeCloseTo(-5, 9);
    clock.now += HALF_LIFE;
    expect(scores.score("p")).toBeCloseTo(-2.5, 9);
    clock.now += 3 * MINUTE;
    expect(scores.score("p")).toBeCloseTo(decayed(-10, 23 * MINUTE), 9);
  });

  it("adds a new penalty to the decayed score", () => {
    const {clock, scores} = scoresAt();
    scores.apply("p", "high");
    clock.now += HALF_LIFE;
    scores.apply("p", "high");
    expect(scores.score("p")).toBeCloseTo(-15, 9);
  });

  it("does not decay with no time passing, however often it is read", () => {
    const {scores} = scoresAt();
    scores.apply("p", "mid");
    for (let i = 0; i < 5; i++) expect(scores.score("p")).toBe(-5);
  });

  it("asks for a disconnect at -20 and a ban at -50, per the action sizes", () => {
    const {scores} = scoresAt();
    expect(scores.apply("high", "high")).toBe("healthy"); // -10
    expect(scores.apply("high", "high")).toBe("disconnect"); // -20: at the threshold
    expect(scores.apply("high", "high")).toBe("disconnect"); // -30
    expect(scores.apply("high", "high")).toBe("disconnect"); // -40
    expect(scores.isBanned("high")).toBe(false);
    expect(scores.apply("high", "high")).toBe("ban"); // -50: at the threshold
    expect(scores.isBanned("high")).toBe(true);
    expect(scores.state("high")).toBe("ban");

    for (let i = 1; i <= 3; i++) expect(scores.apply("mid", "mid")).toBe("healthy"); // -15
    expect(scores.apply("mid", "mid")).toBe("disconnect"); // -20

    for (let i = 1; i <= 19; i++) expect(scores.apply("low", "low")).toBe("healthy"); // -19
    expect(scores.apply("low", "low")).toBe("disconnect"); // -20
    expect(scores.score("low")).toBe(-20);
    expect(scores.state("low")).toBe("disconnect");
  });

  it("a score decayed back above -20 is healthy again", () => {
    const {clock, scores} = scoresAt();
    scores.apply("p", "high");
    scores.apply("p", "high");
    expect(scores.state("p")).toBe("disconnect");
    clock.now += 1; // -20 * 2^(-1/600000) > -20
    expect(scores.state("p")).toBe("healthy");
  });

  it("bans at once for a fatal action, and never goes below the minimum", () => {
    const {scores} = scoresAt();
    expect(scores.apply("p", "fatal")).toBe("ban");
    expect(scores.isBanned("p")).toBe(true);
    expect(scores.score("p")).toBe(-100);
    expect(scores.apply("p", "fatal")).toBe("ban");
    expect(scores.score("p")).toBe(-100);
  });

  it("keeps a ban for 30 minutes, with the score held down meanwhile, then decays it from the ban's end", () => {
    const {clock, scores} = scoresAt();
    for (let i = 0; i < 5; i++) scores.apply("p", "high"); // -50: banned
    const bannedAt = clock.now;
    clock.now = bannedAt + 30 * MINUTE - 1;
    expect(scores.isBanned("p")).toBe(true);
    expect(scores.state("p")).toBe("ban");
    expect(scores.score("p")).toBe(-50);
    clock.now = bannedAt + 30 * MINUTE;
    expect(scores.isBanned("p")).toBe(false);
    expect(scores.score("p")).toBe(-50);
    clock.now = bannedAt + 30 * MINUTE + HALF_LIFE;
    expect(scores.score("p")).toBeCloseTo(-25, 9);
    expect(scores.state("p")).toBe("disconnect");
  });

  it("a further penalty while banned extends the ban from that moment", () => {
    const {clock, scores} = scoresAt();
    scores.apply("p", "fatal");
    clock.now += 20 * MINUTE;
    expect(scores.apply("p", "low")).toBe("ban");
    clock.now += 29 * MINUTE; // 49 minutes after the first ban, 29 after the second
    expect(scores.isBanned("p")).toBe(true);
    clock.now += MINUTE;
    expect(scores.isBanned("p")).toBe(false);
  });

  it("ban() sets the minimum score for the given duration (30 minutes by default)", () => {
    const {clock, scores} = scoresAt();
    scores.ban("a");
    scores.ban("b", 5 * MINUTE);
    expect(scores.score("a")).toBe(MIN_SCORE);
    expect(scores.isBanned("a") && scores.isBanned("b")).toBe(true);
    clock.now += 5 * MINUTE;
    expect(scores.isBanned("b")).toBe(false);
    expect(scores.isBanned("a")).toBe(true);
    clock.now += 25 * MINUTE;
    expect(scores.isBanned("a")).toBe(false);
  });

  it("prune() forgets a peer once its score has decayed to about zero, not before", () => {
    const {clock, scores} = scoresAt();
    scores.apply("p", "high");
    // -10 * 2^-6 = -0.156: still remembered
    clock.now += 60 * MINUTE;
    scores.prune();
    expect(scores.score("p")).toBeCloseTo(decayed(-10, 60 * MINUTE), 9);
    expect(scores.score("p")).not.toBe(0);
    // -10 * 2^-7 = -0.078: forgotten, so it reads exactly 0 (an unknown peer)
    clock.now += 10 * MINUTE;
    expect(scores.score("p")).toBeLessThan(0);
    scores.prune();
    expect(scores.score("p")).toBe(0);
  });

  it("prune() keeps a banned peer until its ban is over and its score has decayed", () => {
    const {clock, scores} = scoresAt();
    scores.ban("p");
    const bannedAt = clock.now;
    clock.now = bannedAt + 29 * MINUTE;
    scores.prune();
    expect(scores.isBanned("p")).toBe(true);
    expect(scores.score("p")).toBe(-100);
    // from -100 it takes log2(1000) = 9.97 half-lives after the ban to fall under 0.1
    clock.now = bannedAt + 30 * MINUTE + 90 * MINUTE;
    scores.prune();
    expect(scores.score("p")).toBeCloseTo(decayed(-100, 90 * MINUTE), 9);
    clock.now = bannedAt + 30 * MINUTE + 100 * MINUTE;
    scores.prune();
    expect(scores.score("p")).toBe(0);
  });
});
