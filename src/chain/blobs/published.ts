import type {ChainForkConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import type {deneb, fulu, SignedBeaconBlock} from "@lodestar/types";
import type {EventEmitter} from "node:events";
import type {ChainEvents} from "../interface.ts";
import type {DataAvailability} from "./dataAvailability.ts";
import {emitBlobSidecarEvents, emitColumnSidecarEvents} from "./sidecarEvents.ts";
import {blobCommitmentsOf, blobSidecarsKzgValid, buildBlobSidecars, buildDataColumnSidecars, columnSidecarsKzgValid} from "./sidecars.ts";

/** The sidecars a published block goes out with: blob sidecars (deneb, electra) or data columns (fulu). */
export type PublishedSidecars = {kind: "blobs"; sidecars: deneb.BlobSidecar[]} | {kind: "columns"; sidecars: fulu.DataColumnSidecar[]};

/**
 * The sidecars of a block a validator publishes with its blobs and proofs (the Beacon API's
 * SignedBlockContents). Throws, naming what is wrong, when they do not belong to the block or
 * their proofs do not verify: such a block is not published.
 */
export function sidecarsOfPublishedBlock(config: ChainForkConfig, block: SignedBeaconBlock, blobs: Uint8Array[], proofs: Uint8Array[]): PublishedSidecars {
  const fork = config.getForkSeq(block.message.slot);
  const commitments = blobCommitmentsOf(block);
  if (fork < ForkSeq.deneb || (commitments.length === 0 && blobs.length === 0 && proofs.length === 0)) return {kind: "blobs", sidecars: []};
  if (blobs.length !== commitments.length) throw new Error(`the block commits to ${commitments.length} blobs, but ${blobs.length} blobs came with it`);
  if (fork >= ForkSeq.fulu) {
    const sidecars = buildDataColumnSidecars(config, block, blobs, proofs);
    if (!columnSidecarsKzgValid(sidecars)) throw new Error("the blobs' cell proofs do not verify against the block's commitments");
    return {kind: "columns", sidecars};
  }
  const sidecars = buildBlobSidecars(config, block, blobs, proofs);
  if (!blobSidecarsKzgValid(sidecars)) throw new Error("the blobs' KZG proofs do not verify against the block's commitments");
  return {kind: "blobs", sidecars};
}

/** A published block's sidecars, handed to data availability (the block's import waits for them), and their events emitted. */
export function acceptPublishedSidecars(dataAvailability: Pick<DataAvailability, "addBlobSidecars" | "addColumnSidecars">, emitter: EventEmitter<ChainEvents>, published: PublishedSidecars): void {
  if (published.kind === "blobs") {
    dataAvailability.addBlobSidecars(published.sidecars);
    emitBlobSidecarEvents(emitter, published.sidecars);
  } else {
    dataAvailability.addColumnSidecars(published.sidecars);
    emitColumnSidecarEvents(emitter, published.sidecars);
  }
}
