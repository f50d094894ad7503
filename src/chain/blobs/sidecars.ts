import {Tree} from "@chainsafe/persistent-merkle-tree";
import type {ChainForkConfig} from "@lodestar/config";
import {NUMBER_OF_COLUMNS} from "@lodestar/params";
import {blockToHeader} from "@lodestar/state-transition";
import {ssz, type deneb, type fulu, type phase0, type SignedBeaconBlock} from "@lodestar/types";
import {createHash} from "node:crypto";
import {computeCells, recoverCells, verifyBlobProofs, verifyCellProofs} from "../../kzg/kzg.ts";

/**
 * Blob sidecars (deneb, electra) and data column sidecars (fulu): built from a block and its
 * blobs, and checked as the p2p spec's `verify_*_sidecar_inclusion_proof` and
 * `verify_*_kzg_proof(s)` say. Gossip, req/resp and the REST publish path share these checks.
 */

export type BlobCarryingBlock = SignedBeaconBlock & {message: {body: {blobKzgCommitments: Uint8Array[]}}};

export function blobCommitmentsOf(block: SignedBeaconBlock): Uint8Array[] {
  return (block.message.body as {blobKzgCommitments?: Uint8Array[]}).blobKzgCommitments ?? [];
}

/** is_valid_merkle_branch of the phase0 spec; `index` is the subtree index (gindex without its leading bit). */
export function isValidMerkleBranch(leaf: Uint8Array, branch: Uint8Array[], depth: number, index: number, root: Uint8Array): boolean {
  if (branch.length !== depth) return false;
  let value = leaf;
  for (let i = 0; i < depth; i++) {
    const hash = createHash("sha256");
    if (Math.floor(index / 2 ** i) % 2 === 1) hash.update(branch[i]).update(value);
    else hash.update(value).update(branch[i]);
    value = hash.digest();
  }
  return Buffer.from(value).equals(root);
}

/** get_subtree_index with the depth: the generalized index without its leading bit. */
function subtreeIndex(gindex: bigint): {index: number; depth: number} {
  const depth = gindex.toString(2).length - 1;
  return {index: Number(gindex - (1n << BigInt(depth))), depth};
}

function bodyType(config: ChainForkConfig, slot: number) {
  return config.getPostDenebForkTypes(slot).BeaconBlockBody;
}

/** The body field's gindex: one commitment (`blobIndex`) or the whole list. */
function commitmentGindex(config: ChainForkConfig, slot: number, blobIndex?: number): bigint {
  const path = blobIndex === undefined ? ["blobKzgCommitments"] : ["blobKzgCommitments", blobIndex];
  return bodyType(config, slot).getPathInfo(path).gindex;
}

function signedHeaderOf(config: ChainForkConfig, block: SignedBeaconBlock): phase0.SignedBeaconBlockHeader {
  return {message: blockToHeader(config, block.message), signature: block.signature};
}

/** verify_blob_sidecar_inclusion_proof */
export function blobInclusionProofIsValid(config: ChainForkConfig, sidecar: deneb.BlobSidecar): boolean {
  const header = sidecar.signedBlockHeader.message;
  const {index, depth} = subtreeIndex(commitmentGindex(config, header.slot, sidecar.index));
  const leaf = ssz.deneb.KZGCommitment.hashTreeRoot(sidecar.kzgCommitment);
  return isValidMerkleBranch(leaf, sidecar.kzgCommitmentInclusionProof, depth, index, header.bodyRoot);
}

/** verify_data_column_sidecar_inclusion_proof */
export function columnInclusionProofIsValid(config: ChainForkConfig, sidecar: fulu.DataColumnSidecar): boolean {
  const header = sidecar.signedBlockHeader.message;
  const {index, depth} = subtreeIndex(commitmentGindex(config, header.slot));
  const leaf = ssz.deneb.BlobKzgCommitments.hashTreeRoot(sidecar.kzgCommitments);
  return isValidMerkleBranch(leaf, sidecar.kzgCommitmentsInclusionProof, depth, index, header.bodyRoot);
}

/** verify_blob_sidecar_kzg_proof, for several sidecars at once */
export function blobSidecarsKzgValid(sidecars: deneb.BlobSidecar[]): boolean {
  return verifyBlobProofs(
    sidecars.map((s) => s.blob),
    sidecars.map((s) => s.kzgCommitment),
    sidecars.map((s) => s.kzgProof)
  );
}

/** verify_data_column_sidecar_kzg_proofs, for several sidecars at once */
export function columnSidecarsKzgValid(sidecars: fulu.DataColumnSidecar[]): boolean {
  const commitments: Uint8Array[] = [];
  const indices: number[] = [];
  const cells: Uint8Array[] = [];
  const proofs: Uint8Array[] = [];
  for (const sidecar of sidecars) {
    if (sidecar.column.length !== sidecar.kzgCommitments.length || sidecar.kzgProofs.length !== sidecar.kzgCommitments.length) return false;
    for (let row = 0; row < sidecar.column.length; row++) {
      commitments.push(sidecar.kzgCommitments[row]);
      indices.push(sidecar.index);
      cells.push(sidecar.column[row]);
      proofs.push(sidecar.kzgProofs[row]);
    }
  }
  return verifyCellProofs(commitments, indices, cells, proofs);
}

