import {describe, it, expect} from "@jest/globals";
import {ForkChoiceError} from "../../../src/forkchoice/index.ts";
import {BALANCE, GENESIS, addBlocks, cp, createForkChoice, genesisBlock, makeBlock, root, vote, weightOf} from "./fixtures.ts";

const A = root(0xa0);
const B = root(0xb0);
const C = root(0xc0);
const D = root(0xd0);

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ForkChoiceError) return e.code;
    throw e;
  }
  return undefined;
}

/** A and its descendants C and D, which finalizes A; B a sibling of A that a prune removes. */
function addFinalizingFork(fc: ReturnType<typeof createForkChoice>["fc"]): void {
  addBlocks(fc, [
    {slot: 8, root: A, parent: GENESIS},
    {slot: 9, root: B, parent: GENESIS},
    {slot: 16, root: C, parent: A, justified: cp(1, A)},
    {slot: 24, root: D, parent: C, justified: cp(2, C), finalized: cp(1, A)},
  ]);
}

describe("ForkChoice block tree", () => {
  it("answers ancestor and descendant queries across skipped slots and forks", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 2, root: A, parent: GENESIS},
      {slot: 5, root: B, parent: A},
      {slot: 3, root: C, parent: GENESIS},
    ]);
    expect(fc.getAncestor(B, 5)).toBe(B);
    expect(fc.getAncestor(B, 9)).toBe(B);
    expect(fc.getAncestor(B, 4)).toBe(A);
    expect(fc.getAncestor(B, 2)).toBe(A);
    expect(fc.getAncestor(B, 1)).toBe(GENESIS);
    expect(fc.getAncestor(C, 2)).toBe(GENESIS);
    expect(fc.getAncestor(root(0x99), 2)).toBeNull();

    expect(fc.isDescendant(A, B)).toBe(true);
    expect(fc.isDescendant(GENESIS, C)).toBe(true);
    expect(fc.isDescendant(B, B)).toBe(true);
    expect(fc.isDescendant(A, C)).toBe(false);
    expect(fc.isDescendant(B, A)).toBe(false);
    expect(fc.isDescendant(root(0x99), B)).toBe(false);
    expect(fc.isDescendant(A, root(0x99))).toBe(false);

    expect([...fc.iterateAncestors(B)].map((b) => b.blockRoot)).toEqual([B, A, GENESIS]);
    expect([...fc.iterateAncestors(root(0x99))]).toEqual([]);
    expect(fc.getBlock(B)?.slot).toBe(5);
    expect(fc.hasBlock(C)).toBe(true);
    expect(fc.hasBlock(root(0x99))).toBe(false);
  });

  it("rejects blocks with an unknown parent, from the future, or not after their parent, changing nothing", () => {
    const {fc} = createForkChoice(5);
    addBlocks(fc, [{slot: 3, root: A, parent: GENESIS}]);
    expect(codeOf(() => fc.onBlock(makeBlock({slot: 4, root: B, parent: root(0x99)}), {isTimely: false}))).toBe("PARENT_UNKNOWN");
    expect(codeOf(() => fc.onBlock(makeBlock({slot: 6, root: B, parent: A}), {isTimely: false}))).toBe("FUTURE_SLOT");
    expect(codeOf(() => fc.onBlock(makeBlock({slot: 3, root: B, parent: A}), {isTimely: false}))).toBe("NOT_LATER_THAN_PARENT");
    const raisesJustification = makeBlock({slot: 7, root: B, parent: A, justified: cp(1, A)});
    expect(codeOf(() => fc.onBlock(raisesJustification, {isTimely: false}))).toBe("FUTURE_SLOT");
    expect(fc.hasBlock(B)).toBe(false);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(0, GENESIS));
    expect(fc.getAllNodes()).toHaveLength(2);
  });

  it("rejects blocks that conflict with the finalized checkpoint", () => {
    const {fc} = createForkChoice(20);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 9, root: B, parent: GENESIS},
      {slot: 17, root: C, parent: A, justified: cp(1, A), finalized: cp(1, A)},
    ]);
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(1, A));
    // on B's branch the epoch-1 checkpoint block is B, not A
    expect(codeOf(() => fc.onBlock(makeBlock({slot: 18, root: D, parent: B}), {isTimely: false}))).toBe("WOULD_REVERT_FINALIZED");
    // not after the finalized epoch's start slot
    expect(codeOf(() => fc.onBlock(makeBlock({slot: 8, root: D, parent: GENESIS}), {isTimely: false}))).toBe("WOULD_REVERT_FINALIZED");
    expect(fc.hasBlock(D)).toBe(false);
    fc.onBlock(makeBlock({slot: 18, root: D, parent: C}), {isTimely: false});
    expect(fc.hasBlock(D)).toBe(true);
  });

  it("ignores a block it already has", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [{slot: 1, root: A, parent: GENESIS}]);
    fc.onBlock(makeBlock({slot: 1, root: A, parent: GENESIS, justified: cp(5, A)}), {isTimely: false});
    expect(fc.getAllNodes()).toHaveLength(2);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(0, GENESIS));
  });

  it("requires the anchor to be its own justified and finalized checkpoint", () => {
    const anchor = {...genesisBlock(), justifiedCheckpoint: cp(0, root(0))};
    expect(codeOf(() => createForkChoice(0, {anchor}))).toBe("INVALID_ANCHOR");
  });

  it("counts votes queued before a prune for their blocks at their new places, and a vote for a pruned block for nothing", () => {
    const {fc} = createForkChoice(24);
    addFinalizingFork(fc);
    // attestations of the current slot: they count from the next one
    vote(fc, [1, 2], D, 3, 24);
    vote(fc, [3], C, 3, 24);
    vote(fc, [0], B, 3, 24);
    fc.updateHead();
    expect(weightOf(fc, D)).toBe(0);
    // GENESIS and B go: A, C and D move to the front of the array
    expect(fc.prune().map((b) => b.blockRoot)).toEqual([GENESIS, B]);
    fc.onTick(25);
    expect(fc.updateHead().blockRoot).toBe(D);
    expect(weightOf(fc, D)).toBe(2 * BALANCE);
    expect(weightOf(fc, C)).toBe(3 * BALANCE);
    expect(weightOf(fc, A)).toBe(3 * BALANCE);
  });

  it("prunes everything not descending from the finalized block, keeping the head and vote accounting", () => {
    const E = root(0xe0);
    const {fc} = createForkChoice(24);
    addFinalizingFork(fc);
    vote(fc, [0], B, 1);
    vote(fc, [1, 2], D, 3, 24);
    fc.onTick(25);
    expect(fc.updateHead().blockRoot).toBe(D);

    const removed = fc.prune();
    expect(removed.map((b) => b.blockRoot)).toEqual([GENESIS, B]);
    expect(fc.getHead().blockRoot).toBe(D);
    expect(fc.updateHead().blockRoot).toBe(D);
    expect(fc.hasBlock(B)).toBe(false);
    expect(fc.getBlock(GENESIS)).toBeNull();
    expect(fc.getAllNodes().map((n) => n.blockRoot)).toEqual([A, C, D]);
    expect([...fc.iterateAncestors(D)].map((b) => b.blockRoot)).toEqual([D, C, A]);
    expect(fc.getAncestor(D, 0)).toBeNull();
    expect(fc.prune()).toEqual([]);

    // votes keep pointing at the right nodes after the indices shift
    fc.onTick(32);
    addBlocks(fc, [{slot: 32, root: E, parent: C, justified: cp(2, C)}]);
    vote(fc, [1], E, 4, 32);
    vote(fc, [0], E, 4, 32);
    fc.onTick(33);
    expect(fc.updateHead().blockRoot).toBe(E);
    expect(weightOf(fc, E)).toBe(2 * BALANCE);
    expect(weightOf(fc, D)).toBe(BALANCE);
    expect(weightOf(fc, A)).toBe(3 * BALANCE);
    vote(fc, [2], E, 4, 32);
    expect(fc.updateHead().blockRoot).toBe(E);
    expect(weightOf(fc, D)).toBe(0);
    expect(weightOf(fc, C)).toBe(3 * BALANCE);
  });
});
