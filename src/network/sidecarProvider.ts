import {ssz, type deneb, type fulu, type Root} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {BeaconChain} from "../chain/beaconChain.ts";
import type {IBeaconChain} from "../chain/interface.ts";
import type {BlockBytes} from "./blockProvider.ts";

/**
 * The sidecars the node serves to peers: blob sidecars (deneb, electra) and the data columns it
 * keeps (fulu), stored with their blocks, plus those still waiting for their block.
 */

type ChainSidecars = Pick<IBeaconChain, "getCanonicalBlockRootAtSlot" | "getHead" | "getBlobSidecars" | "getDataColumnSidecarBytes"> & Pick<BeaconChain, "dataAvailability">;

/** The canonical block roots of `count` slots from `startSlot` (up to the head), with their slots. */
async function* canonicalRoots(chain: ChainSidecars, startSlot: number, count: number): AsyncGenerator<{slot: number; root: Root}> {
  const end = Math.min(startSlot + count, chain.getHead().slot + 1);
  for (let slot = startSlot; slot < end; slot++) {
    const root = await chain.getCanonicalBlockRootAtSlot(slot);
    if (root) yield {slot, root};
  }
}

function blobBytes(sidecar: deneb.BlobSidecar): BlockBytes {
  return {slot: sidecar.signedBlockHeader.message.slot, bytes: ssz.deneb.BlobSidecar.serialize(sidecar)};
}

export async function* blobSidecarsByRange(chain: ChainSidecars, request: deneb.BlobSidecarsByRangeRequest): AsyncGenerator<BlockBytes> {
  for await (const {root} of canonicalRoots(chain, request.startSlot, request.count)) {
    for (const sidecar of (await chain.getBlobSidecars(root)) ?? []) yield blobBytes(sidecar);
  }
}

export async function* blobSidecarsByRoot(chain: ChainSidecars, ids: deneb.BlobIdentifier[]): AsyncGenerator<BlockBytes> {
  const seen = new Set<string>();
  for (const {blockRoot, index} of ids) {
    const key = `${toRootHex(blockRoot)}/${index}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const stored = (await chain.getBlobSidecars(blockRoot)) ?? chain.dataAvailability.pendingBlobSidecars(toRootHex(blockRoot));
    const sidecar = stored.find((s) => s.index === index);
    if (sidecar) yield blobBytes(sidecar);
  }
}

async function columnBytes(chain: ChainSidecars, root: Root, column: number): Promise<BlockBytes | null> {
  const bytes = await chain.getDataColumnSidecarBytes(root, column);
  if (bytes) return {slot: ssz.fulu.DataColumnSidecar.deserialize(bytes).signedBlockHeader.message.slot, bytes};
  const pending = chain.dataAvailability.pendingColumnSidecar(toRootHex(root), column);
  return pending ? {slot: pending.signedBlockHeader.message.slot, bytes: ssz.fulu.DataColumnSidecar.serialize(pending)} : null;
}

export async function* dataColumnSidecarsByRange(chain: ChainSidecars, request: fulu.DataColumnSidecarsByRangeRequest): AsyncGenerator<BlockBytes> {
  const columns = [...new Set(request.columns)].sort((a, b) => a - b);
  for await (const {slot, root} of canonicalRoots(chain, request.startSlot, request.count)) {
    for (const column of columns) {
      const bytes = await chain.getDataColumnSidecarBytes(root, column);
      if (bytes) yield {slot, bytes};
    }
  }
}

export async function* dataColumnSidecarsByRoot(chain: ChainSidecars, ids: fulu.DataColumnsByRootIdentifier[]): AsyncGenerator<BlockBytes> {
  const seen = new Set<string>();
  for (const {blockRoot, columns} of ids) {
    for (const column of columns) {
      const key = `${toRootHex(blockRoot)}/${column}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const found = await columnBytes(chain, blockRoot, column);
      if (found) yield found;
    }
  }
}
