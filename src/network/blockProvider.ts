import {toRootHex} from "@lodestar/utils";
import type {Root} from "@lodestar/types";
import type {IBeaconChain} from "../chain/interface.ts";
import {slotOfSignedBlockBytes} from "../db/blocks.ts";

/** A block as req/resp sends it: its stored SSZ bytes and its slot (which picks the fork digest). */
export interface BlockBytes {
  slot: number;
  bytes: Uint8Array;
}

type ChainBlocks = Pick<IBeaconChain, "getCanonicalBlockRootAtSlot" | "getHead" | "getBlockBytesByRoot">;

/**
 * The blocks the node serves to peers, read as stored (no deserializing): the canonical chain
 * by slot range, and any known block by root.
 */
export async function* blocksByRange(chain: ChainBlocks, startSlot: number, count: number, step: number): AsyncGenerator<BlockBytes> {
  const headSlot = chain.getHead().slot;
  const end = Math.min(startSlot + count * step, headSlot + 1);
  for (let slot = startSlot; slot < end; slot += step) {
    const root = await chain.getCanonicalBlockRootAtSlot(slot);
    if (!root) continue;
    const bytes = await chain.getBlockBytesByRoot(root);
    if (bytes) yield {slot, bytes};
  }
}

export async function* blocksByRoot(chain: ChainBlocks, roots: Root[]): AsyncGenerator<BlockBytes> {
  const seen = new Set<string>();
  for (const root of roots) {
    const key = toRootHex(root);
    if (seen.has(key)) continue;
    seen.add(key);
    const bytes = await chain.getBlockBytesByRoot(root);
    if (bytes) yield {slot: slotOfSignedBlockBytes(bytes), bytes};
  }
}
