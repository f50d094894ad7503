import type {ExecutionPayload, ExecutionRequests, Root, capella} from "@lodestar/types";

/** engine-api paris.md PayloadStatusV1 `status` (ACCEPTED: valid as far as the engine can tell without the parent's state) */
export type PayloadValidity = "VALID" | "INVALID" | "SYNCING" | "ACCEPTED" | "INVALID_BLOCK_HASH";

export interface PayloadStatus {
  status: PayloadValidity;
  /** the most recent valid ancestor's block hash (INVALID, VALID); null when the engine cannot say */
  latestValidHash: Uint8Array | null;
  validationError?: string | null;
}

/** What engine_newPayloadV3/V4 take beside the payload (deneb and later). */
export interface NewPayloadContext {
  /** kzg_commitment_to_versioned_hash of each blob commitment of the block */
  versionedHashes: Uint8Array[];
  /** the block's parent_root */
  parentBeaconBlockRoot: Root;
  /** electra and later */
  executionRequests?: ExecutionRequests;
}

/** The engine could not be reached or did not answer in time: nothing is known about the payload. */
export class EngineUnavailableError extends Error {
  /** no answer within the method's timeout (rather than a failed connection) */
  readonly timedOut: boolean;
  constructor(message: string, timedOut = false) {
    super(message);
    this.timedOut = timedOut;
  }
}

/** What the consensus side asks of an execution engine (the Engine API's shape, reduced to what the node uses). */
export interface PayloadAttributes {
  timestamp: number;
  prevRandao: Uint8Array;
  suggestedFeeRecipient: Uint8Array;
  /** capella and later */
  withdrawals?: capella.Withdrawal[];
  /** deneb and later */
  parentBeaconBlockRoot?: Root;
}

export interface ParentPayload {
  blockHash: Uint8Array;
  blockNumber: number;
  gasLimit: number;
}

/**
 * The blobs of a built payload (the Engine API's BlobsBundle): one commitment per blob, and one
 * KZG proof per blob (V1, deneb and electra) or CELLS_PER_EXT_BLOB cell proofs per blob, blob
 * after blob (V2, fulu).
 */
export interface BlobsBundle {
  commitments: Uint8Array[];
  proofs: Uint8Array[];
  blobs: Uint8Array[];
}

export const EMPTY_BLOBS_BUNDLE: BlobsBundle = {commitments: [], proofs: [], blobs: []};

export interface BuiltPayload {
  payload: ExecutionPayload;
  /** deneb and later */
  blobsBundle: BlobsBundle;
  /** electra and later */
  executionRequests: ExecutionRequests;
  /** wei paid to the fee recipient */
  blockValue: bigint;
}

/** One blob and its proof(s) from the engine's blob pool (BlobAndProofV1, or V2 with the cell proofs). */
export interface BlobAndProofs {
  blob: Uint8Array;
  proofs: Uint8Array[];
}

export interface ExecutionEngine {
  /** engine_newPayload: is this payload valid on top of its parent? */
  notifyNewPayload(fork: string, payload: ExecutionPayload, context?: NewPayloadContext): Promise<PayloadStatus>;
  /** engine_forkchoiceUpdated without attributes: tells the engine the head, safe and finalized hashes; the head's status when the engine gives one. */
  notifyForkchoiceUpdate(headBlockHash: Uint8Array, safeBlockHash: Uint8Array, finalizedBlockHash: Uint8Array, fork?: string): Promise<PayloadStatus | void>;
  /** engine_forkchoiceUpdated with attributes followed by engine_getPayload. */
  buildPayload(fork: string, parent: ParentPayload, attributes: PayloadAttributes): Promise<BuiltPayload>;
  /**
   * engine_getBlobs of the fork (V1 deneb and electra, V2 from fulu): the blobs the engine's pool
   * holds for these versioned hashes, null where one is missing (V1), or null for all when any
   * is missing (V2). Absent: the engine has no blob pool.
   */
  getBlobs?(fork: string, versionedHashes: Uint8Array[]): Promise<Array<BlobAndProofs | null> | null>;
}
