import {getLogger, type TopicLogger} from "../log.ts";
import {VoteTable, computeDeltas} from "./computeDeltas.ts";
import {QueuedVotes} from "./queuedVotes.ts";
import {ProtoArray} from "./protoArray.ts";
import {
  ForkChoiceError,
  computeEpochAtSlot,
  computeStartSlotAtEpoch,
  type CheckpointHex,
  type ExecutionValidity,
  type ForkChoiceOptions,
  type ProtoBlock,
  type ProtoNodeView,
} from "./types.ts";

export interface ForkChoiceInit {
  /** the finalized/genesis block the store starts from; its justified and finalized checkpoints are itself at its epoch */
  anchor: ProtoBlock;
  currentSlot: number;
  opts: ForkChoiceOptions;
  /** effective balances, in EFFECTIVE_BALANCE_INCREMENT units, of a justified checkpoint's state (0 for inactive/slashed) */
  getJustifiedBalances: (checkpoint: CheckpointHex) => number[];
}

export interface OnBlockOpts {
  /** arrived in its own slot before the attestation deadline (spec block_timeliness) */
  isTimely: boolean;
  /** imported before the execution engine validated its payload */
  optimistic?: boolean;
}

/**
 * The spec's fork-choice Store and handlers (phase0 fork-choice.md, unchanged in substance by
 * later forks) over a proto-array. Block validity, attestation signatures and the state
 * transition are the caller's job; this class takes their results as plain values.
 */
export class ForkChoice {
  private readonly opts: ForkChoiceOptions;
  private readonly getJustifiedBalances: (checkpoint: CheckpointHex) => number[];
  private readonly protoArray: ProtoArray;
  private readonly log: TopicLogger;

  private currentSlot: number;
  private justified: CheckpointHex;
  private finalized: CheckpointHex;
  private unrealizedJustified: CheckpointHex;
  private unrealizedFinalized: CheckpointHex;

  private proposerBoostRoot: string | null = null;
  /** the boost now inside node weights; updateHead takes it off before adding the current one */
  private appliedBoost: {root: string; score: number} | null = null;

  /** latest messages by validator index */
  private readonly votes = new VoteTable();
  private readonly equivocatingIndices = new Set<number>();
  /** votes that may only count from a later slot */
  private readonly queuedVotes = new QueuedVotes();

  /** the balances node weights were computed with, and the checkpoint they belong to */
  private balances: number[];
  private balancesCheckpoint: CheckpointHex;
  private head: ProtoBlock;

  constructor(args: ForkChoiceInit) {
    const {anchor, currentSlot, opts, getJustifiedBalances} = args;
    if (anchor.justifiedCheckpoint.root !== anchor.blockRoot || anchor.finalizedCheckpoint.root !== anchor.blockRoot) {
      throw new ForkChoiceError("INVALID_ANCHOR", `anchor ${anchor.blockRoot} must be its own justified and finalized checkpoint`);
    }
    this.opts = opts;
    this.getJustifiedBalances = getJustifiedBalances;
    this.log = getLogger("forkchoice");
    this.protoArray = new ProtoArray(opts.slotsPerEpoch);
    this.currentSlot = currentSlot;
    this.justified = {...anchor.justifiedCheckpoint};
    this.finalized = {...anchor.finalizedCheckpoint};
    this.unrealizedJustified = {...anchor.justifiedCheckpoint};
    this.unrealizedFinalized = {...anchor.finalizedCheckpoint};
    this.head = copyBlock(anchor);
    this.protoArray.add(this.head, "valid");
    this.balances = getJustifiedBalances(this.justified);
    this.balancesCheckpoint = {...this.justified};
  }

  /** Spec on_tick for the start of `currentSlot` (every skipped slot's work included). */
  onTick(currentSlot: number): void {
    if (currentSlot <= this.currentSlot) return;
    const previousEpoch = this.currentEpoch();
    this.currentSlot = currentSlot;
    this.proposerBoostRoot = null;
    if (this.currentEpoch() > previousEpoch) {
      this.updateCheckpoints(this.unrealizedJustified, this.unrealizedFinalized);
    }
    for (const batch of this.queuedVotes.takeDue(currentSlot)) {
      for (let i = 0; i < batch.length; i++) this.applyVote(batch.validatorIndex[i], batch.nodeIndex[i], batch.targetEpoch[i]);
    }
  }

