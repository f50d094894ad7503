import {describe, expect, it} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {shouldJoinGossip} from "../../../src/network/gossipRouter.ts";

// Lodestar's and Lighthouse's rule: gossip once synced (range sync idle, within an epoch of the
// clock); leave only when more than two epochs behind
describe("when the node takes part in gossip", () => {
  it("joins once range sync is idle and the head is within an epoch of the clock", () => {
    expect(shouldJoinGossip(false, 0, false)).toBe(true);
    expect(shouldJoinGossip(false, SLOTS_PER_EPOCH, false)).toBe(true);
    expect(shouldJoinGossip(false, SLOTS_PER_EPOCH + 1, false)).toBe(false);
    expect(shouldJoinGossip(false, 2, true)).toBe(false);
  });

  it("stays joined through a few empty slots, and leaves more than two epochs behind", () => {
    expect(shouldJoinGossip(true, 2 * SLOTS_PER_EPOCH, true)).toBe(true);
    expect(shouldJoinGossip(true, 2 * SLOTS_PER_EPOCH + 1, false)).toBe(false);
  });

  it("a node restarted far behind stays out until it has synced", () => {
    let joined = shouldJoinGossip(false, 5 * SLOTS_PER_EPOCH, false);
    expect(joined).toBe(false);
    joined = shouldJoinGossip(joined, 3 * SLOTS_PER_EPOCH, true); // range sync under way
    expect(joined).toBe(false);
    joined = shouldJoinGossip(joined, 1, false); // range sync done
    expect(joined).toBe(true);
  });
});
