import {describe, it, expect} from "@jest/globals";
import {GENESIS, createForkChoice, makeBlock, root, vote, weightOf} from "./fixtures.ts";
import type {ForkChoice} from "../../../src/forkchoice/index.ts";

/**
 * Optimistic import and invalidation (consensus-specs sync/optimistic.md; the latestValidHash
 * rule of engine-api paris.md "Payload validation process"): a block whose payload the engine
 * has not judged is optimistic; INVALID invalidates the block, its ancestors newer than the
 * latest valid hash, and every descendant, and none of them can be the head.
 */

const hash = (n: number): string => "0x" + n.toString(16).padStart(64, "e");
const A = root(0xa0);
const B = root(0xb0);
const C = root(0xc0);
const D = root(0xd0);
const E = root(0xe0);

/** GENESIS(valid, hash 0x..e01) ← A ← B ← C, with a sibling branch A ← D; A is valid, the rest optimistic. */
function tree(): ForkChoice {
  const genesis = {...makeBlock({slot: 0, root: GENESIS, parent: root(0)}), executionBlockHash: hash(1)};
  const {fc} = createForkChoice(10, {anchor: genesis});
  const add = (slot: number, r: string, parent: string, h: number, optimistic: boolean) =>
    fc.onBlock({...makeBlock({slot, root: r, parent}), executionBlockHash: hash(h)}, {isTimely: false, optimistic});
  add(1, A, GENESIS, 0xa, false);
  add(2, B, A, 0xb, true);
  add(3, C, B, 0xc, true);
  add(2, D, A, 0xd, true);
  return fc;
}

describe("ForkChoice execution validity", () => {
  it("records optimistic imports, and VALID makes the block and its ancestors valid", () => {
    const fc = tree();
    expect(fc.getValidity(A)).toBe("valid");
    expect(fc.getValidity(C)).toBe("optimistic");
    fc.onPayloadValid(C);
    expect([fc.getValidity(A), fc.getValidity(B), fc.getValidity(C)]).toEqual(["valid", "valid", "valid"]);
    expect(fc.getValidity(D)).toBe("optimistic");
    expect(fc.getValidity(E)).toBeNull();
  });

  it("INVALID with a latest valid hash invalidates back to that block and everything built on them", () => {
    const fc = tree();
    const invalidated = fc.onPayloadInvalid(C, hash(0xa));
    expect(invalidated.map((b) => b.blockRoot).sort()).toEqual([B, C].sort());
    expect([fc.getValidity(A), fc.getValidity(B), fc.getValidity(C), fc.getValidity(D)]).toEqual(["valid", "invalid", "invalid", "optimistic"]);
  });

  it("INVALID with a null or unknown latest valid hash invalidates only the block and its descendants", () => {
    const fc = tree();
    expect(fc.onPayloadInvalid(B, null).map((b) => b.blockRoot).sort()).toEqual([B, C].sort());
    expect(fc.getValidity(A)).toBe("valid");
    const other = tree();
    expect(other.onPayloadInvalid(C, hash(0x999)).map((b) => b.blockRoot)).toEqual([C]);
    expect(other.getValidity(B)).toBe("optimistic");
  });

  it("never invalidates a block the engine already found valid", () => {
    const fc = tree();
    // the zero hash says no post-merge ancestor is valid, but A was validated: the walk stops at it
    fc.onPayloadInvalid(C, "0x" + "00".repeat(32));
    expect([fc.getValidity(A), fc.getValidity(B), fc.getValidity(C)]).toEqual(["valid", "invalid", "invalid"]);
    expect(fc.onPayloadInvalid(A, null)).toEqual([]);
    expect(fc.getValidity(A)).toBe("valid");
  });

  it("moves the head off invalid blocks, even the heavier branch, and onto the best remaining one", () => {
    const fc = tree();
    // every vote on C: C is the head while it is only optimistic
    vote(fc, Array.from({length: 20}, (_, i) => i), C, 0);
    fc.onTick(11);
    expect(fc.updateHead().blockRoot).toBe(C);
    fc.onPayloadInvalid(C, hash(0xa));
    expect(fc.updateHead().blockRoot).toBe(D);
    // with D invalid too, A (whose children are all invalid) is the head
    fc.onPayloadInvalid(D, hash(0xa));
    expect(fc.updateHead().blockRoot).toBe(A);
  });

  it("takes an invalid block's weight off its ancestors (regression: the votes on it kept its branch the heaviest)", () => {
    // sync/optimistic.md, Fork Choice: "a block deemed INVALIDATED at any point MUST NOT be included
    // in the canonical chain and the weights from those INVALIDATED blocks MUST NOT be applied to
    // any VALID or NOT_VALIDATED ancestors". Found by the differential test against Lodestar 1.5.1.
    const fc = tree();
    vote(fc, [0, 1, 2, 3, 4, 5], C, 0);
    vote(fc, [6, 7, 8, 9], D, 0);
    fc.onTick(11);
    expect(fc.updateHead().blockRoot).toBe(C);
    fc.onPayloadInvalid(B, hash(0xa));
    const headAfter = fc.updateHead().blockRoot;
    const weights = Object.fromEntries(fc.getAllNodes().map((n) => [n.blockRoot, n.weight]));
    expect([weights[B], weights[C]]).toEqual([0, 0]);
    // A carries D's four votes only, not C's six
    expect(weights[A]).toBe(weights[D]);
    expect(headAfter).toBe(D);
    // votes moving off the invalid block change nothing above it
    vote(fc, [0, 1], D, 1);
    fc.onTick(20);
    fc.updateHead();
    expect(weightOf(fc, A)).toBe(weightOf(fc, D));
    expect(weightOf(fc, C)).toBe(0);
  });
});
