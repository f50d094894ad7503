import type {ExecutionPayload, ExecutionRequests, Root, capella} from "@lodestar/types";

export type PayloadValidity = "VALID" | "INVALID" | "SYNCING";

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

export interface BuiltPayload {
  payload: ExecutionPayload;
  /** electra and later */
  executionRequests: ExecutionRequests;
  /** wei paid to the fee recipient */
  blockValue: bigint;
}

export interface ExecutionEngine {
  /** engine_newPayload: is this payload valid on top of its parent? */
  notifyNewPayload(fork: string, payload: ExecutionPayload): Promise<PayloadValidity>;
  /** engine_forkchoiceUpdated without attributes: tells the engine the head, safe and finalized hashes. */
  notifyForkchoiceUpdate(headBlockHash: Uint8Array, safeBlockHash: Uint8Array, finalizedBlockHash: Uint8Array): Promise<void>;
  /** engine_forkchoiceUpdated with attributes followed by engine_getPayload. */
  buildPayload(fork: string, parent: ParentPayload, attributes: PayloadAttributes): Promise<BuiltPayload>;
}
