import {ForkSeq, NUMBER_OF_COLUMNS} from "@lodestar/params";
import {computeEpochAtSlot, computeStartSlotAtEpoch, getBlockHeaderProposerSignatureSetByHeaderSlot} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type deneb, type fulu, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {ColumnProofBatch} from "../../../chain/blobs/columnProofBatch.ts";
import {blobInclusionProofIsValid, blobSidecarsKzgValid, columnInclusionProofIsValid, columnSidecarsKzgValid} from "../../../chain/blobs/sidecars.ts";
import {subnetCount} from "../topics.ts";
import {latestCurrentSlot} from "./timing.ts";
import {SeenBySlot} from "./seenCache.ts";
import {emitBlobSidecarEvents, emitColumnSidecarEvents} from "../../../chain/blobs/sidecarEvents.ts";
import {type GossipValidationResult, type GossipValidatorDeps, type GossipValidatorFn, accept, ignore, reject} from "./types.ts";

/**
 * blob_sidecar_{subnet_id} (deneb, electra) and data_column_sidecar_{subnet_id} (fulu), with
 * every rule of their p2p specs: index and subnet, slot range, the header's proposer signature
 * and proposer index, the parent and the finalized ancestry, the inclusion proof, the KZG proofs,
 * and the first-seen rule. What is accepted waits for its block in the chain's data availability.
 */

/** Slots of sidecars seen kept at most (the first-seen rule). */
const MAX_SEEN_SIDECAR_SLOTS = 1024;

/** Signed headers whose signature and proposer were checked: a block's many sidecars share one. */
const MAX_VERIFIED_HEADERS = 256;

class VerifiedHeaders {
  private readonly roots = new Set<string>();

  key(signedHeader: phase0.SignedBeaconBlockHeader): string {
    return toRootHex(ssz.phase0.SignedBeaconBlockHeader.hashTreeRoot(signedHeader));
  }

  has(key: string): boolean {
    return this.roots.has(key);
  }

  add(key: string): void {
    this.roots.add(key);
    if (this.roots.size > MAX_VERIFIED_HEADERS) this.roots.delete(this.roots.values().next().value as string);
  }
}

/** The rules about the sidecar's signed block header, shared by blob and data column sidecars. */
async function headerOutcome(deps: GossipValidatorDeps, signedHeader: phase0.SignedBeaconBlockHeader, verified: VerifiedHeaders): Promise<GossipValidationResult | null> {
  const {config, chain} = deps;
  const header = signedHeader.message;
  const {slot, proposerIndex} = header;
  if (slot > latestCurrentSlot(deps)) return ignore(`sidecar slot ${slot} is in the future (current slot ${deps.clock.currentSlot()})`);
  const finalized = chain.forkChoice.getFinalizedCheckpoint();
  const finalizedSlot = computeStartSlotAtEpoch(finalized.epoch);
  if (slot <= finalizedSlot) return ignore(`sidecar slot ${slot} is not after the finalized slot ${finalizedSlot}`);
  // the parent's and finalized ancestry are rechecked each time (fork choice moves); the signature
  // and proposer of a header seen valid need not be
  const headerKey = verified.key(signedHeader);
  if (verified.has(headerKey)) return parentOutcome(deps, header, finalized, finalizedSlot);

  const {pubkeyCache} = chain.getHeadState().epochCtx;
  if (!pubkeyCache.get(proposerIndex)) return ignore(`proposer ${proposerIndex} is not a known validator`);
  if (!(await chain.verifier.verify([getBlockHeaderProposerSignatureSetByHeaderSlot(config, signedHeader)], pubkeyCache, {priority: true}))) {
    return reject(`invalid proposer signature on the sidecar's block header (proposer ${proposerIndex}, slot ${slot})`);
  }
  const parentRule = parentOutcome(deps, header, finalized, finalizedSlot);
  if (parentRule) return parentRule;
  const preState = await chain.getBlockPreState({slot, parentRoot: header.parentRoot} as BeaconBlock).catch(() => null);
  if (!preState) return ignore(`no state to compute the proposer of slot ${slot}`);
  const expected = preState.epochCtx.getBeaconProposer(slot);
  if (proposerIndex !== expected) return reject(`proposer ${proposerIndex} is not the proposer of slot ${slot} (${expected})`);
  verified.add(headerKey);
  return null;
}

function parentOutcome(
  {chain}: GossipValidatorDeps,
  header: phase0.BeaconBlockHeader,
  finalized: {root: string},
  finalizedSlot: number
): GossipValidationResult | null {
  const parentHex = toRootHex(header.parentRoot);
  const parent = chain.forkChoice.getBlock(parentHex);
  if (!parent) return ignore(`parent ${parentHex} of the sidecar's block is unknown`, {parentUnknown: true, unknownBlockRoot: parentHex});
  if (parent.slot >= header.slot) return reject(`sidecar slot ${header.slot} is not after its parent's ${parent.slot}`);
  if (chain.forkChoice.getAncestor(parentHex, finalizedSlot) !== finalized.root) {
    return reject(`the sidecar's block does not descend from the finalized checkpoint ${finalized.root}`);
  }
  return null;
}
/**
 * A sidecar whose block's parent is not known yet is IGNOREd (not forwarded), but kept for its
 * block when its proofs hold (the spec lets a client queue it): its header's signature is already
 * checked, and at import it is used only if its header is that of the imported block, which
 * import validates in full. Without this, a node one block behind (its parent still waiting for
 * data) drops the next block's sidecars too, waits for them, and stays behind block after block.
 */
