import {type CachedBeaconStateAllForks, type EpochShuffling, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {ForkChoice} from "../forkchoice/index.ts";
import {getLogger} from "../log.ts";

const log = getLogger("chain");

/** Shufflings kept: a few epochs of a few branches. */
const MAX_SHUFFLINGS = 16;

/** 0x hex block root and epoch of an attestation's target (attestation.data.target). */
export interface TargetHex {
  epoch: number;
  root: string;
}

/** The target block is not known to fork choice: its committees cannot be known (yet). */
export class UnknownTargetError extends Error {
  readonly rootHex: string;
  constructor(rootHex: string) {
    super(`unknown target root ${rootHex}`);
    this.name = "UnknownTargetError";
    this.rootHex = rootHex;
  }
}

/**
 * Attester shufflings by (epoch, decision root). The shuffling of epoch E is fixed by the chain
 * up to the last slot of epoch E - 2 (the RANDAO mix of get_seed with MIN_SEED_LOOKAHEAD = 1,
 * and the active set, set MAX_SEED_LOOKAHEAD epochs ahead), so every state whose chain has the
 * same block at that slot (its decision root) has the same committees in epoch E. A lookup that
 * misses computes once, however many ask meanwhile; the oldest entries leave first.
 */
export class ShufflingCache {
  private readonly entries = new Map<string, Promise<EpochShuffling>>();
  private readonly maxEntries: number;

  constructor(maxEntries = MAX_SHUFFLINGS) {
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  getOrCompute(epoch: number, decisionRoot: string, compute: () => Promise<EpochShuffling>): Promise<EpochShuffling> {
    const key = `${epoch}:${decisionRoot}`;
    const known = this.entries.get(key);
    if (known) return known;
    const computing = compute();
    this.entries.set(key, computing);
    // a failed computation is not kept: the next lookup tries again
    computing.catch(() => this.entries.get(key) === computing && this.entries.delete(key));
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return computing;
  }
}

/** The slot whose block decides epoch `epoch`'s attester shuffling: the last slot of epoch - 2 (genesis for epochs 0 and 1). */
export function shufflingDecisionSlot(epoch: number): number {
  return Math.max(0, computeStartSlotAtEpoch(epoch - 1) - 1);
}

export interface TargetShufflingsDeps {
  forkChoice: () => Pick<ForkChoice, "hasBlock" | "getAncestor">;
  headRoot: () => string;
  /** the head state advanced to the start of `epoch` when it is behind (no replay) */
  getHeadStateAtEpoch: (epoch: number) => Promise<CachedBeaconStateAllForks>;
  /** the post-state of a block advanced to `slot` (replayed from a cached ancestor when needed), or null */
  getStateAtSlot: (blockRootHex: string, slot: number) => Promise<CachedBeaconStateAllForks | null>;
}

/**
 * The committees of an attestation, as the spec takes them: from the state of its target
 * checkpoint (fork-choice.md store_target_checkpoint_state: the target block's state advanced to
 * the target epoch's start). A target on the head's chain (the same decision root) reads the
 * head state's shuffling; a target on another branch regenerates that checkpoint state once per
 * (epoch, decision root).
 */
export class TargetShufflings {
  private readonly deps: TargetShufflingsDeps;
  private readonly cache = new ShufflingCache();
  /** the head chain's decision root of the epoch last asked for (the lookup walks fork choice) */
  private headDecision = {headRoot: "", epoch: -1, root: null as string | null};

  constructor(deps: TargetShufflingsDeps) {
    this.deps = deps;
  }

  /** The attester shuffling of `target.epoch` on the chain of `target.root`; throws UnknownTargetError for a root fork choice does not hold. */
  async get(target: TargetHex): Promise<EpochShuffling> {
    const forkChoice = this.deps.forkChoice();
    if (!forkChoice.hasBlock(target.root)) throw new UnknownTargetError(target.root);
    const decisionSlot = shufflingDecisionSlot(target.epoch);
    const decisionRoot = forkChoice.getAncestor(target.root, decisionSlot);
    const headRoot = this.deps.headRoot();
    // decided before fork choice's oldest block: every chain it holds shares that history
    const onHeadChain = decisionRoot === null || this.headDecisionRoot(forkChoice, headRoot, target.epoch) === decisionRoot;
    if (onHeadChain) {
      const state = await this.deps.getHeadStateAtEpoch(target.epoch);
      const shuffling = state.epochCtx.getShufflingAtEpochOrNull(target.epoch);
      if (shuffling) return shuffling;
      // a head state epochs ahead of the target no longer holds its shuffling: regenerated below
    }
    return this.cache.getOrCompute(target.epoch, decisionRoot ?? `head:${headRoot}`, async () => {
      const slot = computeStartSlotAtEpoch(target.epoch);
      log.debug({epoch: target.epoch, target: target.root, decisionRoot}, "regenerating a target checkpoint state for its committees");
      const state = await this.deps.getStateAtSlot(target.root, slot);
      if (!state) throw new UnknownTargetError(target.root);
      return state.epochCtx.getShufflingAtEpoch(target.epoch);
    });
  }

  private headDecisionRoot(forkChoice: Pick<ForkChoice, "getAncestor">, headRoot: string, epoch: number): string | null {
    const memo = this.headDecision;
    if (memo.headRoot !== headRoot || memo.epoch !== epoch) {
      this.headDecision = {headRoot, epoch, root: forkChoice.getAncestor(headRoot, shufflingDecisionSlot(epoch))};
    }
    return this.headDecision.root;
  }
}