  /** Spec on_block after the state transition. A known block is ignored; a rejected one changes nothing. */
  onBlock(block: ProtoBlock, opts: OnBlockOpts): void {
    if (this.protoArray.indexOf(block.blockRoot) !== undefined) return;
    const parent = this.protoArray.getBlock(block.parentRoot);
    if (parent === null) {
      throw new ForkChoiceError("PARENT_UNKNOWN", `parent ${block.parentRoot} of block ${block.blockRoot} unknown`);
    }
    if (block.slot > this.currentSlot) {
      throw new ForkChoiceError("FUTURE_SLOT", `block slot ${block.slot} > current slot ${this.currentSlot}`);
    }
    if (block.slot <= parent.slot) {
      throw new ForkChoiceError("NOT_LATER_THAN_PARENT", `block slot ${block.slot} <= parent slot ${parent.slot}`);
    }
    const finalizedSlot = computeStartSlotAtEpoch(this.finalized.epoch, this.opts.slotsPerEpoch);
    if (block.slot <= finalizedSlot || !this.protoArray.hasCheckpointBlock(block.parentRoot, this.finalized)) {
      throw new ForkChoiceError("WOULD_REVERT_FINALIZED", `block ${block.blockRoot} does not descend from finalized ${this.finalized.root}`);
    }

    this.protoArray.add(copyBlock(block), opts.optimistic ? "optimistic" : "valid");
    if (opts.isTimely && block.slot === this.currentSlot && this.proposerBoostRoot === null) {
      this.proposerBoostRoot = block.blockRoot;
    }
    this.updateCheckpoints(block.justifiedCheckpoint, block.finalizedCheckpoint);

    // spec compute_pulled_up_tip
    this.updateUnrealizedCheckpoints(block.unrealizedJustifiedCheckpoint, block.unrealizedFinalizedCheckpoint);
    if (computeEpochAtSlot(block.slot, this.opts.slotsPerEpoch) < this.currentEpoch()) {
      this.updateCheckpoints(block.unrealizedJustifiedCheckpoint, block.unrealizedFinalizedCheckpoint);
    }
  }

  /**
   * Spec update_latest_messages for one validator whose attestation the caller has validated.
   * `slot` is the attestation's slot; without it the earliest slot of `targetEpoch` is assumed.
   * An attestation only counts from the slot after its own (so future-epoch targets wait too).
   */
  onAttestation(validatorIndex: number, blockRoot: string, targetEpoch: number, slot?: number): void {
    const nodeIndex = this.protoArray.indexOf(blockRoot);
    if (this.equivocatingIndices.has(validatorIndex) || nodeIndex === undefined) return;
    const releaseSlot = (slot ?? computeStartSlotAtEpoch(targetEpoch, this.opts.slotsPerEpoch)) + 1;
    if (this.currentSlot >= releaseSlot) this.applyVote(validatorIndex, nodeIndex, targetEpoch);
    else this.queuedVotes.add(releaseSlot, validatorIndex, nodeIndex, targetEpoch);
  }

  /** Spec on_attester_slashing with the already-intersected attesting indices. */
  onAttesterSlashing(indices: number[]): void {
    for (const index of indices) this.equivocatingIndices.add(index);
  }

  /** Applies vote, balance, equivocation and proposer boost changes, then finds the head (spec get_head). */
  updateHead(): ProtoBlock {
    const justifiedChanged = !sameCheckpoint(this.balancesCheckpoint, this.justified);
    const newBalances = justifiedChanged ? this.getJustifiedBalances(this.justified) : this.balances;
    const deltas = computeDeltas(this.protoArray.length, this.votes, this.balances, newBalances, this.equivocatingIndices);

    if (this.appliedBoost !== null) {
      const index = this.protoArray.indexOf(this.appliedBoost.root);
      if (index !== undefined) deltas[index] -= this.appliedBoost.score;
      this.appliedBoost = null;
    }
    const boostIndex = this.proposerBoostRoot === null ? undefined : this.protoArray.indexOf(this.proposerBoostRoot);
    if (this.proposerBoostRoot !== null && boostIndex !== undefined) {
      const score = this.proposerScore(newBalances);
      deltas[boostIndex] += score;
      this.appliedBoost = {root: this.proposerBoostRoot, score};
    }

    this.protoArray.applyScoreChanges(deltas, {
      currentEpoch: this.currentEpoch(),
      justifiedEpoch: this.justified.epoch,
      finalized: this.finalized,
    });
    this.balances = newBalances;
    this.balancesCheckpoint = {...this.justified};
    this.head = this.protoArray.findHead(this.justified.root);
    return this.head;
  }

  /** The head found by the last updateHead (the anchor before the first). */
  getHead(): ProtoBlock {
    return this.head;
  }

  getJustifiedCheckpoint(): CheckpointHex {
    return {...this.justified};
  }

  getFinalizedCheckpoint(): CheckpointHex {
    return {...this.finalized};
  }

  hasBlock(root: string): boolean {
    return this.protoArray.indexOf(root) !== undefined;
  }

  getBlock(root: string): ProtoBlock | null {
    return this.protoArray.getBlock(root);
  }

  /** Root of the block at or before `slot` on the chain of `root`; null if unknown or older than the oldest kept block. */
  getAncestor(root: string, slot: number): string | null {
    return this.protoArray.getAncestor(root, slot);
  }

