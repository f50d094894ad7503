import {computeEpochAtSlot} from "@lodestar/state-transition";
import {fromHex, toRootHex} from "@lodestar/utils";
import type {EventEmitter} from "node:events";
import type {CheckpointHex, ForkChoice} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";
import type {OperationPools} from "../pools/index.ts";
import type {Archiver} from "./archiver.ts";
import type {SidecarRetention} from "./blobs/retention.ts";
import type {ChainEvents} from "./interface.ts";
import type {LightClientServer} from "./lightClient/server.ts";
import type {StateRegenerator} from "./regen.ts";
import {type StateCache, blockRootOfStateKey} from "./stateCache.ts";

const log = getLogger("chain");

export interface FinalizationDeps {
  forkChoice: ForkChoice;
  regen: StateRegenerator;
  stateCache: StateCache;
  pools: OperationPools;
  archiver: Archiver;
  sidecarRetention: SidecarRetention | null;
  lightClient: LightClientServer;
  emitter: EventEmitter<ChainEvents>;
  currentSlot(): number;
}

/**
 * A newly finalized checkpoint: fork choice drops what is not its descendant, the state cache
 * and the pools follow, the canonical chain up to it is archived (and abandoned branches
 * deleted), old sidecars are pruned, and `finalized_checkpoint` is emitted. Returns the slot of
 * the finalized block, the chain's new anchor.
 */
export async function finalizeCheckpoint(deps: FinalizationDeps, checkpoint: CheckpointHex, anchorSlot: number): Promise<number> {
  const {forkChoice, regen, stateCache, pools, archiver, sidecarRetention, lightClient, emitter} = deps;
  const finalizedState = await regen.getPostState(checkpoint.root);
  const canonical = [...forkChoice.iterateAncestors(checkpoint.root)].map((n) => ({slot: n.slot, root: fromHex(n.blockRoot)}));
  const removed = forkChoice.prune();
  const removedRoots = new Set(removed.map((n) => n.blockRoot));
  const abandoned = removed.filter((n) => !canonical.some((c) => toRootHex(c.root) === n.blockRoot)).map((n) => fromHex(n.blockRoot));
  const newAnchorSlot = forkChoice.getBlock(checkpoint.root)?.slot ?? anchorSlot;
  stateCache.retain((key) => !removedRoots.has(blockRootOfStateKey(key)));
  if (finalizedState) {
    pools.opPool.pruneFinalized(finalizedState);
    await archiver.onFinalized(checkpoint, finalizedState, canonical, removed, abandoned, forkChoice.getJustifiedCheckpoint());
    void sidecarRetention?.prune(computeEpochAtSlot(deps.currentSlot()), finalizedState.slot);
  }
  lightClient.onFinalized(fromHex(checkpoint.root));
  emitter.emit("finalized_checkpoint", {block: fromHex(checkpoint.root), state: finalizedState ? finalizedState.hashTreeRoot() : new Uint8Array(32), epoch: checkpoint.epoch});
  log.info({epoch: checkpoint.epoch, root: checkpoint.root}, "finalized");
  return newAnchorSlot;
}
