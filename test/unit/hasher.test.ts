import {afterAll, describe, expect, it} from "@jest/globals";
import {digest64, setHasher} from "@chainsafe/persistent-merkle-tree";
import {hasher as nobleHasher} from "@chainsafe/persistent-merkle-tree/hasher/noble";
import {toHex} from "@lodestar/utils";
import {createInteropGenesisState} from "../../src/chain/genesis.ts";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {hasherName, useFastestHasher} from "../../src/hasher.ts";

/** the root of a depth-1 tree of zero chunks, sha256 of 64 zero bytes (the consensus specs' zerohashes[1]) */
const ZERO_HASH_1 = "0xf5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b";

describe("SSZ hasher", () => {
  const state = createInteropGenesisState(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), 64, 1000);
  const type = state.config.getForkTypes(state.slot).BeaconState;
  const bytes = state.serialize();
  /** the state's root made again from its bytes, through the tree (batched hashing) and through the value */
  const roots = (): [string, string] => [toHex(type.deserializeToViewDU(bytes).hashTreeRoot()), toHex(type.hashTreeRoot(type.deserialize(bytes)))];

  afterAll(async () => {
    await useFastestHasher();
  });

  it("is a native or WebAssembly SHA-256 in every process of the node, not the plain JavaScript default", async () => {
    const name = await useFastestHasher();
    expect(["hashtree", "as-sha256"]).toContain(name);
    expect(hasherName()).toBe(name);
    // linux-x64 has hashtree's binding (the platform this is developed on)
    if (process.platform === "linux" && process.arch === "x64") expect(name).toBe("hashtree");
    expect(toHex(digest64(new Uint8Array(32), new Uint8Array(32)))).toBe(ZERO_HASH_1);
  });

  it("gives the roots @noble/hashes gives", async () => {
    await useFastestHasher();
    const fast = roots();
    expect(fast[0]).toBe(fast[1]);
    setHasher(nobleHasher);
    expect(hasherName()).toBe("noble");
    expect(roots()).toEqual(fast);
    expect(toHex(digest64(new Uint8Array(32), new Uint8Array(32)))).toBe(ZERO_HASH_1);
  });
});
