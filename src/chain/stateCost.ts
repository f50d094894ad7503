import {BranchNode, LeafNode, type Node, zeroNode} from "@chainsafe/persistent-merkle-tree";
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";

/**
 * What a cached state costs in memory, in bytes. States are persistent merkle trees: a state made
 * from another by a block or an epoch transition shares every subtree the transition left alone,
 * so a state's cost is the nodes it does not share with the state it was made from (its base).
 * Node sizes were measured on Node 24 (x64, heap objects plus their fields); the epoch context
 * figures follow what lodestar's EpochCache allocates anew at each epoch.
 */
export const NODE_BYTES = {
  branch: 106,
  leaf: 90,
  /** a validator: a BranchNodeStruct holding its value object (pubkey and credentials arrays included) */
  struct: 785,
} as const;

/** The state object, its ~30 field views and the epoch context object, whatever the validator count. */
export const STATE_OBJECT_BYTES = 6 * 1024;
/** A new epoch's context objects whatever the validator count: committee views, proposers, sync committee caches. */
export const EPOCH_CACHE_OBJECT_BYTES = 8 * 1024;
/** Per validator: the node arrays the validators and balances views keep once read (8 + 2 bytes). */
export const VIEW_CACHE_BYTES_PER_VALIDATOR = 10;
/**
 * Per validator, what a new epoch allocates in the epoch context: the next shuffling (active
 * indices and the shuffled list, 4 + 4 bytes), the next active indices (4), a copy of the
 * effective balance increments (2, with spare capacity) and what the transition leaves behind;
 * measured with test/unit/chain/stateMemory.ts.
 */
export const EPOCH_CACHE_BYTES_PER_VALIDATOR = 30;
/** A state with no base holds three shufflings and its own effective balance increments. */
export const FULL_EPOCH_CACHE_BYTES_PER_VALIDATOR = 3 * 8 + 4 + 2;

const ZERO_NODES = new Set<Node>(Array.from({length: 65}, (_, depth) => zeroNode(depth)));

function nodeBytes(node: Node): number {
  if (ZERO_NODES.has(node)) return 0;
  if (node instanceof BranchNode) return NODE_BYTES.branch;
  if (node instanceof LeafNode) return NODE_BYTES.leaf;
  return NODE_BYTES.struct;
}

/** Every node of a tree, in bytes (zero subtrees are shared by every tree, so they count nothing). */
export function treeBytes(root: Node): number {
  if (ZERO_NODES.has(root)) return 0;
  if (root instanceof BranchNode) return NODE_BYTES.branch + treeBytes(root.left) + treeBytes(root.right);
  return nodeBytes(root);
}

export interface TreeDiff {
  /** bytes of the nodes `after` holds and `before` does not */
  added: number;
  /** bytes of the nodes `before` holds and `after` does not */
  removed: number;
}

/**
 * The nodes two trees do not share, walking both in step and stopping wherever they hold the same
 * node: the work is in proportion to what differs, not to the size of the trees.
 */
export function treeDiff(before: Node, after: Node): TreeDiff {
  const diff = {added: 0, removed: 0};
  walkDiff(before, after, diff);
  return diff;
}

function walkDiff(before: Node, after: Node, diff: TreeDiff): void {
  if (before === after) return;
  if (before instanceof BranchNode && after instanceof BranchNode) {
    if (!ZERO_NODES.has(after)) diff.added += NODE_BYTES.branch;
    if (!ZERO_NODES.has(before)) diff.removed += NODE_BYTES.branch;
    walkDiff(before.left, after.left, diff);
    walkDiff(before.right, after.right, diff);
    return;
  }
  diff.added += treeBytes(after);
  diff.removed += treeBytes(before);
}

function validatorCount(state: CachedBeaconStateAllForks): number {
  return state.validators.length;
}

/** What a state costs on its own: its whole tree, a full epoch context and its views. */
export function fullStateBytes(state: CachedBeaconStateAllForks): number {
  const validators = validatorCount(state);
  return treeBytes(state.node) + STATE_OBJECT_BYTES + 3 * EPOCH_CACHE_OBJECT_BYTES + validators * (FULL_EPOCH_CACHE_BYTES_PER_VALIDATOR + VIEW_CACHE_BYTES_PER_VALIDATOR);
}

export interface StateDelta {
  /** what `state` costs beside `base`: the nodes only it holds, its views and a new epoch's caches */
  bytes: number;
  /** `state`'s full cost, from `base`'s full cost and the nodes each holds that the other does not */
  fullBytes: number;
}

/** What `state`, made from `base` (whose full cost is `baseFullBytes`), adds while both are kept. */
export function stateDelta(base: CachedBeaconStateAllForks, baseFullBytes: number, state: CachedBeaconStateAllForks): StateDelta {
  const {added, removed} = treeDiff(base.node, state.node);
  const validators = validatorCount(state);
  const epochCache = state.epochCtx.epoch !== base.epochCtx.epoch ? EPOCH_CACHE_OBJECT_BYTES + validators * EPOCH_CACHE_BYTES_PER_VALIDATOR : 0;
  const grownRegistry = (validators - validatorCount(base)) * (FULL_EPOCH_CACHE_BYTES_PER_VALIDATOR + VIEW_CACHE_BYTES_PER_VALIDATOR);
  return {
    bytes: added + STATE_OBJECT_BYTES + validators * VIEW_CACHE_BYTES_PER_VALIDATOR + epochCache,
    fullBytes: baseFullBytes + added - removed + grownRegistry,
  };
}
