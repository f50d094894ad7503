import {ForkSeq, NUMBER_OF_COLUMNS} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {deneb, fulu, SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {kzgCommitmentToVersionedHash} from "../../execution/engineJson.ts";
import {blobsFromColumns} from "../../chain/blobs/sidecars.ts";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {BlockId, VersionedChainMeta} from "../codecs.ts";
import {badRequest, notFound} from "../errors.ts";
import {resolveBlock} from "./resolve.ts";

/**
 * Blob sidecars, blobs and data column sidecars, as stored with their blocks. A block without
 * blob commitments has empty lists; a block with some has what this node keeps: every blob
 * sidecar (deneb, electra), or the columns it custodies (fulu), from which the blobs are read
 * (or recovered, with at least half of the columns).
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

/** Indices in range (each is given once: the route's list refuses a repeat, as the spec's uniqueItems says). */
function assertIndices(indices: number[], limit: number, what: string): void {
  for (const index of indices) {
    if (index >= limit) throw badRequest(`Invalid ${what} ${index}: must be below ${limit}`);
  }
}

function blobCommitments(block: SignedBeaconBlock): Uint8Array[] {
  return (block.message.body as {blobKzgCommitments?: Uint8Array[]}).blobKzgCommitments ?? [];
}

async function resolveSidecarBlock(chain: IBeaconChain, req: SidecarRequest) {
  const {block, root, executionOptimistic, finalized} = await resolveBlock(chain, req.blockId);
  const slot = block.message.slot;
  assertIndices(req.indices, req.limitAt(slot), req.what);
  const meta: VersionedChainMeta = {version: chain.config.getForkName(slot), executionOptimistic, finalized};
  return {block, root, meta, commitments: blobCommitments(block)};
}

const unavailable = (root: Uint8Array, what: string) => notFound(`${what} of block ${toRootHex(root)} are not available on this node`);

/** The blob sidecars of a deneb or electra block, all or those at `indices`. */
export async function blobSidecars(chain: IBeaconChain, req: SidecarRequest): Promise<{data: deneb.BlobSidecar[]; meta: VersionedChainMeta}> {
  const {root, meta, commitments} = await resolveSidecarBlock(chain, req);
  if (commitments.length === 0) return {data: [], meta};
  const stored = await chain.getBlobSidecars(root);
  if (!stored) throw unavailable(root, "Blob sidecars");
  const data = req.indices.length === 0 ? stored : stored.filter((s) => req.indices.includes(s.index));
  return {data, meta};
}

/** The data column sidecars of a fulu block that this node keeps, all or those at `indices`. */
export async function dataColumnSidecars(chain: IBeaconChain, req: SidecarRequest): Promise<{data: fulu.DataColumnSidecar[]; meta: VersionedChainMeta}> {
  const {root, meta, commitments} = await resolveSidecarBlock(chain, req);
  if (commitments.length === 0 || ForkSeq[meta.version] < ForkSeq.fulu) return {data: [], meta};
  return {data: await chain.getDataColumnSidecars(root, req.indices.length > 0 ? req.indices : undefined), meta};
}

function versionedHash(commitment: Uint8Array): string {
  return toRootHex(kzgCommitmentToVersionedHash(commitment));
}

/** The blobs of a block (getBlobs), all or those whose versioned hashes are asked for, in commitment order. */
export async function blobsOfBlock(chain: IBeaconChain, blockId: BlockId, versionedHashes: Uint8Array[] | undefined): Promise<{data: Uint8Array[]; meta: VersionedChainMeta}> {
  const {root, meta, commitments} = await resolveSidecarBlock(chain, {blockId, indices: [], limitAt: maxBlobsAt(chain), what: "blob index"});
  if (commitments.length === 0) return {data: [], meta};
  let blobs: Uint8Array[];
  if (ForkSeq[meta.version] >= ForkSeq.fulu) {
    const columns = await chain.getDataColumnSidecars(root);
    if (columns.length < NUMBER_OF_COLUMNS / 2) throw unavailable(root, `Blobs (${columns.length} of the ${NUMBER_OF_COLUMNS / 2} columns needed)`);
    blobs = chain.blobsOfColumns ? await chain.blobsOfColumns(columns) : blobsFromColumns(columns);
  } else {
    const stored = await chain.getBlobSidecars(root);
    if (!stored) throw unavailable(root, "Blobs");
    blobs = stored.map((s) => s.blob);
  }
  if (!versionedHashes || versionedHashes.length === 0) return {data: blobs, meta};
  const wanted = new Set(versionedHashes.map((h) => toRootHex(h)));
  return {data: blobs.filter((_, i) => wanted.has(versionedHash(commitments[i]))), meta};
}

/** The most blobs a block at `slot` may carry. */
export function maxBlobsAt(chain: IBeaconChain): (slot: number) => number {
  return (slot) => chain.config.getMaxBlobsPerBlock(computeEpochAtSlot(slot));
}
