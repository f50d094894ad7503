import type {BeaconConfig} from "@lodestar/config";
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {ForkName} from "@lodestar/params";
import type {BeaconBlock, ExecutionPayload, LightClientFinalityUpdate, LightClientOptimisticUpdate, Root, SignedBeaconBlock, Slot, deneb, fulu, phase0} from "@lodestar/types";
import type {EventEmitter} from "node:events";
import type {BlobsBundle, PayloadAttributes} from "../execution/engine.ts";
import type {ForkChoice} from "../forkchoice/index.ts";
import type {ValidatorLiveness} from "./liveness.ts";
import type {PublishedSidecars} from "./blobs/published.ts";
import type {Forked} from "../db/lightClient.ts";
import type {LightClientReader} from "./lightClient/server.ts";

/**
 * The chain's public surface: what the API handlers, the validator duties and the node see.
 * Everything here is domain data (lodestar value types); nothing knows about HTTP.
 */

export interface HeadInfo {
  slot: Slot;
  blockRoot: Root;
  stateRoot: Root;
  /** execution block hash of the head, zero before the merge */
  executionBlockHash: Uint8Array;
}

/** Why a block was not imported. Each code is one clear reason an operator can act on. */
export type BlockErrorCode =
  | "PARENT_UNKNOWN"
  | "ALREADY_KNOWN"
  | "FUTURE_SLOT"
  | "WOULD_REVERT_FINALIZED"
  | "NOT_LATER_THAN_PARENT"
  | "INCORRECT_PROPOSER"
  | "INVALID_SIGNATURE"
  | "INVALID_STATE_ROOT"
  | "INVALID_EXECUTION_PAYLOAD"
  /** the parent's payload was found invalid (sync/optimistic.md: so is every block built on it) */
  | "PARENT_PAYLOAD_INVALID"
  /** the execution engine could not be asked (unreachable, timed out, refused the call): nothing is known of the payload */
  | "EXECUTION_ENGINE_ERROR"
  | "DATA_UNAVAILABLE"
  | "STATE_TRANSITION_FAILED";

export class BlockError extends Error {
  readonly code: BlockErrorCode;

  constructor(code: BlockErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "BlockError";
    this.code = code;
  }
}

export interface ImportedBlock {
  blockRoot: Root;
  slot: Slot;
  /** true when the block became the new head */
  isHead: boolean;
}

export interface ProducedBlock {
  /** a BlindedBeaconBlock when `blinded` (the builder's header in place of the payload) */
  block: BeaconBlock;
  /** the payload is the builder's: the block is blinded, and its proposer publishes it as such */
  blinded?: boolean;
  fork: ForkName;
  /** wei, the execution payload's value to the proposer */
  executionPayloadValue: bigint;
  /** gwei, the consensus rewards the block earns its proposer */
  consensusBlockValue: bigint;
  /** the blobs the block commits to, with their proofs (empty before deneb) */
  blobsBundle: BlobsBundle;
}

export interface ProduceBlockArgs {
  slot: Slot;
  randaoReveal: Uint8Array;
  /** 32 bytes; the node's graffiti setting when absent */
  graffiti?: Uint8Array;
  /** the proposer's fee recipient; the node's registered or default one when absent */
  feeRecipient?: Uint8Array;
  /**
   * with a builder: the percentage its bid's value is weighed with against the local payload's
   * (beacon-APIs `builder_boost_factor`; 0: local only); the node's `--builder-boost-factor` when absent
   */
  builderBoostFactor?: bigint;
}

/** Events the chain emits (names as the Beacon API event topics where one exists). */
export interface ChainEvents {
  head: [{slot: Slot; block: Root; state: Root; epochTransition: boolean; previousDutyDependentRoot: Root; currentDutyDependentRoot: Root}];
  block: [{slot: Slot; block: Root}];
  finalized_checkpoint: [{block: Root; state: Root; epoch: number}];
  chain_reorg: [{slot: Slot; depth: number; oldHeadBlock: Root; newHeadBlock: Root; oldHeadState: Root; newHeadState: Root; epoch: number}];
  /** a block passed verification (proposer, signatures, payload, transition), before it is stored and given to fork choice */
  block_gossip: [{slot: Slot; block: Root}];
  /** at each slot, while anyone listens: the attributes of the next slot's proposal on the head */
  payload_attributes: [PayloadAttributesEvent];
  /** the latest LightClientFinalityUpdate changed its finalized header (or reached supermajority) */
  light_client_finality_update: [Forked<LightClientFinalityUpdate>];
  /** the latest LightClientOptimisticUpdate changed its attested header */
  light_client_optimistic_update: [Forked<LightClientOptimisticUpdate>];
  /** a blob sidecar passed the gossip rules (from a peer, or published with its block) */
  blob_sidecar: [{blockRoot: Root; index: number; slot: Slot; kzgCommitment: Uint8Array; versionedHash: Uint8Array}];
  /** a data column sidecar passed the gossip rules (from a peer, or published with its block) */
  data_column_sidecar: [{blockRoot: Root; index: number; slot: Slot; kzgCommitments: Uint8Array[]}];
}

