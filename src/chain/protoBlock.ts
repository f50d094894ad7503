import {type CachedBeaconStateAllForks, computeStartSlotAtEpoch, getBlockRootAtSlot} from "@lodestar/state-transition";
import {computeUnrealizedCheckpoints} from "@lodestar/state-transition/epoch";
import type {BeaconBlock, phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {CheckpointHex, ProtoBlock} from "../forkchoice/index.ts";

export function toCheckpointHex(cp: phase0.Checkpoint): CheckpointHex {
  return {epoch: cp.epoch, root: toRootHex(cp.root)};
}

/** The fork choice node of an imported block, from the block and its post-state. */
export function toProtoBlock(block: BeaconBlock, blockRootHex: string, postState: CachedBeaconStateAllForks, executionBlockHash: Uint8Array | null): ProtoBlock {
  const epochStart = computeStartSlotAtEpoch(postState.epochCtx.epoch);
  const targetRoot = block.slot === epochStart ? blockRootHex : toRootHex(getBlockRootAtSlot(postState, epochStart));
  const unrealized = computeUnrealizedCheckpoints(postState);
  return {
    slot: block.slot,
    blockRoot: blockRootHex,
    parentRoot: toRootHex(block.parentRoot),
    stateRoot: toRootHex(block.stateRoot),
    targetRoot,
    justifiedCheckpoint: toCheckpointHex(postState.currentJustifiedCheckpoint),
    finalizedCheckpoint: toCheckpointHex(postState.finalizedCheckpoint),
    unrealizedJustifiedCheckpoint: toCheckpointHex(unrealized.justifiedCheckpoint),
    unrealizedFinalizedCheckpoint: toCheckpointHex(unrealized.finalizedCheckpoint),
    executionBlockHash: executionBlockHash ? toRootHex(executionBlockHash) : null,
  };
}

/**
 * The anchor node fork choice starts from: a finalized (or genesis) block whose state is
 * `state`. Its own checkpoints point at itself, as the spec's get_forkchoice_store does.
 */
export function anchorProtoBlock(state: CachedBeaconStateAllForks, blockRootHex: string, executionBlockHash: Uint8Array | null): ProtoBlock {
  const header = state.latestBlockHeader;
  const cp = {epoch: state.epochCtx.epoch, root: blockRootHex};
  const stateRoot = toRootHex(state.hashTreeRoot());
  return {
    slot: header.slot,
    blockRoot: blockRootHex,
    parentRoot: toRootHex(header.parentRoot),
    stateRoot,
    targetRoot: blockRootHex,
    justifiedCheckpoint: cp,
    finalizedCheckpoint: cp,
    unrealizedJustifiedCheckpoint: cp,
    unrealizedFinalizedCheckpoint: cp,
    executionBlockHash: executionBlockHash ? toRootHex(executionBlockHash) : null,
  };
}
