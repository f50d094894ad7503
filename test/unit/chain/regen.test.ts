import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {computeStartSlotAtEpoch, processSlots, type CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {StateRegenerator} from "../../../src/chain/regen.ts";
import {advancedStateKey, StateCache} from "../../../src/chain/stateCache.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";

const chainConfig = devChainConfig({secondsPerSlot: 6, genesisFork: "fulu", forkEpochs: {}});
const BLOCK = "0x" + "11".repeat(32);

function regenerator(stateCache: StateCache): StateRegenerator {
  const unused = (): never => {
    throw new Error("not used by advance");
  };
  return new StateRegenerator({
    config: createBeaconConfig(chainConfig, new Uint8Array(32)),
    forkChoice: unused,
    stateCache,
    getBlock: unused,
    getArchivedState: unused,
    anchorSlot: () => 0,
  });
}

/** The state of the epoch start, as the epoch advance leaves it, with balance 0 marked so a state advanced from it is told apart. */
function markedEpochStart(post: CachedBeaconStateAllForks, epoch: number, marker: number): CachedBeaconStateAllForks {
  const state = processSlots(post.clone(true), computeStartSlotAtEpoch(epoch), {dontTransferCache: true});
  state.balances.set(0, marker);
  state.commit();
  return state;
}

describe("StateRegenerator.advance: a block's state advanced through empty slots", () => {
  const post = createInteropGenesisState(chainConfig, 64, 1_700_000_000);
  const MARKER = 123_456_789;

  it("starts from the block's state advanced to the epoch start when that is cached (the epoch's first slot missed), not from the post-state", () => {
    const cache = new StateCache(1 << 30);
    const regen = regenerator(cache);
    const epochStart = markedEpochStart(post, 1, MARKER);
    cache.add(advancedStateKey(BLOCK, epochStart.slot), epochStart, BLOCK);

    const atSlot10 = regen.advance(BLOCK, post, epochStart.slot + 2);
    expect(atSlot10.slot).toBe(epochStart.slot + 2);
    expect(atSlot10.balances.get(0)).toBe(MARKER);
    // the advance crossed an epoch from the post-state, so its result is kept for the next ask
    expect(cache.get(advancedStateKey(BLOCK, atSlot10.slot))).toBe(atSlot10);
    expect(regen.advance(BLOCK, post, atSlot10.slot)).toBe(atSlot10);
  });

  it("takes the latest cached epoch start at or before the slot, and only the same block's", () => {
    const cache = new StateCache(1 << 30);
    const regen = regenerator(cache);
    const epoch1 = markedEpochStart(post, 1, MARKER);
    const epoch2 = markedEpochStart(post, 2, MARKER + 1);
    cache.add(advancedStateKey(BLOCK, epoch1.slot), epoch1, BLOCK);
    cache.add(advancedStateKey(BLOCK, epoch2.slot), epoch2, BLOCK);
    const otherBlock = "0x" + "22".repeat(32);
    cache.add(advancedStateKey(otherBlock, epoch2.slot), markedEpochStart(post, 2, 1), otherBlock);

    expect(regen.advance(BLOCK, post, epoch2.slot + 3).balances.get(0)).toBe(MARKER + 1);
    expect(regen.advance(BLOCK, post, epoch1.slot + 3).balances.get(0)).toBe(MARKER);
  });

  it("without a cached epoch start, advances the block's own state (the epoch transition computed)", () => {
    const cache = new StateCache(1 << 30);
    const advanced = regenerator(cache).advance(BLOCK, post, computeStartSlotAtEpoch(1) + 2);
    expect(advanced.slot).toBe(computeStartSlotAtEpoch(1) + 2);
    expect(advanced.balances.get(0)).not.toBe(MARKER);
    expect(advanced.balances.get(0)).toBe(processSlots(post.clone(true), advanced.slot, {dontTransferCache: true}).balances.get(0));
  });
});