/** The blob sidecars of a deneb or electra block: one per blob, with its proof (get_blob_sidecars of the validator spec). */
export function buildBlobSidecars(config: ChainForkConfig, block: SignedBeaconBlock, blobs: Uint8Array[], proofs: Uint8Array[]): deneb.BlobSidecar[] {
  const commitments = blobCommitmentsOf(block);
  if (blobs.length !== commitments.length || proofs.length !== commitments.length) {
    throw new Error(`block commits to ${commitments.length} blobs, but ${blobs.length} blobs and ${proofs.length} proofs were given`);
  }
  const slot = block.message.slot;
  const bodyTree = new Tree(bodyType(config, slot).value_toTree(block.message.body as never));
  const signedBlockHeader = signedHeaderOf(config, block);
  return blobs.map((blob, index) => ({
    index,
    blob,
    kzgCommitment: commitments[index],
    kzgProof: proofs[index],
    signedBlockHeader,
    kzgCommitmentInclusionProof: bodyTree.getSingleProof(commitmentGindex(config, slot, index)),
  }));
}

/**
 * The data column sidecars of a fulu block (get_data_column_sidecars of the fulu validator
 * spec): column `c` holds cell `c` of every blob, with its cell proof. `cellProofs` holds
 * CELLS_PER_EXT_BLOB proofs per blob, blob after blob, as the Engine API's BlobsBundleV2.
 */
export function buildDataColumnSidecars(config: ChainForkConfig, block: SignedBeaconBlock, blobs: Uint8Array[], cellProofs: Uint8Array[]): fulu.DataColumnSidecar[] {
  const commitments = blobCommitmentsOf(block);
  if (blobs.length !== commitments.length || cellProofs.length !== commitments.length * NUMBER_OF_COLUMNS) {
    throw new Error(`block commits to ${commitments.length} blobs, but ${blobs.length} blobs and ${cellProofs.length} cell proofs were given`);
  }
  const proofsByBlob = blobs.map((_, row) => cellProofs.slice(row * NUMBER_OF_COLUMNS, (row + 1) * NUMBER_OF_COLUMNS));
  return dataColumnSidecarsOfBlock(config, block, blobs.map((blob) => computeCells(blob)), proofsByBlob);
}

/**
 * get_data_column_sidecars_from_block: the sidecars of a fulu block from each blob's cells and
 * cell proofs (CELLS_PER_EXT_BLOB of each per blob).
 */
export function dataColumnSidecarsOfBlock(config: ChainForkConfig, block: SignedBeaconBlock, cellsByBlob: Uint8Array[][], proofsByBlob: Uint8Array[][]): fulu.DataColumnSidecar[] {
  const commitments = blobCommitmentsOf(block);
  if (cellsByBlob.length !== commitments.length) throw new Error(`block commits to ${commitments.length} blobs, but the cells of ${cellsByBlob.length} were given`);
  if (commitments.length === 0) return [];
  const slot = block.message.slot;
  const bodyTree = new Tree(bodyType(config, slot).value_toTree(block.message.body as never));
  const inclusionProof = bodyTree.getSingleProof(commitmentGindex(config, slot));
  return dataColumnSidecarsOf(signedHeaderOf(config, block), commitments, inclusionProof, cellsByBlob, proofsByBlob);
}

/**
 * get_data_column_sidecars: column `c` holds cell `c` of every blob with its proof, under the
 * block's signed header, commitments and their inclusion proof (those of any of its sidecars).
 */
export function dataColumnSidecarsOf(
  signedBlockHeader: phase0.SignedBeaconBlockHeader,
  kzgCommitments: Uint8Array[],
  kzgCommitmentsInclusionProof: Uint8Array[],
  cellsByBlob: Uint8Array[][],
  proofsByBlob: Uint8Array[][]
): fulu.DataColumnSidecar[] {
  if (cellsByBlob.length !== kzgCommitments.length || proofsByBlob.length !== kzgCommitments.length) {
    throw new Error(`${kzgCommitments.length} commitments, but the cells of ${cellsByBlob.length} blobs and the proofs of ${proofsByBlob.length}`);
  }
  for (const [row, cells] of cellsByBlob.entries()) {
    if (cells.length !== NUMBER_OF_COLUMNS || proofsByBlob[row].length !== NUMBER_OF_COLUMNS) {
      throw new Error(`blob ${row} has ${cells.length} cells and ${proofsByBlob[row].length} proofs, not ${NUMBER_OF_COLUMNS} of each`);
    }
  }
  return Array.from({length: NUMBER_OF_COLUMNS}, (_, column) => ({
    index: column,
    column: cellsByBlob.map((cells) => cells[column]),
    kzgCommitments,
    kzgProofs: proofsByBlob.map((proofs) => proofs[column]),
    signedBlockHeader,
    kzgCommitmentsInclusionProof,
  }));
}

/** Whether a sidecar's header is this block's: the same signed header root. */
export function sidecarMatchesBlock(config: ChainForkConfig, sidecar: {signedBlockHeader: phase0.SignedBeaconBlockHeader}, block: SignedBeaconBlock): boolean {
  const expected = ssz.phase0.BeaconBlockHeader.hashTreeRoot(blockToHeader(config, block.message));
  return Buffer.from(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message)).equals(expected);
}

/**
 * The blobs of a fulu block from its data columns (at least half of them): the first half of an
 * extended blob's cells is the blob itself; with other columns, the cells are recovered first.
 */
export function blobsFromColumns(columns: fulu.DataColumnSidecar[]): Uint8Array[] {
  const half = NUMBER_OF_COLUMNS / 2;
  if (columns.length < half) throw new Error(`${columns.length} columns cannot give the blobs: ${half} are needed`);
  const byIndex = new Map(columns.map((c) => [c.index, c]));
  const blobCount = columns[0].column.length;
  const direct = Array.from({length: half}, (_, i) => byIndex.get(i));
  return Array.from({length: blobCount}, (_, row) => {
    const cells = direct.every((c) => c !== undefined)
      ? direct.map((c) => c!.column[row])
      : recoverCells(columns.map((c) => c.index), columns.map((c) => c.column[row])).slice(0, half);
    return Buffer.concat(cells);
  });
}
