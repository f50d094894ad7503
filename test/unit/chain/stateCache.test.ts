import {describe, expect, it} from "@jest/globals";
import {spawnSync} from "node:child_process";
import {fileURLToPath} from "node:url";
import {ListBasicType, UintNumberType} from "@chainsafe/ssz";
import {computeStartSlotAtEpoch, processSlots, type CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {StateCache} from "../../../src/chain/stateCache.ts";
import {NODE_BYTES, fullStateBytes, treeDiff} from "../../../src/chain/stateCost.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";

const config = devChainConfig({secondsPerSlot: 6, genesisFork: "fulu", forkEpochs: {}});

function advance(state: CachedBeaconStateAllForks, slot: number): CachedBeaconStateAllForks {
  const next = processSlots(state.clone(true), slot, {dontTransferCache: true});
  next.commit();
  return next;
}

describe("tree diff", () => {
  it("counts the nodes a one-element change replaces: a leaf and the branches above it", () => {
    // 1024 uint64: 256 chunks, a tree of depth 8 under the length mix-in
    const type = new ListBasicType(new UintNumberType(8), 1024);
    const before = type.toViewDU(Array.from({length: 1024}, (_, i) => i));
    before.commit();
    const after = before.clone();
    after.set(500, 7);
    after.commit();
    expect(treeDiff(before.node, after.node)).toEqual({added: NODE_BYTES.leaf + 9 * NODE_BYTES.branch, removed: NODE_BYTES.leaf + 9 * NODE_BYTES.branch});
    expect(treeDiff(before.node, before.node)).toEqual({added: 0, removed: 0});
  });

  it("counts nothing for the zero subtrees a list's unused capacity is", () => {
    const type = new ListBasicType(new UintNumberType(8), 2 ** 40);
    const empty = type.toViewDU([]);
    const one = type.toViewDU([1]);
    // one leaf and the path from it to the root (38 levels and the mix-in), zero siblings free
    expect(treeDiff(empty.node, one.node).added).toBe(NODE_BYTES.leaf + 39 * NODE_BYTES.branch + NODE_BYTES.leaf);
  });
});

describe("state cache", () => {
  const genesis = createInteropGenesisState(config, 64, 1_700_000_000);
  const s1 = advance(genesis, 1);
  const s2 = advance(s1, 2);
  const s8 = advance(s2, computeStartSlotAtEpoch(1));

  it("charges a state made from a cached one only for what it does not share", () => {
    const cache = new StateCache(Number.MAX_SAFE_INTEGER);
    cache.add("g", genesis);
    expect(cache.bytes).toBe(fullStateBytes(genesis));
    cache.add("s1", s1, "g");
    cache.add("s2", s2, "s1");
    const chained = cache.bytes - fullStateBytes(genesis);
    expect(chained).toBeGreaterThan(0);
    expect(chained).toBeLessThan(fullStateBytes(s1) / 2);
    // the same states kept apart cost each their whole
    const apart = new StateCache(Number.MAX_SAFE_INTEGER);
    for (const [key, state] of [["g", genesis], ["s1", s1], ["s2", s2]] as const) apart.add(key, state);
    expect(apart.bytes).toBe(fullStateBytes(genesis) + fullStateBytes(s1) + fullStateBytes(s2));
  });

  it("charges what a removed state shared to the states made from it", () => {
    const cache = new StateCache(Number.MAX_SAFE_INTEGER);
    cache.add("g", genesis);
    cache.add("s1", s1, "g");
    cache.add("s2", s2, "s1");
    cache.delete("g");
    // s1 holds its whole tree alone now; s2 still shares all but its changes with it
    const s2Share = cache.bytes - fullStateBytes(s1);
    expect(s2Share).toBeGreaterThan(0);
    expect(s2Share).toBeLessThan(fullStateBytes(s2) / 2);
    cache.delete("s1");
    expect(cache.bytes).toBe(fullStateBytes(s2));
    cache.delete("s2");
    expect(cache.bytes).toBe(0);
  });

  it("a middle state removed: the later one is charged against the earlier one", () => {
    const cache = new StateCache(Number.MAX_SAFE_INTEGER);
    cache.add("g", genesis);
    cache.add("s1", s1, "g");
    cache.add("s8", s8, "s1");
    cache.delete("s1");
    const direct = new StateCache(Number.MAX_SAFE_INTEGER);
    direct.add("g", genesis);
    direct.add("s8", s8, "g");
    expect(cache.bytes).toBe(direct.bytes);
  });

  it("stays within its budget, least recently used first, never evicting pinned states", () => {
    const budget = fullStateBytes(genesis) + fullStateBytes(s1) / 2;
    const cache = new StateCache(budget);
    cache.add("g", genesis);
    cache.setPinned(["g"]);
    cache.add("s1", s1);
    // s1 alone (not made from g) does not fit beside g: it goes, g is pinned
    expect(cache.has("g")).toBe(true);
    expect(cache.has("s1")).toBe(false);
    cache.add("s1", s1, "g");
    cache.add("s2", s2, "s1");
    expect(cache.has("s1") && cache.has("s2")).toBe(true);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    cache.get("s1");
    cache.add("a", advance(genesis, 3));
    expect(cache.has("g")).toBe(true);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
  });

  it("evicts the least recently used first, whether a state was read once or many times running", () => {
    const [a, b, c, d] = [3, 4, 5, 6].map((slot) => advance(genesis, slot));
    const cache = new StateCache(fullStateBytes(a) * 3 + fullStateBytes(a) / 2);
    cache.add("a", a);
    cache.add("b", b);
    cache.add("c", c);
    // c is the newest already; a becomes the newest, read again and again
    expect(cache.get("c")).toBe(c);
    for (let i = 0; i < 3; i++) expect(cache.get("a")).toBe(a);
    cache.add("d", d);
    expect(["a", "b", "c", "d"].filter((key) => cache.has(key))).toEqual(["a", "c", "d"]);
    // d, added last, is the newest: c is now the least recently used
    expect(cache.get("a")).toBe(a);
    cache.add("b", b);
    expect(["a", "b", "c", "d"].filter((key) => cache.has(key))).toEqual(["a", "b", "d"]);
  });

  it("estimates within a third of what V8 measures the states to hold", () => {
    const script = fileURLToPath(new URL("./stateMemory.ts", import.meta.url));
    const run = spawnSync(process.execPath, ["--expose-gc", script, "16384", "4"], {encoding: "utf8", env: process.env, timeout: 120_000});
    expect(run.stderr).toBe("");
    const report = JSON.parse(run.stdout) as Record<"anchor" | "derived", {measured: number; estimated: number}> & {validators: number};
    expect(report.validators).toBe(16384);
    for (const part of [report.anchor, report.derived]) {
      expect(part.estimated / part.measured).toBeGreaterThan(0.67);
      expect(part.estimated / part.measured).toBeLessThan(1.5);
    }
  }, 150_000);
});
