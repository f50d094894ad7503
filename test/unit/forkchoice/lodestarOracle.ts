import {SLOTS_PER_EPOCH as PRESET_SLOTS_PER_EPOCH} from "@lodestar/params";
import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";
// @lodestar/fork-choice 1.5.1 (the registry's newest) exports only its index, whose ForkChoice class
// needs @lodestar/params 1.5.1 (SAFE_SLOTS_TO_UPDATE_JUSTIFIED, gone from the 1.46 we run). Its
// proto-array layer needs nothing of the kind, so it is loaded file by file.
import {computeDeltas} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/computeDeltas.js";
import {ExecutionStatus, HEX_ZERO_HASH, type VoteTracker} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/interface.js";
import type {ProtoBlock as LodestarBlock, ProtoNode} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/interface.js";
import {ProtoArray} from "../../../node_modules/lodestar-fork-choice/lib/protoArray/protoArray.js";
import {SpecStore} from "./specStore.ts";

export type Validity = "valid" | "optimistic" | "invalid";

const VALIDITY: Record<string, Validity> = {
  [ExecutionStatus.Valid]: "valid",
  [ExecutionStatus.Syncing]: "optimistic",
  [ExecutionStatus.Invalid]: "invalid",
};

function toLodestar(block: ProtoBlock, optimistic: boolean): LodestarBlock {
  return {
    slot: block.slot,
    blockRoot: block.blockRoot,
    parentRoot: block.parentRoot,
    stateRoot: block.stateRoot,
    targetRoot: block.targetRoot,
    justifiedEpoch: block.justifiedCheckpoint.epoch,
    justifiedRoot: block.justifiedCheckpoint.root,
    finalizedEpoch: block.finalizedCheckpoint.epoch,
    finalizedRoot: block.finalizedCheckpoint.root,
    unrealizedJustifiedEpoch: block.unrealizedJustifiedCheckpoint.epoch,
    unrealizedJustifiedRoot: block.unrealizedJustifiedCheckpoint.root,
    unrealizedFinalizedEpoch: block.unrealizedFinalizedCheckpoint.epoch,
    unrealizedFinalizedRoot: block.unrealizedFinalizedCheckpoint.root,
    executionPayloadBlockHash: block.executionBlockHash as string,
    executionStatus: optimistic ? ExecutionStatus.Syncing : ExecutionStatus.Valid,
  };
}

/**
 * The independent side of the differential test: Lodestar 1.5.1's ProtoArray and computeDeltas
 * (head, weights, viability, execution status), fed with the Store the spec transcription keeps
 * (checkpoints, latest messages, equivocations, proposer boost), the way Lodestar's own
 * ForkChoice class feeds them.
 */
export class LodestarOracle {
  readonly store: SpecStore;
  readonly protoArray: ProtoArray;
  private readonly votes: VoteTracker[] = [];
  /** effective balance increments, as Lodestar keeps them */
  private balances: Uint16Array;
  private justifiedBalances: Uint16Array;
  private balancesKey = "";
  private readonly balancesOf: (checkpoint: CheckpointHex) => number[];
  head: string;

  constructor(anchor: ProtoBlock, currentSlot: number, slotsPerEpoch: number, boostPercent: number, balancesOf: (c: CheckpointHex) => number[]) {
    // Lodestar's proto-array reads epochs through @lodestar/params' preset (LODESTAR_PRESET=minimal)
    if (slotsPerEpoch !== PRESET_SLOTS_PER_EPOCH) throw new Error(`Lodestar's preset has ${PRESET_SLOTS_PER_EPOCH} slots per epoch, the test ${slotsPerEpoch}`);
    this.store = new SpecStore(anchor, currentSlot, slotsPerEpoch, boostPercent, balancesOf);
    this.protoArray = ProtoArray.initialize(toLodestar(anchor, false), currentSlot);
    this.balancesOf = balancesOf;
    this.balances = Uint16Array.from(balancesOf(anchor.justifiedCheckpoint));
    this.justifiedBalances = this.balances;
    this.head = anchor.blockRoot;
  }

