import {describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../../src/chain/interface.ts";
import type {BlockId} from "../../../src/api/codecs.ts";
import {resolveBlock} from "../../../src/api/impl/resolve.ts";
import {config} from "../chain/blobs/columnFixture.ts";

/**
 * `canonical` of a block named by its root (getBlockHeader, getBlockV2, ...): fork choice holds
 * only the blocks since the finalized checkpoint, so a block finalized epochs ago is canonical by
 * the canonical chain's index (the block at its slot), not because the head descends from it in
 * fork choice. The split-network run found every node calling the finalized checkpoints of two
 * epochs before `canonical: false`.
 */
function chainWith(blocks: {slot: number; inForkChoice: boolean; canonical: boolean}[]) {
  const byRoot = new Map<string, {block: ReturnType<typeof ssz.fulu.SignedBeaconBlock.defaultValue>; inForkChoice: boolean; canonical: boolean}>();
  const canonicalAt = new Map<number, Uint8Array>();
  const roots = blocks.map(({slot, inForkChoice, canonical}, i) => {
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.slot = slot;
    block.message.proposerIndex = i;
    const root = ssz.fulu.BeaconBlock.hashTreeRoot(block.message);
    byRoot.set(toHex(root), {block, inForkChoice, canonical});
    if (canonical) canonicalAt.set(slot, root);
    return toHex(root) as BlockId;
  });
  const chain = {
    config,
    getBlockByRoot: async (root: Uint8Array) => byRoot.get(toHex(root))?.block ?? null,
    // fork choice: the head descends from the canonical blocks it still holds
    isCanonical: (root: Uint8Array) => {
      const known = byRoot.get(toHex(root));
      return known !== undefined && known.inForkChoice && known.canonical;
    },
    getCanonicalBlockRootAtSlot: async (slot: number) => canonicalAt.get(slot) ?? null,
    isOptimistic: () => false,
    getFinalizedCheckpoint: () => ({epoch: 4, root: new Uint8Array(32)}),
  } as unknown as IBeaconChain;
  return {chain, roots};
}

describe("canonical: of a block named by its root", () => {
  it("a finalized block gone from fork choice is canonical; a side branch's block is not, finalized away or not", async () => {
    const {chain, roots} = chainWith([
      {slot: 8, inForkChoice: false, canonical: true},
      {slot: 9, inForkChoice: false, canonical: false},
      {slot: 40, inForkChoice: true, canonical: true},
      {slot: 40, inForkChoice: true, canonical: false},
    ]);
    const canonical = await Promise.all(roots.map(async (root) => (await resolveBlock(chain, root)).canonical));
    expect(canonical).toEqual([true, false, true, false]);
    // finalized: canonical and at or before the finalized epoch's start
    expect((await resolveBlock(chain, roots[0])).finalized).toBe(true);
    expect((await resolveBlock(chain, roots[1])).finalized).toBe(false);
  });
});
