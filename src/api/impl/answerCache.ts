import type {BeaconStateAllForks} from "@lodestar/state-transition";
import type {Root} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import {latestBlockRoot} from "../../duties/index.ts";
import {keptHex, markShared} from "../jsonText.ts";
import {then, type MaybePromise} from "../../maybePromise.ts";

/**
 * Answers that only change with the head, a slot or an epoch, computed once and served until the
 * chain moves. Every key names what its answer depends on (the head block root, a slot, an epoch
 * and its dependent root), so a stale entry can never match; the chain's events (a new head, a
 * reorg, a new finalized checkpoint) drop the lot, which keeps the cache to the answers of one head.
 * Flags a request reads at its own time (execution_optimistic, finalized, syncing) are never kept.
 */
export class AnswerCache {
  /** answers of the current head: dropped on a new head or a reorg */
  private readonly ofHead = new Map<string, unknown>();
  /** answers keyed by a dependent root (duties), which stay right across heads: dropped on finalization */
  private readonly ofDependentRoot = new Map<string, unknown>();
  private readonly maxEntries: number;
  /** duties of a few epochs and roots; each entry can be large (a duty per validator asked about) */
  private readonly maxDependentRootEntries: number;

  constructor(chain: Pick<IBeaconChain, "emitter">, maxEntries = 4096, maxDependentRootEntries = 64) {
    this.maxEntries = maxEntries;
    this.maxDependentRootEntries = maxDependentRootEntries;
    const dropHead = (): void => this.ofHead.clear();
    chain.emitter.on("head", dropHead);
    chain.emitter.on("chain_reorg", dropHead);
    chain.emitter.on("finalized_checkpoint", () => {
      this.ofHead.clear();
      this.ofDependentRoot.clear();
    });
  }

  get size(): number {
    return this.ofHead.size + this.ofDependentRoot.size;
  }

  /** The answer kept under `key` (which names the head block root it depends on), or what `compute` gives. */
  ofHeadGet<T>(key: string, compute: () => MaybePromise<T>): MaybePromise<T> {
    return this.lookup(this.ofHead, this.maxEntries, key, compute);
  }

  /** The same for a key that names the dependent root of its answer (kept across heads). */
  ofDependentRootGet<T>(key: string, compute: () => MaybePromise<T>): MaybePromise<T> {
    return this.lookup(this.ofDependentRoot, this.maxDependentRootEntries, key, compute);
  }

  /** A kept answer is returned as it is, not as a promise (see maybePromise.ts). */
  private lookup<T>(entries: Map<string, unknown>, maxEntries: number, key: string, compute: () => MaybePromise<T>): MaybePromise<T> {
    const kept = entries.get(key);
    if (kept !== undefined || entries.has(key)) return kept as T;
    // kept only when it succeeds: an error is computed again next time
    return then(compute(), (value) => {
      // a flood of distinct keys (slots, validator lists) cannot grow it without bound
      if (entries.size >= maxEntries) entries.clear();
      // shared by the requests that follow, so its JSON text is made once (and it must never change)
      entries.set(key, markShared(value));
      return value;
    });
  }
}

const caches = new WeakMap<Pick<IBeaconChain, "emitter">, AnswerCache>();

/** The one answer cache of a chain (made, and subscribed to its events, on first use). */
export function answerCacheOf(chain: Pick<IBeaconChain, "emitter">): AnswerCache {
  let cache = caches.get(chain);
  if (!cache) {
    cache = new AnswerCache(chain);
    caches.set(chain, cache);
  }
  return cache;
}

/**
 * The key of the duties of `kind` for `epoch` and its dependent root. The same string while they stay
 * the same, not a new one each request: a string keeps its hash once computed, so the lookup does
 * not hash 80 characters again.
 */
export function dutiesKey(kind: "attester_duties" | "proposer_duties", epoch: number, dependentRoot: Root): string {
  const last = lastDutiesKeys.get(kind);
  if (last && last.epoch === epoch && last.dependentRoot === dependentRoot) return last.key;
  const key = `${kind}:${epoch}:${keptHex(dependentRoot)}`;
  lastDutiesKeys.set(kind, {epoch, dependentRoot, key});
  return key;
}
const lastDutiesKeys = new Map<string, {epoch: number; dependentRoot: Root; key: string}>();

/** The head block's root as a key part. */
export function headKey(chain: IBeaconChain): string {
  return keptHex(chain.getHead().blockRoot);
}

const latestBlockRoots = new WeakMap<BeaconStateAllForks, Root>();

/**
 * latestBlockRoot of a state, once per state object: the chain's states are never mutated (they are
 * cloned first), and for a post-block state it hashes the whole state.
 */
export function cachedLatestBlockRoot(state: BeaconStateAllForks): Root {
  let root = latestBlockRoots.get(state);
  if (!root) {
    root = latestBlockRoot(state);
    latestBlockRoots.set(state, root);
  }
  return root;
}
