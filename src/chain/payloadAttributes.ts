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
import type {Root} from "@lodestar/types";
import type {PayloadAttributes} from "../execution/engine.ts";
import type {PayloadAttributesEvent} from "./interface.ts";

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
