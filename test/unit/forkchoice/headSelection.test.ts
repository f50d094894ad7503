import {describe, it, expect} from "@jest/globals";
import {
  BALANCE,
  GENESIS,
  PROPOSER_BOOST,
  addBlocks,
  createForkChoice,
  makeBlock,
  root,
  vote,
  weightOf,
} from "./fixtures.ts";

const A = root(0xa);
const B = root(0xb);

describe("ForkChoice head selection (LMD-GHOST)", () => {
  it("follows a linear chain to its tip", () => {
    const {fc} = createForkChoice(10);
    expect(fc.getHead().blockRoot).toBe(GENESIS);
    addBlocks(fc, [
      {slot: 1, root: root(1), parent: GENESIS},
      {slot: 2, root: root(2), parent: root(1)},
      {slot: 4, root: root(3), parent: root(2)},
    ]);
    // head is only recomputed by updateHead
    expect(fc.getHead().blockRoot).toBe(GENESIS);
    expect(fc.updateHead().blockRoot).toBe(root(3));
    expect(fc.getHead().blockRoot).toBe(root(3));
    expect(fc.getHeads().map((b) => b.blockRoot)).toEqual([root(3)]);
  });

  it("moves the head between two forks as votes change, under the latest-message rule", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 1, root: A, parent: GENESIS},
      {slot: 1, root: B, parent: GENESIS},
    ]);

    vote(fc, [0, 1], A, 0);
    expect(fc.updateHead().blockRoot).toBe(A);

    vote(fc, [2, 3, 4], B, 0);
    expect(fc.updateHead().blockRoot).toBe(B);
    expect(weightOf(fc, A)).toBe(2 * BALANCE);
    expect(weightOf(fc, B)).toBe(3 * BALANCE);

    // same target epoch: not a newer message, ignored
    vote(fc, [2, 3, 4], A, 0);
    expect(fc.updateHead().blockRoot).toBe(B);

    // newer target epoch: the votes move and the head moves back
    vote(fc, [2, 3, 4], A, 1);
    expect(fc.updateHead().blockRoot).toBe(A);
    expect(weightOf(fc, A)).toBe(5 * BALANCE);
    expect(weightOf(fc, B)).toBe(0);
    expect(weightOf(fc, GENESIS)).toBe(5 * BALANCE);

    // an older target epoch never overrides
    vote(fc, [2, 3, 4], B, 0);
    expect(fc.updateHead().blockRoot).toBe(A);
  });

  it("ignores votes for unknown blocks", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 1, root: A, parent: GENESIS},
      {slot: 1, root: B, parent: GENESIS},
    ]);
    vote(fc, [0], A, 0);
    vote(fc, [1, 2], root(0xdead), 0);
    expect(fc.updateHead().blockRoot).toBe(A);
    expect(weightOf(fc, GENESIS)).toBe(BALANCE);
  });

  it("breaks ties by the lexicographically higher root", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 1, root: root(0x0b), parent: GENESIS},
      {slot: 1, root: root(0x0a), parent: GENESIS},
      {slot: 2, root: root(0x01), parent: root(0x0a)},
    ]);
    expect(fc.updateHead().blockRoot).toBe(root(0x0b));

    // equal subtree weight at the fork: still the higher root, even though the vote sits deeper in the other branch
    vote(fc, [0], root(0x01), 0);
    vote(fc, [1], root(0x0b), 0);
    expect(fc.updateHead().blockRoot).toBe(root(0x0b));

    vote(fc, [2], root(0x01), 0);
    expect(fc.updateHead().blockRoot).toBe(root(0x01));
  });

  it("boosts a timely block of the current slot over a sibling with a vote, and drops the boost next slot", () => {
    const {fc} = createForkChoice(1);
    addBlocks(fc, [{slot: 1, root: A, parent: GENESIS}]);
    vote(fc, [0], A, 0, 1);
    fc.onTick(2);
    expect(fc.updateHead().blockRoot).toBe(A);

    // root 0x05 < A, so only the boost can make it head
    fc.onBlock(makeBlock({slot: 2, root: root(0x05), parent: GENESIS}), {isTimely: true});
    expect(fc.updateHead().blockRoot).toBe(root(0x05));
    expect(weightOf(fc, root(0x05))).toBe(PROPOSER_BOOST);
    expect(weightOf(fc, GENESIS)).toBe(PROPOSER_BOOST + BALANCE);

    // only the first timely block of a slot gets the boost
    fc.onBlock(makeBlock({slot: 2, root: root(0x06), parent: GENESIS}), {isTimely: true});
    expect(fc.updateHead().blockRoot).toBe(root(0x05));
    expect(weightOf(fc, root(0x06))).toBe(0);

    fc.onTick(3);
    expect(fc.updateHead().blockRoot).toBe(A);
    expect(weightOf(fc, root(0x05))).toBe(0);
    expect(weightOf(fc, GENESIS)).toBe(BALANCE);
  });

  it("gives no boost to a late block or to a block from an earlier slot", () => {
    const {fc} = createForkChoice(3);
    addBlocks(fc, [{slot: 1, root: A, parent: GENESIS}]);
    vote(fc, [0], A, 0, 1);
    fc.onBlock(makeBlock({slot: 3, root: root(0x05), parent: GENESIS}), {isTimely: false});
    fc.onBlock(makeBlock({slot: 2, root: root(0x06), parent: GENESIS}), {isTimely: true});
    expect(fc.updateHead().blockRoot).toBe(A);
    expect(weightOf(fc, root(0x05))).toBe(0);
    expect(weightOf(fc, root(0x06))).toBe(0);
  });

  it("counts an attestation only from the slot after its own, and a future target only once its epoch arrives", () => {
    const {fc} = createForkChoice(1);
    addBlocks(fc, [
      {slot: 1, root: A, parent: GENESIS},
      {slot: 1, root: B, parent: GENESIS},
    ]);
    vote(fc, [0], A, 0, 1);
    expect(fc.updateHead().blockRoot).toBe(B);
    fc.onTick(2);
    expect(fc.updateHead().blockRoot).toBe(A);

    // target epoch 1 while in epoch 0; without a slot the earliest slot of epoch 1 (8) is assumed
    vote(fc, [1, 2], B, 1);
    fc.onTick(8);
    expect(fc.updateHead().blockRoot).toBe(A);
    fc.onTick(9);
    expect(fc.updateHead().blockRoot).toBe(B);
    expect(weightOf(fc, B)).toBe(2 * BALANCE);
  });

  it("removes equivocating validators' weight for good", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 1, root: A, parent: GENESIS},
      {slot: 1, root: root(0x09), parent: GENESIS},
    ]);
    vote(fc, [0, 1], A, 0);
    vote(fc, [2], root(0x09), 0);
    expect(fc.updateHead().blockRoot).toBe(A);

    fc.onAttesterSlashing([0, 1]);
    expect(fc.updateHead().blockRoot).toBe(root(0x09));
    expect(weightOf(fc, A)).toBe(0);
    expect(weightOf(fc, GENESIS)).toBe(BALANCE);

    vote(fc, [0, 1], A, 1);
    expect(fc.updateHead().blockRoot).toBe(root(0x09));
    expect(weightOf(fc, A)).toBe(0);
  });

  it("lists every leaf as a head and reports node weights and validity", () => {
    const {fc} = createForkChoice(10);
    addBlocks(fc, [
      {slot: 1, root: A, parent: GENESIS},
      {slot: 2, root: B, parent: GENESIS},
    ]);
    fc.onBlock(makeBlock({slot: 3, root: root(0xc), parent: A}), {isTimely: false, optimistic: true});
    vote(fc, [0], root(0xc), 0);
    fc.updateHead();
    expect(new Set(fc.getHeads().map((b) => b.blockRoot))).toEqual(new Set([B, root(0xc)]));
    const nodes = fc.getAllNodes();
    expect(nodes.map((n) => [n.blockRoot, n.weight, n.validity])).toEqual([
      [GENESIS, BALANCE, "valid"],
      [A, BALANCE, "valid"],
      [B, 0, "valid"],
      [root(0xc), BALANCE, "optimistic"],
    ]);
    expect(nodes[3].parentRoot).toBe(A);
  });
});
