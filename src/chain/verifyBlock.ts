import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  DataAvailabilityStatus,
  ExecutionPayloadStatus,
  getBlockSignatureSets,
  isExecutionEnabled,
  stateTransition,
} from "@lodestar/state-transition";
import type {BeaconBlock, ExecutionPayload, IndexedAttestation, SignedBeaconBlock, bellatrix, deneb, electra} from "@lodestar/types";
import type {SignatureVerifier} from "../bls/verifier.ts";
import type {ExecutionEngine, NewPayloadContext, PayloadStatus} from "../execution/engine.ts";
import {kzgCommitmentToVersionedHash} from "../execution/engineJson.ts";
import {BlockError} from "./interface.ts";
import {toHex} from "@lodestar/utils";

export interface VerifiedBlock {
  postState: CachedBeaconStateAllForks;
  indexedAttestations: IndexedAttestation[];
  executionBlockHash: Uint8Array | null;
  /** the engine has not judged the payload yet (SYNCING, ACCEPTED): the block is imported optimistically */
  optimistic: boolean;
}

/** The engine found the block's payload INVALID; `latestValidHash` is its newest valid ancestor, when the engine knows it. */
export class InvalidPayloadError extends BlockError {
  readonly latestValidHash: Uint8Array | null;
  constructor(message: string, latestValidHash: Uint8Array | null) {
    super("INVALID_EXECUTION_PAYLOAD", message);
    this.latestValidHash = latestValidHash;
  }
}

/** What engine_newPayloadV3/V4 take beside the payload. */
function newPayloadContext(forkSeq: number, block: BeaconBlock): NewPayloadContext | undefined {
  if (forkSeq < ForkSeq.deneb) return undefined;
  const body = block.body as deneb.BeaconBlockBody & Partial<electra.BeaconBlockBody>;
  return {
    versionedHashes: body.blobKzgCommitments.map(kzgCommitmentToVersionedHash),
    parentBeaconBlockRoot: block.parentRoot,
    executionRequests: body.executionRequests,
  };
}

/** The engine's verdict on a payload: optimistic or not, or a BlockError. */
async function judgePayload(engine: ExecutionEngine, fork: string, payload: ExecutionPayload, context: NewPayloadContext | undefined): Promise<boolean> {
  let verdict: PayloadStatus;
  try {
    verdict = await engine.notifyNewPayload(fork, payload, context);
  } catch (e) {
    throw new BlockError("EXECUTION_ENGINE_ERROR", `the execution engine could not judge payload ${toHex(payload.blockHash)}: ${(e as Error).message}`);
  }
  switch (verdict.status) {
    case "VALID":
      return false;
    case "SYNCING":
    case "ACCEPTED":
      return true;
    default: {
      const why = verdict.validationError ? `: ${verdict.validationError}` : "";
      throw new InvalidPayloadError(`execution payload ${toHex(payload.blockHash)} is ${verdict.status}${why}`, verdict.status === "INVALID" ? verdict.latestValidHash : null);
    }
  }
}

/**
 * Everything that decides whether a block is valid, given its pre-state (the parent's
 * post-state advanced to the block's slot): proposer, every signature (one batch), the
 * execution payload (asked of the engine), the state transition and the state root.
 * `trusted` skips the signature and payload checks for blocks read back from our own store.
 */
export async function verifyBlock(
  config: BeaconConfig,
  preState: CachedBeaconStateAllForks,
  signedBlock: SignedBeaconBlock,
  engine: ExecutionEngine,
  verifier: SignatureVerifier,
  trusted = false
): Promise<VerifiedBlock> {
  const block = signedBlock.message;
  const fork = config.getForkName(block.slot);
  const expectedProposer = preState.epochCtx.getBeaconProposer(block.slot);
  if (block.proposerIndex !== expectedProposer) {
    throw new BlockError("INCORRECT_PROPOSER", `proposer ${block.proposerIndex} is not the proposer of slot ${block.slot} (${expectedProposer})`);
  }

  let indexedAttestations: IndexedAttestation[];
  try {
    indexedAttestations = block.body.attestations.map((att) => preState.epochCtx.getIndexedAttestation(ForkSeq[fork], att as never));
  } catch (e) {
    throw new BlockError("STATE_TRANSITION_FAILED", `invalid attestation: ${(e as Error).message}`);
  }

  // the signatures are checked (off the event loop) while the payload and the transition are
  let signaturesValid: Promise<boolean> = Promise.resolve(true);
  if (!trusted) {
    const sets = getBlockSignatureSets(preState.config, preState.epochCtx.currentSyncCommitteeIndexed, preState as never, signedBlock, indexedAttestations);
    signaturesValid = verifier.verify(sets, preState.epochCtx.pubkeyCache, {priority: true});
    // a failure before they are awaited must not go unhandled
    signaturesValid.catch(() => {});
  }

  let executionPayloadStatus = ExecutionPayloadStatus.preMerge;
  let executionBlockHash: Uint8Array | null = null;
  let optimistic = false;
  if (ForkSeq[fork] >= ForkSeq.bellatrix && isExecutionEnabled(preState as never, block as never)) {
    const payload = (block as bellatrix.BeaconBlock).body.executionPayload as ExecutionPayload;
    executionBlockHash = payload.blockHash;
    if (!trusted) optimistic = await judgePayload(engine, fork, payload, newPayloadContext(ForkSeq[fork], block));
    executionPayloadStatus = ExecutionPayloadStatus.valid;
  }

  let postState: CachedBeaconStateAllForks;
  try {
    postState = stateTransition(preState, signedBlock, {
      verifyStateRoot: false,
      verifyProposer: false,
      verifySignatures: false,
      executionPayloadStatus,
      dataAvailabilityStatus: DataAvailabilityStatus.Available,
      dontTransferCache: true,
    });
  } catch (e) {
    throw new BlockError("STATE_TRANSITION_FAILED", (e as Error).message);
  }
  const stateRoot = postState.hashTreeRoot();
  if (!(await signaturesValid)) {
    throw new BlockError("INVALID_SIGNATURE", `a signature in block at slot ${block.slot} does not verify`);
  }
  if (!Buffer.from(stateRoot).equals(block.stateRoot)) {
    throw new BlockError("INVALID_STATE_ROOT", `block says state root ${toHex(block.stateRoot)}, the transition gives ${toHex(stateRoot)}`);
  }
  return {postState, indexedAttestations, executionBlockHash, optimistic};
}
