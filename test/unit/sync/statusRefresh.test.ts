import {describe, expect, it} from "@jest/globals";
import {STALLED_REFRESH_SLOTS, StatusRefreshAfterRounds} from "../../../src/sync/statusRefresh.ts";

/** When a node whose range sync round ended asks its peers for their status again. */
describe("status refresh after a range sync round", () => {
  it("asks after every round that got somewhere while the node is still behind the clock", () => {
    const policy = new StatusRefreshAfterRounds();
    expect(policy.shouldRefresh(30, true, 40)).toBe(true);
    expect(policy.shouldRefresh(38, true, 40)).toBe(true);
  });

  it("does not ask when the round reached the clock (the head is within sync distance)", () => {
    const policy = new StatusRefreshAfterRounds();
    expect(policy.shouldRefresh(40, true, 40)).toBe(false);
    expect(policy.shouldRefresh(39, true, 40)).toBe(false);
    expect(policy.shouldRefresh(39, false, 40)).toBe(false);
  });

  it("asks after a round that got nowhere, but not again within a few slots", () => {
    const policy = new StatusRefreshAfterRounds();
    expect(policy.shouldRefresh(39, false, 47)).toBe(true);
    for (let slot = 47; slot < 47 + STALLED_REFRESH_SLOTS; slot++) expect(policy.shouldRefresh(39, false, slot)).toBe(false);
    // a round that got somewhere is not held back by the stalled ones
    expect(policy.shouldRefresh(42, true, 48)).toBe(true);
    expect(policy.shouldRefresh(42, false, 47 + STALLED_REFRESH_SLOTS)).toBe(true);
  });
});