/** What the execution engine would be asked to build for a proposal at `proposalSlot`. */
export interface PayloadAttributesEvent {
  fork: ForkName;
  proposalSlot: Slot;
  proposerIndex: number;
  parentBlockRoot: Root;
  parentBlockNumber: number;
  parentBlockHash: Uint8Array;
  payloadAttributes: PayloadAttributes;
}

/** What the debug API reads of fork choice: its nodes (weight, validity) and its leaves. */
export type ForkChoiceReader = Pick<ForkChoice, "getAllNodes" | "getHeads">;

export interface IBeaconChain {
  readonly config: BeaconConfig;
  readonly forkChoice: ForkChoiceReader;
  readonly genesisTime: number;
  readonly genesisValidatorsRoot: Root;
  readonly emitter: EventEmitter<ChainEvents>;
  /** validators seen active (attesting, proposing) in recent epochs */
  readonly liveness: Pick<ValidatorLiveness, "isLive">;
  /** light-client data derived from imported blocks (bootstraps, updates) */
  readonly lightClient: LightClientReader;

  /** The current wall-clock slot. */
  currentSlot(): Slot;
  /** Why nothing can be stored now (the disk is full), or null. */
  writesPausedError(): Error | null;
  getHead(): HeadInfo;
  /** The head state (do not mutate; clone first). */
  getHeadState(): CachedBeaconStateAllForks;
  getFinalizedCheckpoint(): phase0.Checkpoint;
  getJustifiedCheckpoint(): phase0.Checkpoint;

  /** A state of the head chain advanced (empty slots processed) to the start of `epoch`; for duties. */
  getHeadStateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks>;
  /** The post-state of a block the node has, or null. */
  getStateByBlockRoot(blockRoot: Root): Promise<CachedBeaconStateAllForks | null>;
  /** The state a block was applied to: its parent's post-state advanced to the block's slot, or null (do not mutate). */
  getBlockPreState(block: BeaconBlock): Promise<CachedBeaconStateAllForks | null>;
  /** The canonical state at `slot` (advanced through empty slots where needed), or null. */
  getStateBySlot(slot: Slot): Promise<CachedBeaconStateAllForks | null>;
  /** The state with this root, or null. */
  getStateByStateRoot(stateRoot: Root): Promise<CachedBeaconStateAllForks | null>;

  getBlockByRoot(blockRoot: Root): Promise<SignedBeaconBlock | null>;
  /** A block's SSZ bytes as stored (a SignedBeaconBlock of the fork at its slot), or null. */
  getBlockBytesByRoot(blockRoot: Root): Promise<Uint8Array | null>;
  /** The root of the canonical block at `slot`, or null when the slot is empty or unknown. */
  getCanonicalBlockRootAtSlot(slot: Slot): Promise<Root | null>;
  /** The canonical block at `slot`, or null when the slot is empty or unknown. */
  getCanonicalBlockAtSlot(slot: Slot): Promise<SignedBeaconBlock | null>;
  /** Whether the block is part of the canonical (head) chain. */
  isCanonical(blockRoot: Root): boolean;
  /** Whether the block was imported before the execution engine validated its payload (and still is unjudged). */
  isOptimistic(blockRoot: Root): boolean;
  /** isOptimistic of the head: validators must not build on it */
  isHeadOptimistic(): boolean;

  /** Full verification (signatures included) and import. Throws BlockError. */
  importBlock(signedBlock: SignedBeaconBlock): Promise<ImportedBlock>;
  produceBlock(args: ProduceBlockArgs): Promise<ProducedBlock>;
  /** The execution payload of a recently produced block, by its block hash (to unblind a blinded block), or null. */
  getProducedPayload(blockHash: Uint8Array): ExecutionPayload | null;
  /** The blobs of a recently produced block's payload, by its block hash, or null. */
  getProducedBlobs(blockHash: Uint8Array): BlobsBundle | null;
  /**
   * The sidecars of a block published with its blobs and proofs, verified and kept for its
   * import; throws, saying why, when they do not verify.
   */
  acceptPublishedBlobs(signedBlock: SignedBeaconBlock, blobs: Uint8Array[], proofs: Uint8Array[]): PublishedSidecars;
  /** Stored blob sidecars of a block (deneb, electra), or null when the node has none. */
  getBlobSidecars(blockRoot: Root): Promise<deneb.BlobSidecar[] | null>;
  /** Stored data column sidecars of a block (fulu), the columns this node keeps, ascending. */
  getDataColumnSidecars(blockRoot: Root, columns?: number[]): Promise<fulu.DataColumnSidecar[]>;
  /** One stored data column sidecar of a block as its SSZ bytes, or null. */
  getDataColumnSidecarBytes(blockRoot: Root, column: number): Promise<Uint8Array | null>;
  /** The blobs of a fulu block from at least half of its columns, off the event loop when cells must be recovered (absent: on it). */
  blobsOfColumns?(columns: fulu.DataColumnSidecar[]): Promise<Uint8Array[]>;
  /** AttestationData for `slot` and `committeeIndex` on the current head (index is 0 from electra on). */
  produceAttestationData(committeeIndex: number, slot: Slot): Promise<phase0.AttestationData>;
}
