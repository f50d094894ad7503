import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {ssz, type fulu} from "@lodestar/types";
import {devChainConfig} from "../../../../src/config/chainConfig.ts";
import {blobToCommitment, computeCellsAndProofs, loadKzg} from "../../../../src/kzg/kzg.ts";
import {mockBlob} from "../../../../src/execution/mockEngine.ts";

/** A fulu dev config (minimal preset) and a block committing to real blobs (KZG commitments and cell proofs by c-kzg). */
export const config: BeaconConfig = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), new Uint8Array(32));

export interface BlobBlock {
  block: fulu.SignedBeaconBlock;
  blobs: Uint8Array[];
  /** compute_cells_and_kzg_proofs of each blob, straight from c-kzg (the spec's compute_matrix) */
  cells: Uint8Array[][];
  proofs: Uint8Array[][];
}

export function blobBlock(seed: string, blobCount: number, slot = 3): BlobBlock {
  loadKzg();
  const blobs = Array.from({length: blobCount}, (_, i) => mockBlob(`${seed}/${i}`));
  const matrix = blobs.map((blob) => computeCellsAndProofs(blob));
  const block = ssz.fulu.SignedBeaconBlock.defaultValue();
  block.message.slot = slot;
  block.message.proposerIndex = 5;
  block.message.body.blobKzgCommitments = blobs.map((blob) => blobToCommitment(blob));
  block.signature = new Uint8Array(96).fill(3);
  return {block, blobs, cells: matrix.map((m) => m.cells), proofs: matrix.map((m) => m.proofs)};
}
