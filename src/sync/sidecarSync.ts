import type {ChainForkConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import type {deneb, fulu, SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {DataAvailability, MissingData} from "../chain/blobs/dataAvailability.ts";
import {
  blobCommitmentsOf,
  blobInclusionProofIsValid,
  blobSidecarsKzgValid,
  columnInclusionProofIsValid,
  columnSidecarsKzgValid,
  sidecarMatchesBlock,
} from "../chain/blobs/sidecars.ts";
import {getLogger} from "../log.ts";
import type {PeerAction} from "../network/peers/peerScore.ts";

const log = getLogger("sync");

/**
 * Fetches the sidecars of blocks from peers: those of a synced batch of blocks (by range from the
 * peer that served the blocks, then by root from the others for what is still missing), and
 * those a block waits for at import (by root). Every sidecar is checked against its block
 * (header and signature, inclusion proof, KZG proofs) before it goes to data availability; a peer
 * that sends one that fails is reported.
 */

export interface SidecarSyncDeps {
  config: ChainForkConfig;
  dataAvailability: Pick<DataAvailability, "missing" | "requirement" | "addBlobSidecars" | "addColumnSidecars">;
  /** the connected peers to ask, best first */
  peers(): string[];
  report(peer: string, action: PeerAction, reason: string): void;
  blobSidecarsByRange(peer: string, request: deneb.BlobSidecarsByRangeRequest): Promise<deneb.BlobSidecar[]>;
  blobSidecarsByRoot(peer: string, ids: deneb.BlobIdentifier[]): Promise<deneb.BlobSidecar[]>;
  dataColumnSidecarsByRange(peer: string, request: fulu.DataColumnSidecarsByRangeRequest): Promise<fulu.DataColumnSidecar[]>;
  dataColumnSidecarsByRoot(peer: string, ids: fulu.DataColumnsByRootIdentifier[]): Promise<fulu.DataColumnSidecar[]>;
}

interface BlockWithRoot {
  block: SignedBeaconBlock;
  root: Uint8Array;
  rootHex: string;
}

export class SidecarSync {
  private readonly deps: SidecarSyncDeps;

  constructor(deps: SidecarSyncDeps) {
    this.deps = deps;
  }

  /** The sidecars of a batch of blocks `peer` served; what it lacks is asked of the other peers. */
  async fetchForBlocks(peer: string, blocks: SignedBeaconBlock[]): Promise<void> {
    const batch = blocks.map((block) => this.withRoot(block));
    const needing = batch.filter((b) => this.deps.dataAvailability.missing(b.block, b.rootHex));
    if (needing.length === 0) return;
    const startSlot = needing[0].block.message.slot;
    const count = needing[needing.length - 1].block.message.slot - startSlot + 1;
    // the range may hold blocks of the batch whose data we have: an honest peer sends theirs too,
    // which must not count against it (they are matched to their blocks, then left out)
    const wanted = new Set(needing.map((b) => b.rootHex));
    try {
      const first = this.deps.dataAvailability.missing(needing[0].block, needing[0].rootHex)!;
      if (first.kind === "blobs") this.acceptBlobs(peer, batch, await this.deps.blobSidecarsByRange(peer, {startSlot, count}), wanted);
      else this.acceptColumns(peer, batch, await this.deps.dataColumnSidecarsByRange(peer, {startSlot, count, columns: this.columnsMissing(needing)}), wanted);
    } catch (e) {
      log.debug({peer, startSlot, count, err: (e as Error).message}, "sidecars by range failed");
    }
    for (const b of needing) {
      const missing = this.deps.dataAvailability.missing(b.block, b.rootHex);
      if (missing) await this.fetchMissing(b.block, b.root, missing);
    }
  }

  /** What one block still lacks, asked of each peer in turn until nothing is missing. */
  async fetchMissing(block: SignedBeaconBlock, blockRoot: Uint8Array, missing: MissingData): Promise<void> {
    const b: BlockWithRoot = {block, root: blockRoot, rootHex: toRootHex(blockRoot)};
    let still: MissingData | null = missing;
    for (const peer of this.deps.peers()) {
      if (!still) return;
      try {
        if (still.kind === "blobs") {
          this.acceptBlobs(peer, [b], await this.deps.blobSidecarsByRoot(peer, still.indices.map((index) => ({blockRoot, index}))));
        } else {
          this.acceptColumns(peer, [b], await this.deps.dataColumnSidecarsByRoot(peer, [{blockRoot, columns: still.indices}]));
        }
      } catch (e) {
        log.debug({peer, block: b.rootHex, err: (e as Error).message}, "sidecars by root failed");
      }
      still = this.deps.dataAvailability.missing(block, b.rootHex);
    }
  }

  /**
   * The sidecars of blocks fetched by root (a gossip block's unknown ancestors): they were
   * gossiped while we were not listening, so they are asked for at once rather than waited for,
   * all the blocks' in one request per peer, `peer` (the one that served the blocks) first.
   */
  async fetchByRoot(peer: string, blocks: SignedBeaconBlock[]): Promise<void> {
    let needing = blocks.map((block) => this.withRoot(block)).filter((b) => this.deps.dataAvailability.missing(b.block, b.rootHex));
    for (const from of [peer, ...this.deps.peers().filter((p) => p !== peer)]) {
      if (needing.length === 0) return;
      const blobIds: deneb.BlobIdentifier[] = [];
      const columnIds: fulu.DataColumnsByRootIdentifier[] = [];
      for (const b of needing) {
        const missing = this.deps.dataAvailability.missing(b.block, b.rootHex)!;
        if (missing.kind === "blobs") for (const index of missing.indices) blobIds.push({blockRoot: b.root, index});
        else columnIds.push({blockRoot: b.root, columns: missing.indices});
      }
      try {
        if (blobIds.length > 0) this.acceptBlobs(from, needing, await this.deps.blobSidecarsByRoot(from, blobIds));
        if (columnIds.length > 0) this.acceptColumns(from, needing, await this.deps.dataColumnSidecarsByRoot(from, columnIds));
      } catch (e) {
        log.debug({peer: from, blocks: needing.length, err: (e as Error).message}, "sidecars by root failed");
      }
      needing = needing.filter((b) => this.deps.dataAvailability.missing(b.block, b.rootHex));
    }
  }

  private withRoot(block: SignedBeaconBlock): BlockWithRoot {
    const root = this.deps.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
    return {block, root, rootHex: toRootHex(root)};
  }

  private columnsMissing(blocks: BlockWithRoot[]): number[] {
    const columns = new Set<number>();
    for (const b of blocks) {
      const missing = this.deps.dataAvailability.missing(b.block, b.rootHex);
      if (missing?.kind === "columns") for (const c of missing.indices) columns.add(c);
    }
    return [...columns].sort((a, c) => a - c);
  }

  /** The block (of `blocks`) a sidecar claims to belong to, if its header and signature are that block's. */
  private blockOf(blocks: BlockWithRoot[], sidecar: {signedBlockHeader: {message: {slot: number}; signature: Uint8Array}}): BlockWithRoot | null {
    const {config} = this.deps;
    const block = blocks.find((b) => b.block.message.slot === sidecar.signedBlockHeader.message.slot);
    if (!block || !sidecarMatchesBlock(config, sidecar as never, block.block)) return null;
    return Buffer.from(sidecar.signedBlockHeader.signature).equals(block.block.signature) ? block : null;
  }

  /** Checks a peer's blob sidecars against `blocks`; those of the `wanted` blocks (all, by default) go to data availability. */
  private acceptBlobs(peer: string, blocks: BlockWithRoot[], sidecars: deneb.BlobSidecar[], wanted?: Set<string>): void {
    const {config} = this.deps;
    const valid: deneb.BlobSidecar[] = [];
    for (const sidecar of sidecars) {
      const block = this.blockOf(blocks, sidecar);
      if (!block || sidecar.index >= blobCommitmentsOf(block.block).length || !blobInclusionProofIsValid(config, sidecar)) {
        return this.deps.report(peer, "low", `blob sidecar ${sidecar.index} of slot ${sidecar.signedBlockHeader.message.slot} does not belong to the block it names`);
      }
      if (!wanted || wanted.has(block.rootHex)) valid.push(sidecar);
    }
    if (!blobSidecarsKzgValid(valid)) return this.deps.report(peer, "low", "blob sidecars with invalid KZG proofs");
    this.deps.dataAvailability.addBlobSidecars(valid);
  }

  /** Checks a peer's data column sidecars against `blocks`; those of the `wanted` blocks (all, by default) go to data availability. */
  private acceptColumns(peer: string, blocks: BlockWithRoot[], sidecars: fulu.DataColumnSidecar[], wanted?: Set<string>): void {
    const {config} = this.deps;
    const valid: fulu.DataColumnSidecar[] = [];
    for (const sidecar of sidecars) {
      const block = this.blockOf(blocks, sidecar);
      if (!block || config.getForkSeq(block.block.message.slot) < ForkSeq.fulu || !columnInclusionProofIsValid(config, sidecar)) {
        return this.deps.report(peer, "low", `data column ${sidecar.index} of slot ${sidecar.signedBlockHeader.message.slot} does not belong to the block it names`);
      }
      if (!wanted || wanted.has(block.rootHex)) valid.push(sidecar);
    }
    if (!columnSidecarsKzgValid(valid)) return this.deps.report(peer, "low", "data column sidecars with invalid KZG proofs");
    this.deps.dataAvailability.addColumnSidecars(valid);
  }
}
