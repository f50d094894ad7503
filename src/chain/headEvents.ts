import {computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {fromHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {ForkChoice, ProtoBlock} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import type {ChainEvents, HeadInfo} from "./interface.ts";

const log = getLogger("chain");

type HeadEvent = ChainEvents["head"][0];
type ReorgEvent = ChainEvents["chain_reorg"][0];

/**
 * The `head` event of a head change. Dependent roots are the spec's: the block at the last
 * slot before the epoch, or the finalized root when that slot is older than fork choice holds.
 */
export function headEvent(forkChoice: ForkChoice, oldHead: ProtoBlock, newHead: ProtoBlock, anchorSlot: number): HeadEvent {
  const epoch = computeEpochAtSlot(newHead.slot);
  const dependentRoot = (e: number): Uint8Array => {
    const slot = computeStartSlotAtEpoch(e) - 1;
    if (slot < 0 || slot < anchorSlot) return fromHex(forkChoice.getFinalizedCheckpoint().root);
    return fromHex(forkChoice.getAncestor(newHead.blockRoot, slot) ?? newHead.blockRoot);
  };
  return {
    slot: newHead.slot,
    block: fromHex(newHead.blockRoot),
    state: fromHex(newHead.stateRoot),
    epochTransition: computeEpochAtSlot(oldHead.slot) !== epoch,
    previousDutyDependentRoot: dependentRoot(epoch - 1),
    currentDutyDependentRoot: dependentRoot(epoch),
  };
}

/** The `chain_reorg` event when the new head does not descend from the old one, else null. */
export function reorgEvent(forkChoice: ForkChoice, oldHead: ProtoBlock, newHead: ProtoBlock, anchorSlot: number): ReorgEvent | null {
  if (newHead.parentRoot === oldHead.blockRoot || !forkChoice.hasBlock(oldHead.blockRoot)) return null;
  if (forkChoice.isDescendant(oldHead.blockRoot, newHead.blockRoot)) return null;
  const onOldChain = new Set<string>();
  for (const node of forkChoice.iterateAncestors(oldHead.blockRoot)) onOldChain.add(node.blockRoot);
  let commonSlot = anchorSlot;
  for (const node of forkChoice.iterateAncestors(newHead.blockRoot)) {
    if (onOldChain.has(node.blockRoot)) {
      commonSlot = node.slot;
      break;
    }
  }
  return {
    slot: newHead.slot,
    depth: oldHead.slot - commonSlot,
    oldHeadBlock: fromHex(oldHead.blockRoot),
    newHeadBlock: fromHex(newHead.blockRoot),
    oldHeadState: fromHex(oldHead.stateRoot),
    newHeadState: fromHex(newHead.stateRoot),
    epoch: computeEpochAtSlot(newHead.slot),
  };
}

/** A head change's events: `head`, and `chain_reorg` (logged as a warning) when the new head is on another branch. */
export function emitHeadChange(emitter: EventEmitter<ChainEvents>, forkChoice: ForkChoice, oldHead: ProtoBlock, newHead: ProtoBlock, anchorSlot: number): void {
  emitter.emit("head", headEvent(forkChoice, oldHead, newHead, anchorSlot));
  const reorg = reorgEvent(forkChoice, oldHead, newHead, anchorSlot);
  if (!reorg) return;
  log.warn({depth: reorg.depth, oldHead: oldHead.blockRoot, newHead: newHead.blockRoot}, "chain reorg");
  emitter.emit("chain_reorg", reorg);
}

/** What the chain tells of its head block (made once per head: shared, so never to be changed). */
export function headInfoOf(head: ProtoBlock): HeadInfo {
  return {
    slot: head.slot,
    blockRoot: fromHex(head.blockRoot),
    stateRoot: fromHex(head.stateRoot),
    executionBlockHash: head.executionBlockHash ? fromHex(head.executionBlockHash) : new Uint8Array(32),
  };
}
