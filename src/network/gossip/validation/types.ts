import type {SignatureVerifier} from "../../../bls/verifier.ts";
import type {BeaconConfig} from "@lodestar/config";
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {BeaconBlock, SignedBeaconBlock} from "@lodestar/types";
import type {DataAvailability} from "../../../chain/blobs/dataAvailability.ts";
import type {TargetShufflings} from "../../../chain/shufflingCache.ts";
import type {PendingChildren} from "../../../chain/pendingChildren.ts";
import type {LightClientReader} from "../../../chain/lightClient/server.ts";
import type {ForkChoice} from "../../../forkchoice/index.ts";
import type {OperationPools} from "../../../pools/index.ts";
import type {EventEmitter} from "node:events";
import type {ChainEvents} from "../../../chain/interface.ts";
import type {ParsedTopic} from "../topics.ts";

/** The outcome of a gossip validation (gossipsub v1.1 extended validators) and why. */
export interface GossipValidationResult {
  result: "ACCEPT" | "IGNORE" | "REJECT";
  reason: string;
  /** a block (or sidecar) whose parent is unknown: sync may fetch `unknownBlockRoot` */
  parentUnknown?: boolean;
  /** 0x hex root of the unknown block the message builds on or votes for */
  unknownBlockRoot?: string;
}

export type GossipValidatorFn = (topic: ParsedTopic, message: unknown, from: string) => Promise<GossipValidationResult>;

export const accept = (reason: string): GossipValidationResult => ({result: "ACCEPT", reason});
export const ignore = (reason: string, extra: Partial<GossipValidationResult> = {}): GossipValidationResult => ({...extra, result: "IGNORE", reason});
export const reject = (reason: string): GossipValidationResult => ({result: "REJECT", reason});

/** The wall clock (src/clock/clock.ts). */
export interface GossipClock {
  currentSlot(): number;
  /** the slot at now + `toleranceMs` (negative: now - |toleranceMs|) */
  currentSlotWithTolerance(toleranceMs: number): number;
  /** milliseconds since the start of `slot`, negative before it */
  msIntoSlot(slot: number): number;
}

/** What gossip validation reads of the chain (BeaconChain has all of it). */
export interface GossipChain {
  readonly genesisTime: number;
  readonly forkChoice: Pick<ForkChoice, "hasBlock" | "getBlock" | "getAncestor" | "getFinalizedCheckpoint">;
  getHeadState(): CachedBeaconStateAllForks;
  /** the head state advanced to `epoch` (committees, sync committees) */
  getHeadStateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks>;
  /** a block whose parent is still being imported waits for that import here */
  readonly pendingChildren: Pick<PendingChildren, "waitForParent">;
  /** the committees of an attestation's target checkpoint (its own branch's, not the head's) */
  readonly targetShufflings: Pick<TargetShufflings, "get">;
  /** the parent's post-state advanced to the block's slot; only `slot` and `parentRoot` are read */
  getBlockPreState(block: BeaconBlock): Promise<CachedBeaconStateAllForks | null>;
  /** the chain's events (a sidecar that passed the gossip rules is announced there) */
  readonly emitter: Pick<EventEmitter<ChainEvents>, "emit" | "listenerCount">;
  /** where verified sidecars wait for their block */
  readonly dataAvailability: Pick<DataAvailability, "addBlobSidecars" | "addColumnSidecars" | "hasColumnSidecar">;
  /** checks signatures (the node's worker pool) */
  readonly verifier: SignatureVerifier;
  /** the node's own latest light-client updates (the light-client topics forward only those); absent: not served */
  readonly lightClient?: Pick<LightClientReader, "getFinalityUpdate" | "getOptimisticUpdate">;
}

export interface GossipValidatorDeps {
  config: BeaconConfig;
  chain: GossipChain;
  pools: Pick<OperationPools, "attestations" | "opPool" | "syncCommittee" | "emitter">;
  clock: GossipClock;
  /** a block for a slot that has not started (IGNOREd): the caller may queue it for that slot */
  onFutureBlock?: (block: SignedBeaconBlock, from: string) => void;
  /**
   * A block that passed every gossip rule: it is ACCEPTed (forwarded) at once, and imported here
   * in the background (its state transition and its data may take a while).
   */
  importBlock: (block: SignedBeaconBlock, from: string) => void;
  /** waits `ms`; a timer unless given (tests pass one that moves their clock) */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Whether one of the node's validators aggregates on `subnet` at `slot` (a committee
   * subscription with is_aggregator): only then are the subnet's single attestations kept for
   * aggregation (all of them when not given).
   */
  aggregatesOn?: (subnet: number, slot: number) => boolean;
}