  /** Whether `descendantRoot` is `ancestorRoot` or built on it. */
  isDescendant(ancestorRoot: string, descendantRoot: string): boolean {
    const ancestor = this.protoArray.getBlock(ancestorRoot);
    return ancestor !== null && this.protoArray.getAncestor(descendantRoot, ancestor.slot) === ancestorRoot;
  }

  /** `root` itself, then its parent, ... down to the oldest kept block; nothing if `root` is unknown. */
  iterateAncestors(root: string): IterableIterator<ProtoBlock> {
    return this.protoArray.iterateAncestors(root);
  }

  /** valid, optimistic (imported before the engine could judge its payload) or invalid; null when unknown */
  getValidity(root: string): ExecutionValidity | null {
    return this.protoArray.validityOf(root);
  }

  /** The engine judged the payload of `root` VALID (newPayload or forkchoiceUpdated): its ancestors' are too. Returns the blocks validated now. */
  onPayloadValid(root: string): ProtoBlock[] {
    return this.protoArray.markValid(root);
  }

  /**
   * The engine judged the payload of `root` INVALID (optimistic sync): `root`, its ancestors newer
   * than the block of `latestValidHash` and all their descendants leave the head's candidates.
   * The caller runs updateHead afterwards. Returns the blocks invalidated now.
   */
  onPayloadInvalid(root: string, latestValidHash: string | null): ProtoBlock[] {
    const invalidated = this.protoArray.markInvalid(root, latestValidHash);
    if (invalidated.length > 0) this.log.warn({root, latestValidHash, invalidated: invalidated.length}, "Invalidated blocks whose execution payload is invalid");
    return invalidated;
  }

  /** Blocks without children, viable or not. */
  getHeads(): ProtoBlock[] {
    return this.protoArray.leaves();
  }

  getAllNodes(): ProtoNodeView[] {
    return this.protoArray.nodeViews();
  }

  /** Drops every block that is not the finalized block or its descendant; returns them. */
  prune(): ProtoBlock[] {
    const {removed, newIndexOf} = this.protoArray.prune(this.finalized.root);
    if (removed.length === 0) return removed;
    // weight on a removed node left with it
    this.votes.remap(newIndexOf);
    this.queuedVotes.remap(newIndexOf);
    this.log.debug({removed: removed.length, finalizedRoot: this.finalized.root}, "Pruned fork choice");
    return removed;
  }

  private currentEpoch(): number {
    return computeEpochAtSlot(this.currentSlot, this.opts.slotsPerEpoch);
  }

  /** Spec get_proposer_score: a share of one slot's committee weight under the justified balances. */
  private proposerScore(balances: readonly number[]): number {
    let total = 0;
    for (const balance of balances) total += balance;
    const committeeWeight = Math.floor(total / this.opts.slotsPerEpoch);
    return Math.floor((committeeWeight * this.opts.proposerScoreBoostPercent) / 100);
  }

  /**
   * Spec latest-message rule: a validator's vote moves only to a later target epoch. A queued
   * vote whose block was pruned meanwhile (its node index NO_NODE) still replaces the older
   * message, but weighs nothing.
   */
  private applyVote(validatorIndex: number, nodeIndex: number, targetEpoch: number): void {
    if (this.equivocatingIndices.has(validatorIndex)) return;
    this.votes.set(validatorIndex, nodeIndex, targetEpoch);
  }

  /** Spec update_checkpoints. */
  private updateCheckpoints(justified: CheckpointHex, finalized: CheckpointHex): void {
    if (justified.epoch > this.justified.epoch) {
      this.justified = {...justified};
      this.log.debug({epoch: justified.epoch, root: justified.root}, "Justified checkpoint updated");
    }
    if (finalized.epoch > this.finalized.epoch) {
      this.finalized = {...finalized};
      this.log.debug({epoch: finalized.epoch, root: finalized.root}, "Finalized checkpoint updated");
    }
  }

  /** Spec update_unrealized_checkpoints. */
  private updateUnrealizedCheckpoints(justified: CheckpointHex, finalized: CheckpointHex): void {
    if (justified.epoch > this.unrealizedJustified.epoch) this.unrealizedJustified = {...justified};
    if (finalized.epoch > this.unrealizedFinalized.epoch) this.unrealizedFinalized = {...finalized};
  }
}

function sameCheckpoint(a: CheckpointHex, b: CheckpointHex): boolean {
  return a.epoch === b.epoch && a.root === b.root;
}

function copyBlock(block: ProtoBlock): ProtoBlock {
  return {
    ...block,
    justifiedCheckpoint: {...block.justifiedCheckpoint},
    finalizedCheckpoint: {...block.finalizedCheckpoint},
    unrealizedJustifiedCheckpoint: {...block.unrealizedJustifiedCheckpoint},
    unrealizedFinalizedCheckpoint: {...block.unrealizedFinalizedCheckpoint},
  };
}