  onBlock(block: ProtoBlock, isTimely: boolean, optimistic: boolean): boolean {
    if (!this.store.onBlock(block, isTimely)) return false;
    this.protoArray.onBlock(toLodestar(block, optimistic), this.store.currentSlot);
    return true;
  }

  /** the engine's VALID for the block's payload */
  onPayloadValid(root: string): void {
    const hash = this.protoArray.getNode(root)?.executionPayloadBlockHash;
    if (hash) this.protoArray.validateLatestHash({executionStatus: ExecutionStatus.Valid, latestValidExecHash: hash}, this.store.currentSlot);
  }

  /** the engine's INVALID for the block's payload (Lodestar looks the block up by its root) */
  onPayloadInvalid(root: string, latestValidHash: string | null): void {
    this.protoArray.validateLatestHash(
      {executionStatus: ExecutionStatus.Invalid, invalidateFromBlockHash: root, latestValidExecHash: latestValidHash},
      this.store.currentSlot
    );
  }

  prune(): void {
    this.protoArray.maybePrune(this.store.finalized.root);
  }

  /** Lodestar ForkChoice.updateHead: latest messages become votes, deltas, score changes, findHead. */
  updateHead(): string {
    const {store} = this;
    for (const [validator, message] of store.latestMessages) {
      const vote = this.votes[validator];
      if (vote === undefined) this.votes[validator] = {currentRoot: HEX_ZERO_HASH, nextRoot: message.root, nextEpoch: message.epoch};
      else if (message.epoch > vote.nextEpoch || message.root !== vote.nextRoot) Object.assign(vote, {nextRoot: message.root, nextEpoch: message.epoch});
    }
    // Lodestar's store keeps the justified checkpoint's balances until that checkpoint changes
    const justifiedKey = `${store.justified.epoch}/${store.justified.root}`;
    if (justifiedKey !== this.balancesKey) this.justifiedBalances = Uint16Array.from(this.balancesOf(store.justified));
    this.balancesKey = justifiedKey;
    const newBalances = this.justifiedBalances;
    const deltas = computeDeltas(this.protoArray.indices, this.votes, this.balances, newBalances, store.equivocating);
    this.balances = newBalances;
    const boostRoot = store.proposerBoostRoot;
    this.protoArray.applyScoreChanges({
      deltas,
      proposerBoost: boostRoot !== null && this.protoArray.hasBlock(boostRoot) ? {root: boostRoot, score: store.proposerScore()} : null,
      justifiedEpoch: store.justified.epoch,
      justifiedRoot: store.justified.root,
      finalizedEpoch: store.finalized.epoch,
      finalizedRoot: store.finalized.root,
      currentSlot: store.currentSlot,
    });
    this.head = this.protoArray.findHead(store.justified.root, store.currentSlot);
    return this.head;
  }

  node(root: string): ProtoNode | undefined {
    return this.protoArray.getNode(root);
  }

  validity(root: string): Validity | null {
    const node = this.protoArray.getNode(root);
    return node ? VALIDITY[node.executionStatus] : null;
  }

  /**
   * Whether Lodestar's head filter (nodeIsViableForHead: the node's own checkpoints equal to the
   * store's, epoch and root) and the spec's (filter_block_tree's leaf test, v1.6.1) agree on every
   * leaf (a block whose children are all invalid is one): where they do, the two must pick the
   * same head, but for Lodestar's departures that `Sides.explainHead` names.
   */
  filtersAgree(protoArray: ProtoArray = this.protoArray): boolean {
    const {store} = this;
    const live = protoArray.nodes.filter((n) => n.executionStatus !== ExecutionStatus.Invalid);
    const parents = new Set(live.map((n) => n.parentRoot));
    for (const node of live) {
      const block = store.blocks.get(node.blockRoot);
      if (parents.has(node.blockRoot) || block === undefined) continue;
      if (protoArray.nodeIsViableForHead(node, store.currentSlot) !== store.isViableLeaf(block)) return false;
    }
    return true;
  }
}
