import {describe, it, expect} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
describe("smoke", () => {
  it("loads lodestar types in the minimal preset", () => {
    expect(SLOTS_PER_EPOCH).toBe(8);
    expect(ssz.phase0.Checkpoint.toJson({epoch: 3, root: new Uint8Array(32)})).toEqual({epoch: "3", root: "0x" + "00".repeat(32)});
  });
});
