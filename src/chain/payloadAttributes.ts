import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type CachedBeaconStateCapella,
  type CachedBeaconStateExecutions,
  computeEpochAtSlot,
  computeTimeAtSlot,
  getExpectedWithdrawals,
  getRandaoMix,
} from "@lodestar/state-transition";
import type {Root, Slot} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {PayloadAttributes} from "../execution/engine.ts";
import type {ChainEvents, PayloadAttributesEvent} from "./interface.ts";

/**
 * The payload attributes of a block at `preState.slot` (the parent's post-state advanced to the
 * proposal slot): what block production hands the execution engine, and what the
 * `payload_attributes` event announces beforehand.
 */
export function payloadAttributes(config: BeaconConfig, preState: CachedBeaconStateAllForks, parentRoot: Root, feeRecipient: Uint8Array): PayloadAttributes {
  const slot = preState.slot;
  const forkSeq = config.getForkSeq(slot);
  return {
    timestamp: computeTimeAtSlot(config, slot, preState.genesisTime),
    prevRandao: getRandaoMix(preState, computeEpochAtSlot(slot)),
    suggestedFeeRecipient: feeRecipient,
    withdrawals: forkSeq >= ForkSeq.capella ? getExpectedWithdrawals(forkSeq, preState as CachedBeaconStateCapella).expectedWithdrawals : undefined,
    parentBeaconBlockRoot: forkSeq >= ForkSeq.deneb ? parentRoot : undefined,
  };
}

/** The `payload_attributes` event for a proposal at `preState.slot` on `parentRoot`; null before bellatrix (no payloads). */
export function payloadAttributesEvent(
  config: BeaconConfig,
  preState: CachedBeaconStateAllForks,
  parentRoot: Root,
  feeRecipientOf: (validatorIndex: number) => Uint8Array
): PayloadAttributesEvent | null {
  const slot = preState.slot;
  if (config.getForkSeq(slot) < ForkSeq.bellatrix) return null;
  const parentPayload = (preState as CachedBeaconStateExecutions).latestExecutionPayloadHeader;
  const proposerIndex = preState.epochCtx.getBeaconProposer(slot);
  return {
    fork: config.getForkName(slot),
    proposalSlot: slot,
    proposerIndex,
    parentBlockRoot: parentRoot,
    parentBlockNumber: parentPayload.blockNumber,
    parentBlockHash: parentPayload.blockHash,
    payloadAttributes: payloadAttributes(config, preState, parentRoot, feeRecipientOf(proposerIndex)),
  };
}

export interface PayloadAttributesEventsDeps {
  config: BeaconConfig;
  emitter: EventEmitter<ChainEvents>;
  /** the head's block root, as the chain holds it now */
  headRoot: () => string;
  /** the state a block at `slot` on `headRoot` would be built on */
  stateAt: (headRoot: string, slot: Slot) => Promise<CachedBeaconStateAllForks | null>;
  feeRecipientOf: (validatorIndex: number) => Uint8Array;
}

/** The chain's `payload_attributes` events, each for a proposal on the head; made only while someone listens. */
export class PayloadAttributesEvents {
  private readonly deps: PayloadAttributesEventsDeps;

  constructor(deps: PayloadAttributesEventsDeps) {
    this.deps = deps;
  }

  /** Whether anyone listens (an events stream subscribed to the topic): the state advance is not free. */
  wanted(): boolean {
    return this.deps.emitter.listenerCount("payload_attributes") > 0;
  }

  /** Emits the attributes a proposal at `slot` on the head would hand the execution engine. */
  async emit(slot: Slot): Promise<void> {
    const headRoot = this.deps.headRoot();
    const preState = await this.deps.stateAt(headRoot, slot);
    const event = preState && payloadAttributesEvent(this.deps.config, preState, fromHex(headRoot), this.deps.feeRecipientOf);
    if (event) this.deps.emitter.emit("payload_attributes", event);
  }
}
