import {type CachedBeaconStateAllForks, computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {Root, SignedBeaconBlock, phase0} from "@lodestar/types";
import {byteArrayEquals, fromHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import {cachedLatestBlockRoot} from "./answerCache.ts";
import type {BlockId, StateId, ValidatorId} from "../codecs.ts";
import {notFound} from "../errors.ts";
import {lazyList} from "../streaming.ts";
import {StoredBlock} from "../storedBlock.ts";
import type {MaybePromise} from "../../maybePromise.ts";

/**
 * State and block ids to chain data: the one resolver every route with a `state_id` or
 * `block_id` uses. Malformed ids never get here (their codec answers 400); unknown ones are 404.
 */

export interface ResolvedState {
  state: CachedBeaconStateAllForks;
  executionOptimistic: boolean;
  finalized: boolean;
}

export interface ResolvedBlock {
  block: SignedBeaconBlock;
  root: Root;
  canonical: boolean;
  executionOptimistic: boolean;
  finalized: boolean;
}

const isZero = (root: Uint8Array): boolean => root.every((b) => b === 0);

/** Whether a slot of the canonical chain is finalized (at or before the finalized checkpoint's slot). */
export function isFinalizedSlot(chain: IBeaconChain, slot: number): boolean {
  return slot <= computeStartSlotAtEpoch(chain.getFinalizedCheckpoint().epoch);
}

/** The canonical state at a checkpoint: its epoch's first slot, advanced through empty slots where needed. */
function checkpointState(chain: IBeaconChain, checkpoint: phase0.Checkpoint): Promise<CachedBeaconStateAllForks | null> {
  return chain.getStateBySlot(computeStartSlotAtEpoch(checkpoint.epoch));
}

async function findState(chain: IBeaconChain, id: StateId): Promise<{state: CachedBeaconStateAllForks | null; canonical: boolean}> {
  if (typeof id === "number") {
    // a future slot has no state yet (and must not make the node process empty slots on request)
    return {state: id > chain.currentSlot() ? null : await chain.getStateBySlot(id), canonical: true};
  }
  switch (id) {
    case "head":
      return {state: chain.getHeadState(), canonical: true};
    case "genesis":
      return {state: await chain.getStateBySlot(0), canonical: true};
    case "finalized":
      return {state: await checkpointState(chain, chain.getFinalizedCheckpoint()), canonical: true};
    case "justified":
      return {state: await checkpointState(chain, chain.getJustifiedCheckpoint()), canonical: true};
    default: {
      const state = await chain.getStateByStateRoot(fromHex(id));
      return {state, canonical: state !== null && (await onCanonicalChain(chain, cachedLatestBlockRoot(state), state.latestBlockHeader.slot))};
    }
  }
}

export async function resolveState(chain: IBeaconChain, id: StateId): Promise<ResolvedState> {
  const {state, canonical} = await findState(chain, id);
  if (!state) throw notFound("State not found");
  return {state, executionOptimistic: chain.isOptimistic(cachedLatestBlockRoot(state)), finalized: canonical && isFinalizedSlot(chain, state.slot)};
}

async function findBlock(chain: IBeaconChain, id: BlockId): Promise<{block: SignedBeaconBlock | null; root?: Root}> {
  if (typeof id === "number") return {block: await chain.getCanonicalBlockAtSlot(id)};
  switch (id) {
    case "head": {
      const root = chain.getHead().blockRoot;
      return {block: await chain.getBlockByRoot(root), root};
    }
    case "genesis":
      return {block: await chain.getCanonicalBlockAtSlot(0)};
    case "finalized": {
      // before the first finalization the checkpoint root may be zero: the genesis block
      const {root} = chain.getFinalizedCheckpoint();
      return isZero(root) ? {block: await chain.getCanonicalBlockAtSlot(0)} : {block: await chain.getBlockByRoot(root), root};
    }
    default: {
      const root = fromHex(id);
      return {block: await chain.getBlockByRoot(root), root};
    }
  }
}

/** Validator indices named by `ids` (indices or public keys) that exist in the state, each once, in request order. */
export function indicesOf(state: CachedBeaconStateAllForks, ids: ValidatorId[]): number[] {
  const count = state.validators.length;
  const indices = ids.map((id) => (typeof id === "number" ? id : state.epochCtx.getValidatorIndex(id)));
  return [...new Set(indices.filter((i): i is number => i !== null && i !== undefined && i < count))];
}

/** The validators `ids` name (see indicesOf), or, when `ids` is empty, every validator of the state, counted as iterated. */
export function selectedIndices(state: CachedBeaconStateAllForks, ids: ValidatorId[]): Iterable<number> {
  if (ids.length > 0) return indicesOf(state, ids);
  const count = state.validators.length;
  return lazyList(function* () {
    for (let i = 0; i < count; i++) yield i;
  });
}

/** The hash tree root of a signed block's message. */
export function blockRootOf(chain: IBeaconChain, block: SignedBeaconBlock): Root {
  return chain.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
}

/**
 * Whether the block `root` (at `slot`) is on the canonical chain: fork choice's head descends from
 * it, or, finalized and gone from fork choice, it is the canonical chain's block at its slot (a
 * finalized checkpoint of some epochs ago is canonical, not a side branch).
 */
export async function onCanonicalChain(chain: IBeaconChain, root: Root, slot: number): Promise<boolean> {
  if (chain.isCanonical(root)) return true;
  const canonicalRoot = await chain.getCanonicalBlockRootAtSlot(slot);
  return canonicalRoot !== null && byteArrayEquals(canonicalRoot, root);
}

/** The root of the block `id` names (not yet known to exist when `id` is a root), or null. */
async function findBlockRoot(chain: IBeaconChain, id: BlockId): Promise<Root | null> {
  if (typeof id === "number") return chain.getCanonicalBlockRootAtSlot(id);
  switch (id) {
    case "head":
      return chain.getHead().blockRoot;
    case "genesis":
      return chain.getCanonicalBlockRootAtSlot(0);
    case "finalized": {
      const {root} = chain.getFinalizedCheckpoint();
      return isZero(root) ? chain.getCanonicalBlockRootAtSlot(0) : root;
    }
    default:
      return fromHex(id);
  }
}

export interface ResolvedStoredBlock extends Omit<ResolvedBlock, "block"> {
  stored: StoredBlock;
}

/** The block `id` names, as its stored bytes (resolveBlock decodes it). */
export async function resolveStoredBlock(chain: IBeaconChain, id: BlockId): Promise<ResolvedStoredBlock> {
  const root = await findBlockRoot(chain, id);
  const bytes = root && (await chain.getBlockBytesByRoot(root));
  if (!root || !bytes) throw notFound("Block not found");
  const stored = new StoredBlock(bytes, chain.config);
  const canonical = typeof id === "string" && id.startsWith("0x") ? await onCanonicalChain(chain, root, stored.slot) : true;
  return {stored, root, canonical, executionOptimistic: chain.isOptimistic(root), finalized: canonical && isFinalizedSlot(chain, stored.slot)};
}

export async function resolveBlock(chain: IBeaconChain, id: BlockId): Promise<ResolvedBlock> {
  const found = await findBlock(chain, id);
  if (!found.block) throw notFound("Block not found");
  const root = found.root ?? blockRootOf(chain, found.block);
  // ids by name or slot walk the canonical chain; a root may name a block on a side branch
  const canonical = typeof id === "string" && id.startsWith("0x") ? await onCanonicalChain(chain, root, found.block.message.slot) : true;
  return {block: found.block, root, canonical, executionOptimistic: chain.isOptimistic(root), finalized: canonical && isFinalizedSlot(chain, found.block.message.slot)};
}

/**
 * A state whose epoch caches serve duties of `epoch`: the head state when `headServes(headEpoch)`,
 * else the head chain's state at `epoch` (advanced forward from the head, or a past canonical state).
 */
export function stateForEpoch(
  chain: IBeaconChain,
  epoch: number,
  headServes: (headEpoch: number) => boolean,
  /** for an epoch after the head's, the epoch the head state is advanced to (a state of the epoch before serves the next one's committees) */
  advanceTo = epoch
): MaybePromise<CachedBeaconStateAllForks> {
  const head = chain.getHeadState();
  const headEpoch = computeEpochAtSlot(head.slot);
  // the head state at hand, not a promise of it (see maybePromise.ts)
  if (headServes(headEpoch)) return head;
  return otherStateForEpoch(chain, epoch, headEpoch, advanceTo);
}

async function otherStateForEpoch(chain: IBeaconChain, epoch: number, headEpoch: number, advanceTo: number): Promise<CachedBeaconStateAllForks> {
  const state = epoch > headEpoch ? await chain.getHeadStateAtEpoch(advanceTo) : await chain.getStateBySlot(computeStartSlotAtEpoch(epoch));
  if (!state) throw notFound(`No state for epoch ${epoch}`);
  return state;
}
