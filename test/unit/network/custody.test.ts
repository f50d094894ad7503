import {describe, expect, it} from "@jest/globals";
import {createHash} from "node:crypto";
import {columnsForCustodyGroup, getCustodyGroups, ourCustodyGroupCount, samplingColumns, validatorsCustodyRequirement} from "../../../src/network/custody.ts";

/** fulu das-core.md's custody functions, on the mainnet/minimal values (128 groups, 128 columns). */
const config = {NUMBER_OF_CUSTODY_GROUPS: 128, SAMPLES_PER_SLOT: 8, CUSTODY_REQUIREMENT: 4};

describe("data column custody (fulu das-core.md)", () => {
  it("node id 0's first group is sha256 of 32 zero bytes, its first 8 bytes little endian, mod 128", () => {
    const digest = createHash("sha256").update(new Uint8Array(32)).digest();
    expect(digest.toString("hex")).toBe("66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
    expect(getCustodyGroups(config, 0n, 1)).toEqual([Number(digest.readBigUInt64LE(0) % 128n)]);
    expect(getCustodyGroups(config, 0n, 1)).toEqual([102]);
  });

  it("a larger count extends the groups of a smaller one; all groups for a supernode; no repeats", () => {
    const nodeId = BigInt("0x" + "ab".repeat(32));
    const four = getCustodyGroups(config, nodeId, 4);
    const eight = getCustodyGroups(config, nodeId, 8);
    expect(four).toHaveLength(4);
    expect(new Set(eight).size).toBe(8);
    for (const g of four) expect(eight).toContain(g);
    expect(getCustodyGroups(config, nodeId, 128)).toEqual(Array.from({length: 128}, (_, i) => i));
    expect(() => getCustodyGroups(config, nodeId, 129)).toThrow(/above 128/);
  });

  it("wraps at UINT256_MAX instead of overflowing", () => {
    const max = (1n << 256n) - 1n;
    const groups = getCustodyGroups(config, max, 3);
    expect(groups).toHaveLength(3);
    // the second id hashed is 0: its group (102) is among them unless the first one already was
    expect(groups).toContain(102);
  });

  it("one column per group with 128 of each; sampling covers max(SAMPLES_PER_SLOT, cgc) groups", () => {
    expect(columnsForCustodyGroup(config, 5)).toEqual([5]);
    expect(columnsForCustodyGroup({...config, NUMBER_OF_CUSTODY_GROUPS: 64}, 5)).toEqual([5, 69]);
    const nodeId = 12345n;
    expect(samplingColumns(config, nodeId, 4)).toEqual(getCustodyGroups(config, nodeId, 8));
    expect(samplingColumns(config, nodeId, 20)).toHaveLength(20);
  });
});

describe("validator custody (fulu validator.md get_validators_custody_requirement)", () => {
  const withValidators = {NUMBER_OF_CUSTODY_GROUPS: 128, VALIDATOR_CUSTODY_REQUIREMENT: 8, BALANCE_PER_ADDITIONAL_CUSTODY_GROUP: 32e9};
  it("a group per 32 ETH, at least 8, at most 128", () => {
    expect(validatorsCustodyRequirement(withValidators, [32e9])).toBe(8);
    expect(validatorsCustodyRequirement(withValidators, Array(21).fill(32e9))).toBe(21);
    expect(validatorsCustodyRequirement(withValidators, [31e9, 32e9, 2047e9 - 63e9])).toBe(63);
    expect(validatorsCustodyRequirement(withValidators, Array(200).fill(32e9))).toBe(128);
  });
});

describe("the node's custody group count", () => {
  it("the spec's minimum, half of the groups for a semi-supernode, all of them for a supernode", () => {
    expect(ourCustodyGroupCount(config, false)).toBe(4);
    expect(ourCustodyGroupCount(config, false, true)).toBe(64);
    expect(ourCustodyGroupCount(config, true)).toBe(128);
    // half of the groups are half of the columns (NUMBER_OF_COLUMNS / NUMBER_OF_CUSTODY_GROUPS columns each): enough to rebuild the rest
    expect(samplingColumns(config, 12345n, 64)).toHaveLength(64);
  });
});
