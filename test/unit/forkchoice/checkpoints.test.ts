import {describe, it, expect} from "@jest/globals";
import {BALANCE, GENESIS, VALIDATOR_COUNT, addBlocks, cp, createForkChoice, root, vote, weightOf} from "./fixtures.ts";

const A = root(0xa1); // slot 8, epoch 1
const B = root(0xb1); // slot 16, epoch 2
const X = root(0x01);
const Y = root(0x02);

describe("ForkChoice justification and finalization", () => {
  it("takes realized checkpoints from blocks, only ever raising their epochs", () => {
    const {fc} = createForkChoice(20);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, justified: cp(1, A)},
    ]);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(1, A));
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(0, GENESIS));

    addBlocks(fc, [{slot: 17, root: root(0xc1), parent: B, justified: cp(2, B), finalized: cp(1, A)}]);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(1, A));

    // a block carrying older checkpoints changes nothing
    addBlocks(fc, [{slot: 18, root: root(0xc2), parent: B, justified: cp(1, A)}]);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(1, A));
  });

  it("applies a current-epoch block's unrealized checkpoints at the next epoch, a previous-epoch block's at once", () => {
    const {fc} = createForkChoice(17);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
    ]);
    // A is from a previous epoch but pulls up nothing new; B is from the current epoch
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(0, GENESIS));

    fc.onTick(23);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(0, GENESIS));
    fc.onTick(24);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(1, A));

    // epoch 3 now: a block from epoch 2 is pulled up immediately
    addBlocks(fc, [{slot: 17, root: root(0xc1), parent: B, unrealizedJustified: cp(2, B), unrealizedFinalized: cp(1, A)}]);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(1, A));
  });

  it("realizes unrealized checkpoints when several slots including an epoch start are skipped", () => {
    const {fc} = createForkChoice(17);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
    ]);
    fc.onTick(30);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(1, A));
  });

  it("weighs votes with the justified state's balances, fetched when the justified checkpoint changes", () => {
    const balancesByEpoch = (epoch: number) => new Array<number>(VALIDATOR_COUNT).fill(epoch === 0 ? BALANCE : 10);
    const {fc, balanceRequests} = createForkChoice(17, {balances: (c) => balancesByEpoch(c.epoch)});
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
    ]);
    vote(fc, [0, 1], B, 2);
    fc.updateHead();
    expect(weightOf(fc, B)).toBe(2 * BALANCE);
    fc.updateHead();
    expect(balanceRequests).toEqual([cp(0, GENESIS)]);

    fc.onTick(24);
    expect(fc.updateHead().blockRoot).toBe(B);
    expect(balanceRequests).toEqual([cp(0, GENESIS), cp(1, A)]);
    expect(weightOf(fc, B)).toBe(2 * 10);
    expect(weightOf(fc, GENESIS)).toBe(2 * 10);
  });

  it("filters a branch whose pulled-up justification is behind once the store's justification is realized", () => {
    const {fc} = createForkChoice(31);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
      {slot: 24, root: X, parent: B, justified: cp(1, A), unrealizedJustified: cp(2, B)},
      {slot: 25, root: Y, parent: B, justified: cp(1, A)},
    ]);
    vote(fc, [0, 1, 2], Y, 3, 25);
    vote(fc, [3], X, 3, 24);
    // epoch 3: both leaves vote from the store's justified epoch 1
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(1, A));
    expect(fc.updateHead().blockRoot).toBe(Y);

    // epoch 4: X's pull-up justifies epoch 2; Y's voting source (epoch 1) is now neither that nor within two epochs
    fc.onTick(32);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    expect(fc.updateHead().blockRoot).toBe(X);
    expect(weightOf(fc, Y)).toBeGreaterThan(weightOf(fc, X));
  });

  it("keeps a lagging branch viable while its voting source is at most two epochs old", () => {
    const {fc} = createForkChoice(24);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
      {slot: 17, root: X, parent: B, justified: cp(1, A), unrealizedJustified: cp(2, B)},
      {slot: 18, root: Y, parent: B, justified: cp(1, A)},
    ]);
    vote(fc, [0, 1, 2], Y, 2, 18);
    vote(fc, [3], X, 2, 17);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    // epoch 3: Y's voting source is epoch 1, not the justified epoch 2, but 1 + 2 >= 3
    expect(fc.updateHead().blockRoot).toBe(Y);

    fc.onTick(32);
    expect(fc.updateHead().blockRoot).toBe(X);
  });

  it("judges viability by leaves only: a viable block whose descendants are all filtered is not a head", () => {
    const P = root(0xf1);
    const Q = root(0xf2);
    const {fc} = createForkChoice(24);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
      {slot: 17, root: X, parent: B, justified: cp(1, A), unrealizedJustified: cp(2, B)},
      {slot: 18, root: P, parent: B, justified: cp(1, A), unrealizedJustified: cp(2, B)},
      // contrived: P's child pulls up less than P does
      {slot: 19, root: Q, parent: P, justified: cp(1, A)},
    ]);
    vote(fc, [0, 1, 2], Q, 2, 19);
    vote(fc, [3], X, 2, 17);
    expect(fc.updateHead().blockRoot).toBe(Q);

    fc.onTick(32);
    expect(fc.updateHead().blockRoot).toBe(X);
    expect(weightOf(fc, P)).toBeGreaterThan(weightOf(fc, X));
  });

  it("filters a leaf whose checkpoint block at the finalized epoch is not the finalized block", () => {
    const F = root(0xf0);
    const {fc} = createForkChoice(25);
    addBlocks(fc, [
      {slot: 7, root: F, parent: GENESIS},
      // on this branch the epoch-1 checkpoint block is C8 itself, not F
      {slot: 8, root: root(0xc8), parent: F, unrealizedJustified: cp(1, root(0xc8))},
      {slot: 9, root: root(0xc9), parent: F, unrealizedJustified: cp(1, F)},
      {slot: 25, root: root(0xd0), parent: F, justified: cp(2, F), finalized: cp(1, F)},
    ]);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, F));
    expect(fc.getFinalizedCheckpoint()).toEqual(cp(1, F));
    vote(fc, [0, 1, 2], root(0xc8), 1, 8);
    vote(fc, [3, 4], root(0xc9), 1, 9);
    vote(fc, [5], root(0xd0), 3, 25);
    fc.onTick(26);
    expect(fc.updateHead().blockRoot).toBe(root(0xc9));
    expect(weightOf(fc, root(0xc8))).toBe(3 * BALANCE);
  });

  it("falls back to the justified block when no leaf below it is viable", () => {
    const {fc} = createForkChoice(24);
    addBlocks(fc, [
      {slot: 8, root: A, parent: GENESIS},
      {slot: 16, root: B, parent: A, unrealizedJustified: cp(1, A)},
      {slot: 17, root: Y, parent: B, justified: cp(1, A)},
      // contrived: a block off B's branch carries the justification of B
      {slot: 9, root: X, parent: GENESIS, justified: cp(2, B)},
    ]);
    vote(fc, [0], Y, 2, 17);
    expect(fc.getJustifiedCheckpoint()).toEqual(cp(2, B));
    expect(fc.updateHead().blockRoot).toBe(Y);

    // epoch 4: Y, the only leaf below B, votes from epoch 1 and is filtered out
    fc.onTick(32);
    expect(fc.updateHead().blockRoot).toBe(B);
  });
});
