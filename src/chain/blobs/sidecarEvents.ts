import type {deneb, fulu} from "@lodestar/types";
import {ssz} from "@lodestar/types";
import type {EventEmitter} from "node:events";
import {kzgCommitmentToVersionedHash} from "../../execution/engineJson.ts";
import type {ChainEvents} from "../interface.ts";

/**
 * The `blob_sidecar` and `data_column_sidecar` events of the Beacon API: a sidecar that passed
 * every gossip rule of its topic, received from a peer or published over REST. Nothing is
 * computed while nobody listens.
 */

type SidecarEmitter = Pick<EventEmitter<ChainEvents>, "emit" | "listenerCount">;

export function emitBlobSidecarEvents(emitter: SidecarEmitter, sidecars: deneb.BlobSidecar[]): void {
  if (sidecars.length === 0 || emitter.listenerCount("blob_sidecar") === 0) return;
  for (const sidecar of sidecars) {
    const header = sidecar.signedBlockHeader.message;
    emitter.emit("blob_sidecar", {
      blockRoot: ssz.phase0.BeaconBlockHeader.hashTreeRoot(header),
      index: sidecar.index,
      slot: header.slot,
      kzgCommitment: sidecar.kzgCommitment,
      versionedHash: kzgCommitmentToVersionedHash(sidecar.kzgCommitment),
    });
  }
}

export function emitColumnSidecarEvents(emitter: SidecarEmitter, sidecars: fulu.DataColumnSidecar[]): void {
  if (sidecars.length === 0 || emitter.listenerCount("data_column_sidecar") === 0) return;
  for (const sidecar of sidecars) {
    const header = sidecar.signedBlockHeader.message;
    emitter.emit("data_column_sidecar", {blockRoot: ssz.phase0.BeaconBlockHeader.hashTreeRoot(header), index: sidecar.index, slot: header.slot, kzgCommitments: sidecar.kzgCommitments});
  }
}