function parkForBlock(outcome: GossipValidationResult, proofsValid: () => boolean, keep: () => void): GossipValidationResult {
  if (proofsValid()) keep();
  return outcome;
}

export function createBlobSidecarValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  const {config, chain} = deps;
  const seen = new SeenBySlot(MAX_SEEN_SIDECAR_SLOTS);
  const verified = new VerifiedHeaders();
  return async (topic, message) => {
    const sidecar = message as deneb.BlobSidecar;
    const header = sidecar.signedBlockHeader.message;
    const fork = config.getForkName(header.slot);
    if (ForkSeq[fork] < ForkSeq.deneb || ForkSeq[fork] >= ForkSeq.fulu) return reject(`no blob sidecars at ${fork} (slot ${header.slot})`);
    const maxBlobs = config.getMaxBlobsPerBlock(computeEpochAtSlot(header.slot));
    if (sidecar.index >= maxBlobs) return reject(`blob index ${sidecar.index} is not below ${maxBlobs}`);
    const subnet = sidecar.index % subnetCount(config, "blob_sidecar", fork);
    if (subnet !== topic.subnet) return reject(`blob ${sidecar.index} belongs to subnet ${subnet}, not ${topic.subnet}`);
    const seenKey = `${header.proposerIndex}/${sidecar.index}`;
    if (seen.has(header.slot, seenKey)) return ignore(`blob ${sidecar.index} of proposer ${header.proposerIndex} at slot ${header.slot} was seen already`);
    const headerRule = await headerOutcome(deps, sidecar.signedBlockHeader, verified);
    if (headerRule?.parentUnknown) return parkForBlock(headerRule, () => blobInclusionProofIsValid(config, sidecar) && blobSidecarsKzgValid([sidecar]), () => chain.dataAvailability.addBlobSidecars([sidecar]));
    if (headerRule) return headerRule;
    if (!blobInclusionProofIsValid(config, sidecar)) return reject("invalid KZG commitment inclusion proof");
    if (!blobSidecarsKzgValid([sidecar])) return reject(`invalid KZG proof of blob ${sidecar.index}`);
    if (!seen.add(header.slot, seenKey)) return ignore(`blob ${sidecar.index} of proposer ${header.proposerIndex} at slot ${header.slot} was seen already`);
    seen.prune(computeStartSlotAtEpoch(chain.forkChoice.getFinalizedCheckpoint().epoch));
    chain.dataAvailability.addBlobSidecars([sidecar]);
    emitBlobSidecarEvents(chain.emitter, [sidecar]);
    return accept(`blob ${sidecar.index} of slot ${header.slot}`);
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
  const {config, chain} = deps;
  const seen = new SeenBySlot(MAX_SEEN_SIDECAR_SLOTS);
  const verified = new VerifiedHeaders();
  // a block's columns arrive together: their cell proofs are checked as one batch
  const proofs = new ColumnProofBatch();
  return async (topic, message) => {
    const sidecar = message as fulu.DataColumnSidecar;
    const header = sidecar.signedBlockHeader.message;
    const fork = config.getForkName(header.slot);
    if (ForkSeq[fork] < ForkSeq.fulu) return reject(`no data column sidecars at ${fork} (slot ${header.slot})`);
    const shapeError = dataColumnShapeError(deps, sidecar);
    if (shapeError) return reject(shapeError);
    const subnet = sidecar.index % config.DATA_COLUMN_SIDECAR_SUBNET_COUNT;
    if (subnet !== topic.subnet) return reject(`column ${sidecar.index} belongs to subnet ${subnet}, not ${topic.subnet}`);
    const seenKey = `${header.proposerIndex}/${sidecar.index}`;
    if (seen.has(header.slot, seenKey)) return ignore(`column ${sidecar.index} of proposer ${header.proposerIndex} at slot ${header.slot} was seen already`);
    // columns built from the execution engine's blobs or rebuilt count as seen (fulu p2p-interface.md)
    if (chain.dataAvailability.hasColumnSidecar(toRootHex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(header)), sidecar.index)) {
      return ignore(`column ${sidecar.index} of slot ${header.slot} is held already`);
    }
    const headerRule = await headerOutcome(deps, sidecar.signedBlockHeader, verified);
    if (headerRule?.parentUnknown) return parkForBlock(headerRule, () => columnInclusionProofIsValid(config, sidecar) && columnSidecarsKzgValid([sidecar]), () => chain.dataAvailability.addColumnSidecars([sidecar]));
    if (headerRule) return headerRule;
    if (!columnInclusionProofIsValid(config, sidecar)) return reject("invalid KZG commitments inclusion proof");
    if (!(await proofs.isValid(sidecar))) return reject(`invalid KZG cell proofs in column ${sidecar.index}`);
    if (!seen.add(header.slot, seenKey)) return ignore(`column ${sidecar.index} of proposer ${header.proposerIndex} at slot ${header.slot} was seen already`);
    seen.prune(computeStartSlotAtEpoch(chain.forkChoice.getFinalizedCheckpoint().epoch));
    chain.dataAvailability.addColumnSidecars([sidecar]);
    emitColumnSidecarEvents(chain.emitter, [sidecar]);
    return accept(`column ${sidecar.index} of slot ${header.slot}`);
  };
}
