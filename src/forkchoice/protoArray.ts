import {
  ForkChoiceError,
  computeEpochAtSlot,
  computeStartSlotAtEpoch,
  type CheckpointHex,
  type ExecutionValidity,
  type ProtoBlock,
  type ProtoNodeView,
} from "./types.ts";

interface ProtoNode {
  block: ProtoBlock;
  /** index of the parent; undefined for the oldest block kept (the anchor, later the finalized block) */
  parent: number | undefined;
  /** votes (and proposer boost) for this block and all its descendants */
  weight: number;
  /** the child the head walk goes to; undefined when no child leads to a viable head */
  bestChild: number | undefined;
  /** the leaf the head walk ends at when it passes through this node */
  bestDescendant: number | undefined;
  validity: ExecutionValidity;
}

/** What spec `filter_block_tree` compares a leaf against. */
export interface ViabilityContext {
  currentEpoch: number;
  justifiedEpoch: number;
  finalized: CheckpointHex;
}

/**
 * The block tree as an array in insertion order, so a parent always comes before its children.
 * That lets one backward pass push weight changes up to ancestors and pick every node's best
 * child, making head selection O(nodes) instead of the spec's O(nodes × votes).
 */
export class ProtoArray {
  private nodes: ProtoNode[] = [];
  private indices = new Map<string, number>();
  private readonly slotsPerEpoch: number;

  constructor(slotsPerEpoch: number) {
    this.slotsPerEpoch = slotsPerEpoch;
  }

  get length(): number {
    return this.nodes.length;
  }

  /** The caller has checked the parent is known, except for the very first (anchor) block. */
  add(block: ProtoBlock, validity: ExecutionValidity): number {
    const index = this.nodes.length;
    this.nodes.push({
      block,
      parent: this.indices.get(block.parentRoot),
      weight: 0,
      bestChild: undefined,
      bestDescendant: undefined,
      validity,
    });
    this.indices.set(block.blockRoot, index);
    return index;
  }

  indexOf(root: string): number | undefined {
    return this.indices.get(root);
  }

  getBlock(root: string): ProtoBlock | null {
    const index = this.indices.get(root);
    return index === undefined ? null : this.nodes[index].block;
  }

  /**
   * Adds `deltas[i]` to node i and all its ancestors (an invalid node's weight goes to 0 instead),
   * then re-picks every node's best child. `deltas` is consumed (overwritten with the subtree sums).
   */
  applyScoreChanges(deltas: number[], ctx: ViabilityContext): void {
    const nodes = this.nodes;
    if (deltas.length !== nodes.length) {
      throw new ForkChoiceError("INVALID_DELTAS", `${deltas.length} deltas for ${nodes.length} nodes`);
    }
    for (let i = nodes.length - 1; i >= 0; i--) {
      const node = nodes[i];
      // sync/optimistic.md: "the weights from those INVALID blocks MUST NOT be applied to any VALID
      // or NOT_VALIDATED ancestors". An invalid block weighs nothing; what it weighed leaves its
      // ancestors, and votes moving onto or off it change nothing above it.
      const delta = node.validity === "invalid" ? -node.weight : deltas[i];
      node.weight += delta;
      if (node.weight < 0) {
        throw new ForkChoiceError("NEGATIVE_WEIGHT", `node ${node.block.blockRoot} weight ${node.weight}`);
      }
      if (node.parent !== undefined) deltas[node.parent] += delta;
    }
    this.updateBestDescendants(this.computeLeafViability(ctx));
  }

  /**
   * Spec `get_head`: from the justified block follow the best children to a leaf. When no leaf
   * below it is viable the spec's filtered tree is empty and the head is the justified block.
   */
  findHead(justifiedRoot: string): ProtoBlock {
    const justifiedIndex = this.indices.get(justifiedRoot);
    if (justifiedIndex === undefined) {
      throw new ForkChoiceError("JUSTIFIED_NODE_UNKNOWN", `justified root ${justifiedRoot} not in fork choice`);
    }
    const justified = this.nodes[justifiedIndex];
    return this.nodes[justified.bestDescendant ?? justifiedIndex].block;
  }

  /** Spec `get_ancestor`; null when the root is unknown or the ancestor is older than the oldest kept block. */
  getAncestor(root: string, slot: number): string | null {
    let index = this.indices.get(root);
    while (index !== undefined) {
      const node = this.nodes[index];
      if (node.block.slot <= slot) return node.block.blockRoot;
      index = node.parent;
    }
    return null;
  }

