import {NUMBER_OF_COLUMNS} from "@lodestar/params";
import {ssz, type fulu} from "@lodestar/types";
import type {KzgThread} from "../../kzg/kzgThread.ts";
import {dataColumnSidecarsOf} from "./sidecars.ts";

/**
 * recover_matrix of fulu das-core.md: from at least half of a block's data columns (verified
 * sidecars of one block), every column, each cell with its recomputed cell proof. The cells of
 * each blob (a row of the matrix) are recovered with c-kzg's recover_cells_and_kzg_proofs on the
 * KZG thread; the sidecars are then assembled as get_data_column_sidecars does, under the given
 * sidecars' header, commitments and inclusion proof.
 */

/** Columns needed to rebuild the rest: half of them (the extension doubles each blob). */
export const COLUMNS_TO_RECONSTRUCT = NUMBER_OF_COLUMNS / 2;

export class ReconstructionError extends Error {}

export async function recoverColumns(kzg: Pick<KzgThread, "recover">, columns: fulu.DataColumnSidecar[]): Promise<fulu.DataColumnSidecar[]> {
  const byIndex = new Map<number, fulu.DataColumnSidecar>();
  for (const sidecar of columns) byIndex.set(sidecar.index, sidecar);
  if (byIndex.size < COLUMNS_TO_RECONSTRUCT) {
    throw new ReconstructionError(`${byIndex.size} distinct columns cannot rebuild the others: recover_matrix needs at least ${COLUMNS_TO_RECONSTRUCT} (half of ${NUMBER_OF_COLUMNS})`);
  }
  const sorted = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const [first] = sorted;
  const headerRoot = ssz.phase0.SignedBeaconBlockHeader.hashTreeRoot(first.signedBlockHeader);
  for (const sidecar of sorted) {
    if (sidecar.index >= NUMBER_OF_COLUMNS) throw new ReconstructionError(`column index ${sidecar.index} is not below ${NUMBER_OF_COLUMNS}`);
    if (!Buffer.from(ssz.phase0.SignedBeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader)).equals(headerRoot)) {
      throw new ReconstructionError(`column ${sidecar.index} belongs to another block than column ${first.index}`);
    }
    if (sidecar.column.length !== first.kzgCommitments.length) {
      throw new ReconstructionError(`column ${sidecar.index} has ${sidecar.column.length} cells for ${first.kzgCommitments.length} blobs`);
    }
  }
  const indices = sorted.map((s) => s.index);
  const rows = first.kzgCommitments.map((_, row) => ({indices, cells: sorted.map((s) => s.column[row])}));
  const {cells, proofs} = await kzg.recover(rows);
  return dataColumnSidecarsOf(first.signedBlockHeader, first.kzgCommitments, first.kzgCommitmentsInclusionProof, cells, proofs);
}

/**
 * The blobs of a fulu block from at least half of its columns: the first half of an extended
 * blob's cells is the blob itself; with other columns, the cells are recovered first (on the
 * KZG thread).
 */
export async function blobsOfColumns(kzg: Pick<KzgThread, "recover">, columns: fulu.DataColumnSidecar[]): Promise<Uint8Array[]> {
  const byIndex = new Map(columns.map((c) => [c.index, c]));
  const firstHalf = Array.from({length: COLUMNS_TO_RECONSTRUCT}, (_, i) => byIndex.get(i));
  const direct = firstHalf.every((c) => c !== undefined) ? (firstHalf as fulu.DataColumnSidecar[]) : (await recoverColumns(kzg, columns)).slice(0, COLUMNS_TO_RECONSTRUCT);
  const blobCount = direct[0].column.length;
  return Array.from({length: blobCount}, (_, row) => Buffer.concat(direct.map((c) => c.column[row])));
}
