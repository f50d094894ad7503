import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {BlockId, VersionedChainMeta} from "../codecs.ts";
import {badRequest, notFound} from "../errors.ts";
import {resolveBlock} from "./resolve.ts";

/**
 * Blob sidecars, blobs and data column sidecars. The node keeps no blob data (the dev chain's
 * blocks commit to no blobs), so a known block without blob commitments has empty lists of
 * each; a block that does commit to blobs has data this node never received.
 */

/** What a sidecar request asks for: the block, and the indices (or hashes) of what it wants, already parsed. */
export interface SidecarRequest {
  blockId: BlockId;
  /** how many distinct items a block can have at most, by its slot (blobs per block, columns) */
  limitAt: (slot: number) => number;
  /** what the items are called in errors: "blob index", "column index" */
  what: string;
  indices: number[];
}

function assertIndices(indices: number[], limit: number, what: string): void {
  const seen = new Set<number>();
  for (const index of indices) {
    if (index >= limit) throw badRequest(`Invalid ${what} ${index}: must be below ${limit}`);
    if (seen.has(index)) throw badRequest(`Duplicate ${what} ${index}`);
    seen.add(index);
  }
}

function blobCommitmentCount(block: SignedBeaconBlock): number {
  return (block.message.body as {blobKzgCommitments?: unknown[]}).blobKzgCommitments?.length ?? 0;
}

/** The (empty) sidecars of a known block, with its fork and chain metadata; 404 for an unknown block. */
export async function emptySidecars(chain: IBeaconChain, req: SidecarRequest): Promise<{data: never[]; meta: VersionedChainMeta}> {
  const {block, root, executionOptimistic, finalized} = await resolveBlock(chain, req.blockId);
  const slot = block.message.slot;
  assertIndices(req.indices, req.limitAt(slot), req.what);
  if (blobCommitmentCount(block) > 0) throw notFound(`Blob data of block ${toRootHex(root)} is not available: this node keeps no blobs`);
  return {data: [], meta: {version: chain.config.getForkName(slot), executionOptimistic, finalized}};
}

/** The most blobs a block at `slot` may carry. */
export function maxBlobsAt(chain: IBeaconChain): (slot: number) => number {
  return (slot) => chain.config.getMaxBlobsPerBlock(computeEpochAtSlot(slot));
}
