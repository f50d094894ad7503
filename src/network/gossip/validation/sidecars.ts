import {ForkSeq, NUMBER_OF_COLUMNS} from "@lodestar/params";
import {computeEpochAtSlot, computeStartSlotAtEpoch, getBlockHeaderProposerSignatureSetByHeaderSlot} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type deneb, type fulu, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {createHash} from "node:crypto";
import {verifySignatureSetsBatch} from "../../../bls/verifySets.ts";
import {subnetCount} from "../topics.ts";
import {latestCurrentSlot} from "./timing.ts";
import {type GossipValidationResult, type GossipValidatorDeps, type GossipValidatorFn, ignore, reject} from "./types.ts";

/**
 * blob_sidecar_{subnet_id} (deneb, electra) and data_column_sidecar_{subnet_id} (fulu). Every
 * rule that needs no KZG library is checked: index and subnet, slot range, the header's proposer
 * signature and proposer index, the parent and the finalized ancestry, the inclusion proof. The
 * KZG proofs cannot be verified here (no KZG library, and the dev chain keeps no blobs), so a
 * sidecar that passes everything else is IGNOREd: never forwarded, its sender not penalised.
 */

const KZG_UNVERIFIED = "sidecar passes every other rule, but its KZG proofs cannot be verified by this node (no KZG library, no blob store)";

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

/** The rules about the sidecar's signed block header, shared by blob and data column sidecars. */
async function headerOutcome(deps: GossipValidatorDeps, signedHeader: phase0.SignedBeaconBlockHeader): Promise<GossipValidationResult | null> {
  const {config, chain} = deps;
  const header = signedHeader.message;
  const {slot, proposerIndex} = header;
  if (slot > latestCurrentSlot(deps)) return ignore(`sidecar slot ${slot} is in the future (current slot ${deps.clock.currentSlot()})`);
  const finalized = chain.forkChoice.getFinalizedCheckpoint();
  const finalizedSlot = computeStartSlotAtEpoch(finalized.epoch);
  if (slot <= finalizedSlot) return ignore(`sidecar slot ${slot} is not after the finalized slot ${finalizedSlot}`);

  const {pubkeyCache} = chain.getHeadState().epochCtx;
  if (!pubkeyCache.get(proposerIndex)) return ignore(`proposer ${proposerIndex} is not a known validator`);
  if (!verifySignatureSetsBatch([getBlockHeaderProposerSignatureSetByHeaderSlot(config, signedHeader)], pubkeyCache)) {
    return reject(`invalid proposer signature on the sidecar's block header (proposer ${proposerIndex}, slot ${slot})`);
  }
  const parentHex = toRootHex(header.parentRoot);
  const parent = chain.forkChoice.getBlock(parentHex);
  if (!parent) return ignore(`parent ${parentHex} of the sidecar's block is unknown`, {parentUnknown: true, unknownBlockRoot: parentHex});
  if (parent.slot >= slot) return reject(`sidecar slot ${slot} is not after its parent's ${parent.slot}`);
  if (chain.forkChoice.getAncestor(parentHex, finalizedSlot) !== finalized.root) {
    return reject(`the sidecar's block does not descend from the finalized checkpoint ${finalized.root}`);
  }
  const preState = await chain.getBlockPreState({slot, parentRoot: header.parentRoot} as BeaconBlock).catch(() => null);
  if (!preState) return ignore(`no state to compute the proposer of slot ${slot}`);
  const expected = preState.epochCtx.getBeaconProposer(slot);
  if (proposerIndex !== expected) return reject(`proposer ${proposerIndex} is not the proposer of slot ${slot} (${expected})`);
  return null;
}

export function createBlobSidecarValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  const {config} = deps;
  return async (topic, message) => {
    const sidecar = message as deneb.BlobSidecar;
    const header = sidecar.signedBlockHeader.message;
    const fork = config.getForkName(header.slot);
    if (ForkSeq[fork] < ForkSeq.deneb || ForkSeq[fork] >= ForkSeq.fulu) return reject(`no blob sidecars at ${fork} (slot ${header.slot})`);
    const maxBlobs = config.getMaxBlobsPerBlock(computeEpochAtSlot(header.slot));
    if (sidecar.index >= maxBlobs) return reject(`blob index ${sidecar.index} is not below ${maxBlobs}`);
    const subnet = sidecar.index % subnetCount(config, "blob_sidecar", fork);
    if (subnet !== topic.subnet) return reject(`blob ${sidecar.index} belongs to subnet ${subnet}, not ${topic.subnet}`);
    const headerRule = await headerOutcome(deps, sidecar.signedBlockHeader);
    if (headerRule) return headerRule;
    const bodyType = config.getPostDenebForkTypes(header.slot).BeaconBlockBody;
    const {index, depth} = subtreeIndex(bodyType.getPathInfo(["blobKzgCommitments", sidecar.index]).gindex);
    const leaf = ssz.deneb.KZGCommitment.hashTreeRoot(sidecar.kzgCommitment);
    if (!isValidMerkleBranch(leaf, sidecar.kzgCommitmentInclusionProof, depth, index, header.bodyRoot)) {
      return reject("invalid KZG commitment inclusion proof");
    }
    return ignore(KZG_UNVERIFIED);
  };
}

/** verify_data_column_sidecar of fulu p2p-interface.md: null when the sidecar is well formed. */
function dataColumnShapeError(deps: GossipValidatorDeps, sidecar: fulu.DataColumnSidecar): string | null {
  const count = sidecar.kzgCommitments.length;
  if (sidecar.index >= NUMBER_OF_COLUMNS) return `column index ${sidecar.index} is not below ${NUMBER_OF_COLUMNS}`;
  if (count === 0) return "sidecar has no KZG commitments";
  const maxBlobs = deps.config.getMaxBlobsPerBlock(computeEpochAtSlot(sidecar.signedBlockHeader.message.slot));
  if (count > maxBlobs) return `sidecar has ${count} KZG commitments, more than ${maxBlobs}`;
  if (sidecar.column.length !== count || sidecar.kzgProofs.length !== count) {
    return `column has ${sidecar.column.length} cells and ${sidecar.kzgProofs.length} proofs for ${count} commitments`;
  }
  return null;
}

export function createDataColumnSidecarValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  const {config} = deps;
  return async (topic, message) => {
    const sidecar = message as fulu.DataColumnSidecar;
    const header = sidecar.signedBlockHeader.message;
    const fork = config.getForkName(header.slot);
    if (ForkSeq[fork] < ForkSeq.fulu) return reject(`no data column sidecars at ${fork} (slot ${header.slot})`);
    const shapeError = dataColumnShapeError(deps, sidecar);
    if (shapeError) return reject(shapeError);
    const subnet = sidecar.index % config.DATA_COLUMN_SIDECAR_SUBNET_COUNT;
    if (subnet !== topic.subnet) return reject(`column ${sidecar.index} belongs to subnet ${subnet}, not ${topic.subnet}`);
    const headerRule = await headerOutcome(deps, sidecar.signedBlockHeader);
    if (headerRule) return headerRule;
    const bodyType = config.getPostDenebForkTypes(header.slot).BeaconBlockBody;
    const {index, depth} = subtreeIndex(bodyType.getPathInfo(["blobKzgCommitments"]).gindex);
    const leaf = ssz.deneb.BlobKzgCommitments.hashTreeRoot(sidecar.kzgCommitments);
    if (!isValidMerkleBranch(leaf, sidecar.kzgCommitmentsInclusionProof, depth, index, header.bodyRoot)) {
      return reject("invalid KZG commitments inclusion proof");
    }
    return ignore(KZG_UNVERIFIED);
  };
}