  /**
   * Spec `get_checkpoint_block(root, checkpoint.epoch) == checkpoint.root`. Reaching the
   * checkpoint block itself also counts, for an anchor that is later than its epoch's start.
   */
  hasCheckpointBlock(root: string, checkpoint: CheckpointHex): boolean {
    const epochStartSlot = computeStartSlotAtEpoch(checkpoint.epoch, this.slotsPerEpoch);
    let index = this.indices.get(root);
    while (index !== undefined) {
      const node = this.nodes[index];
      if (node.block.blockRoot === checkpoint.root) return true;
      if (node.block.slot <= epochStartSlot) return false;
      index = node.parent;
    }
    return false;
  }

  *iterateAncestors(root: string): IterableIterator<ProtoBlock> {
    let index = this.indices.get(root);
    while (index !== undefined) {
      const node = this.nodes[index];
      yield node.block;
      index = node.parent;
    }
  }

  validityOf(root: string): ExecutionValidity | null {
    const index = this.indices.get(root);
    return index === undefined ? null : this.nodes[index].validity;
  }

  /** The engine found the payload of `root` VALID: so are the payloads of all its ancestors. Returns the blocks validated now. */
  markValid(root: string): ProtoBlock[] {
    const validated: ProtoBlock[] = [];
    let index = this.indices.get(root);
    while (index !== undefined && this.nodes[index].validity === "optimistic") {
      this.nodes[index].validity = "valid";
      validated.push(this.nodes[index].block);
      index = this.nodes[index].parent;
    }
    return validated;
  }

  /**
   * The engine found the payload of `root` INVALID, and says `latestValidHash` is its newest valid
   * ancestor: `root` and its ancestors after that one are invalid, and so is everything built on
   * them. A null or unknown latestValidHash invalidates `root` alone (with its descendants); the
   * zero hash means no post-merge ancestor is valid. Blocks already fully validated are never
   * invalidated (the walk stops there). Returns the newly invalid blocks.
   */
  markInvalid(root: string, latestValidHash: string | null): ProtoBlock[] {
    const start = this.indices.get(root);
    if (start === undefined) return [];
    const chain: number[] = [];
    let foundLatestValid = false;
    for (let index: number | undefined = start; index !== undefined; index = this.nodes[index].parent) {
      const node: ProtoNode = this.nodes[index];
      const hash = node.block.executionBlockHash;
      if (latestValidHash !== null && (hash === latestValidHash || (hash === null && isZeroHash(latestValidHash)))) {
        foundLatestValid = true;
        break;
      }
      if (node.validity === "valid") break;
      chain.push(index);
    }
    const invalidNow = foundLatestValid || (latestValidHash !== null && isZeroHash(latestValidHash)) ? chain : chain.slice(0, 1);
    const wasInvalid = this.nodes.map((node) => node.validity === "invalid");
    for (const index of invalidNow) this.nodes[index].validity = "invalid";
    // parents come before their children: one forward pass carries invalidity down the tree
    for (const node of this.nodes) {
      if (node.parent !== undefined && this.nodes[node.parent].validity === "invalid") node.validity = "invalid";
    }
    return this.nodes.filter((node, i) => !wasInvalid[i] && node.validity === "invalid").map((node) => node.block);
  }

  leaves(): ProtoBlock[] {
    const hasChild = this.childFlags();
    return this.nodes.filter((_, i) => !hasChild[i]).map((node) => node.block);
  }

  nodeViews(): ProtoNodeView[] {
    return this.nodes.map((node) => ({...node.block, weight: node.weight, validity: node.validity}));
  }

