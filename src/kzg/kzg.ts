import kzgLib from "c-kzg";

/**
 * The KZG commitment scheme of EIP-4844 and EIP-7594 (c-kzg-4844, with its embedded mainnet
 * trusted setup). Loading the setup takes a second or two, so it happens once, on first use or
 * when the node starts on a chain that schedules deneb.
 */

let loaded = false;

export function loadKzg(): typeof kzgLib {
  if (!loaded) {
    try {
      kzgLib.loadTrustedSetup(0);
    } catch (e) {
      // the native library is one per process: a second copy of this module (test runners load
      // modules afresh per file) finds it loaded already
      if (!/already loaded/.test((e as Error).message)) throw e;
    }
    loaded = true;
  }
  return kzgLib;
}

export const CELLS_PER_EXT_BLOB = kzgLib.CELLS_PER_EXT_BLOB;

/** verify_blob_kzg_proof_batch: false (never a throw) for malformed input. */
export function verifyBlobProofs(blobs: Uint8Array[], commitments: Uint8Array[], proofs: Uint8Array[]): boolean {
  if (blobs.length === 0) return true;
  try {
    return loadKzg().verifyBlobKzgProofBatch(blobs, commitments, proofs);
  } catch {
    return false;
  }
}

/** verify_cell_kzg_proof_batch: false (never a throw) for malformed input. */
export function verifyCellProofs(commitments: Uint8Array[], cellIndices: number[], cells: Uint8Array[], proofs: Uint8Array[]): boolean {
  if (cells.length === 0) return true;
  try {
    return loadKzg().verifyCellKzgProofBatch(commitments, cellIndices, cells, proofs);
  } catch {
    return false;
  }
}

export function blobToCommitment(blob: Uint8Array): Uint8Array {
  return loadKzg().blobToKzgCommitment(blob);
}

export function computeBlobProof(blob: Uint8Array, commitment: Uint8Array): Uint8Array {
  return loadKzg().computeBlobKzgProof(blob, commitment);
}

export function computeCellsAndProofs(blob: Uint8Array): {cells: Uint8Array[]; proofs: Uint8Array[]} {
  const [cells, proofs] = loadKzg().computeCellsAndKzgProofs(blob);
  return {cells, proofs};
}

export function computeCells(blob: Uint8Array): Uint8Array[] {
  return loadKzg().computeCells(blob);
}

/** recover_cells_and_kzg_proofs: every cell of an extended blob from at least half of them. */
export function recoverCells(cellIndices: number[], cells: Uint8Array[]): Uint8Array[] {
  return recoverCellsAndProofs(cellIndices, cells).cells;
}

/** recover_cells_and_kzg_proofs: every cell and cell proof of an extended blob from at least half of its cells (indices ascending). */
export function recoverCellsAndProofs(cellIndices: number[], cells: Uint8Array[]): {cells: Uint8Array[]; proofs: Uint8Array[]} {
  const [all, proofs] = loadKzg().recoverCellsAndKzgProofs(cellIndices, cells);
  return {cells: all, proofs};
}
