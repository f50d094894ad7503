import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {type CachedBeaconStateAllForks, computeEpochAtSlot, computeStartSlotAtEpoch, getBlockRootAtSlot} from "@lodestar/state-transition";
import type {Slot, phase0} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import type {ProtoBlock} from "../forkchoice/index.ts";

/**
 * The AttestationData an attester of `slot` signs on `head` (validator.md): the head's root, its
 * state's justified checkpoint as source, the epoch's checkpoint block on the head's chain as
 * target. `state` is the head state advanced to `slot` when it is behind. Index 0 from electra.
 */
export function attestationDataOnHead(config: BeaconConfig, head: ProtoBlock, state: CachedBeaconStateAllForks, committeeIndex: number, slot: Slot): phase0.AttestationData {
  const epoch = computeEpochAtSlot(slot);
  const epochStart = computeStartSlotAtEpoch(epoch);
  const targetRoot = epochStart >= head.slot ? fromHex(head.blockRoot) : getBlockRootAtSlot(state, epochStart);
  return {
    slot,
    index: config.getForkSeq(slot) >= ForkSeq.electra ? 0 : committeeIndex,
    beaconBlockRoot: fromHex(head.blockRoot),
    source: state.currentJustifiedCheckpoint.toValue(),
    target: {epoch, root: targetRoot},
  };
}