  /**
   * Keeps only `finalizedRoot` and its descendants. Returns the removed blocks and, per old
   * index, the node's new index (null when removed) so holders of indices can follow.
   */
  prune(finalizedRoot: string): {removed: ProtoBlock[]; newIndexOf: Array<number | null>} {
    const finalizedIndex = this.indices.get(finalizedRoot);
    if (finalizedIndex === undefined) {
      throw new ForkChoiceError("FINALIZED_NODE_UNKNOWN", `finalized root ${finalizedRoot} not in fork choice`);
    }
    const newIndexOf = new Array<number | null>(this.nodes.length).fill(null);
    const kept: ProtoNode[] = [];
    const removed: ProtoBlock[] = [];
    for (let i = 0; i < this.nodes.length; i++) {
      const node = this.nodes[i];
      const isKept = i === finalizedIndex || (node.parent !== undefined && newIndexOf[node.parent] !== null);
      if (isKept) {
        newIndexOf[i] = kept.length;
        kept.push(node);
      } else {
        removed.push(node.block);
      }
    }
    if (removed.length === 0) return {removed, newIndexOf};

    const remap = (index: number | undefined): number | undefined =>
      index === undefined ? undefined : (newIndexOf[index] ?? undefined);
    this.indices.clear();
    for (const [i, node] of kept.entries()) {
      node.parent = remap(node.parent);
      node.bestChild = remap(node.bestChild);
      node.bestDescendant = remap(node.bestDescendant);
      this.indices.set(node.block.blockRoot, i);
    }
    this.nodes = kept;
    return {removed, newIndexOf};
  }

  /**
   * Spec `filter_block_tree`'s test for a leaf (computed for every node; only leaves' values are
   * used). Forward pass: whether a node's checkpoint block at the finalized epoch is the finalized
   * root follows from its parent's, so the spec's per-leaf `get_checkpoint_block` walk is O(1).
   */
  private computeLeafViability(ctx: ViabilityContext): boolean[] {
    const {currentEpoch, justifiedEpoch, finalized} = ctx;
    const finalizedSlot = computeStartSlotAtEpoch(finalized.epoch, this.slotsPerEpoch);
    const finalizedCheckpointMatches = new Array<boolean>(this.nodes.length);
    const viable = new Array<boolean>(this.nodes.length);
    for (let i = 0; i < this.nodes.length; i++) {
      const {block, parent} = this.nodes[i];
      // get_ancestor(leaf, finalizedSlot) is the leaf itself when at or before that slot, else the parent's answer
      finalizedCheckpointMatches[i] =
        block.blockRoot === finalized.root ||
        (block.slot > finalizedSlot && parent !== undefined && finalizedCheckpointMatches[parent]);
      const correctFinalized = finalized.epoch === 0 || finalizedCheckpointMatches[i];

      // spec get_voting_source: blocks from a prior epoch vote with their pulled-up justification
      const votingSource =
        currentEpoch > computeEpochAtSlot(block.slot, this.slotsPerEpoch)
          ? block.unrealizedJustifiedCheckpoint
          : block.justifiedCheckpoint;
      const correctJustified =
        justifiedEpoch === 0 || votingSource.epoch === justifiedEpoch || votingSource.epoch + 2 >= currentEpoch;

      viable[i] = correctJustified && correctFinalized;
    }
    return viable;
  }

  /**
   * Backward pass re-picking each node's best child from scratch: among the children that lead
   * to a viable leaf, the heaviest, ties to the lexicographically higher root (spec `get_head`).
   * A node with children leads to a viable leaf only through them, as in `filter_block_tree`.
   */
  private updateBestDescendants(leafViable: boolean[]): void {
    const nodes = this.nodes;
    for (const node of nodes) {
      node.bestChild = undefined;
      node.bestDescendant = undefined;
    }
    // invalid blocks are out of the tree the head is chosen in (a parent of only invalid children is a leaf)
    const hasChild = this.childFlags(true);
    for (let i = nodes.length - 1; i >= 0; i--) {
      const node = nodes[i];
      if (node.validity === "invalid") continue;
      const leadsToViableLeaf = hasChild[i] ? node.bestChild !== undefined : leafViable[i];
      if (node.parent === undefined || !leadsToViableLeaf) continue;
      const parent = nodes[node.parent];
      if (parent.bestChild === undefined || isHeavier(node, nodes[parent.bestChild])) {
        parent.bestChild = i;
        parent.bestDescendant = node.bestDescendant ?? i;
      }
    }
  }

  private childFlags(exceptInvalid = false): boolean[] {
    const hasChild = new Array<boolean>(this.nodes.length).fill(false);
    for (const node of this.nodes) {
      if (node.parent !== undefined && !(exceptInvalid && node.validity === "invalid")) hasChild[node.parent] = true;
    }
    return hasChild;
  }
}

function isZeroHash(hex: string): boolean {
  return /^0x0+$/.test(hex);
}

/** Spec tie-break: equal weights go to the lexicographically higher root (same-length lowercase hex). */
function isHeavier(a: ProtoNode, b: ProtoNode): boolean {
  return a.weight > b.weight || (a.weight === b.weight && a.block.blockRoot > b.block.blockRoot);
}
