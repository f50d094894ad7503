import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeStartSlotAtEpoch} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {EventEmitter} from "node:events";
import {BlockError, type IBeaconChain} from "../chain/interface.ts";
import {getLogger} from "../log.ts";
import type {PeerAction} from "../network/peers/peerScore.ts";
import type {Status} from "../network/status.ts";

const log = getLogger("sync");

/** Slots asked of one peer at a time: two epochs, as Lodestar's batches. */
export const BATCH_SLOTS = 2 * SLOTS_PER_EPOCH;
/** how many batches are downloaded ahead of the one being imported */
const BATCHES_AHEAD = 2;
/** attempts of one batch, each from another peer when there is one, before the round gives up */
const MAX_BATCH_ATTEMPTS = 5;
/** a peer this many slots ahead of our head makes us sync */
export const SYNC_DISTANCE_SLOTS = 2;

export interface SyncPeer {
  peerId: string;
  status: Status;
}

export interface RangeSyncDeps {
  chain: Pick<IBeaconChain, "getHead" | "getFinalizedCheckpoint" | "importBlock">;
  /** connected peers of our chain, with their latest status */
  syncPeers(): SyncPeer[];
  report(peer: string, action: PeerAction, reason: string): void;
  /** whether fork choice has the block (hex root): a peer whose head we have has nothing to give */
  hasBlock?(rootHex: string): boolean;
  fetchBlocksByRange(peer: string, startSlot: number, count: number): Promise<SignedBeaconBlock[]>;
}

export interface RangeSyncEvents {
  /** a round finished: the head reached every peer's, or no peer could help further (`progressed`: the head moved) */
  done: [headSlot: number, progressed: boolean];
}

interface Batch {
  startSlot: number;
  attempts: number;
  peer: string;
  blocks: Promise<SignedBeaconBlock[]>;
}

/**
 * Range sync: when peers report a head ahead of ours, blocks are fetched with
 * beacon_blocks_by_range in batches spread over those peers (a few batches ahead) and
 * imported in order. A batch that fails or holds bad blocks is retried from another peer and
 * the peer scored down; when our head is on a branch the peers do not have, the round starts
 * again from our finalized checkpoint.
 *
 * A round follows one branch: the head of the peer furthest ahead. Above a peer's finalized
 * checkpoint its blocks come from its own head's branch, so only the peers that report that same
 * head root serve those batches (after a network split, the two halves' peers serve two branches,
 * and a batch of one built on a batch of the other would never link); any peer of our chain serves
 * a batch that lies wholly within its finalized part, which every branch shares.
 */
export class RangeSync extends EventEmitter<RangeSyncEvents> {
  private readonly deps: RangeSyncDeps;
  private running: Promise<void> | null = null;
  private targetSlot = 0;
  private nextPeer = 0;
  private stopped = false;
  /** the head root (hex) this round follows */
  private targetRoot: string | null = null;

  constructor(deps: RangeSyncDeps) {
    super();
    this.deps = deps;
  }

  /** Whether a round is under way. */
  isSyncing(): boolean {
    return this.running !== null;
  }

  /** The head slot being synced to (0 when idle). */
  target(): number {
    return this.running ? this.targetSlot : 0;
  }

  /** A peer told us its status: start a round when it is ahead. */
  onPeerStatus(status: Status): void {
    if (this.stopped || this.running) return;
    const startHead = this.deps.chain.getHead().slot;
    if (status.headSlot < startHead + SYNC_DISTANCE_SLOTS) return;
    this.startRound(startHead);
  }

  private startRound(startHead: number): void {
    // deferred, so that the round counts as running before its first request goes out
    this.running = Promise.resolve()
      .then(() => this.syncRound())
      .catch((e: Error) => log.warn({err: e.message}, "range sync round failed"))
      .finally(() => {
        this.running = null;
        this.targetRoot = null;
        const head = this.deps.chain.getHead().slot;
        this.emit("done", head, head > startHead);
      });
  }

  /**
   * A gossip block whose unknown ancestors go back further than lookups by root follow: a peer is
   * on a branch we lack though its head may be no higher than ours (two halves of a split network
   * that grew apart for as long). Starts a round toward the branch of a peer whose head we lack.
   */
  onUnknownBranch(): void {
    if (this.stopped || this.running) return;
    if (!this.deps.syncPeers().some((p) => this.lacks(p))) return;
    this.startRound(this.deps.chain.getHead().slot);
  }

  private lacks(peer: SyncPeer): boolean {
    return !(this.deps.hasBlock?.(toRootHex(peer.status.headRoot)) ?? false);
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.running ?? Promise.resolve();
  }

  /** Peers that can serve the batch starting at `slot`: on the round's branch, or finalized past the batch. */
  private aheadPeers(slot: number): SyncPeer[] {
    const end = slot + BATCH_SLOTS - 1;
    return this.deps.syncPeers().filter(
      (p) => p.status.headSlot >= slot && (toRootHex(p.status.headRoot) === this.targetRoot || computeStartSlotAtEpoch(p.status.finalizedEpoch) >= end)
    );
  }

  /** The branch the round follows: of the peers whose head we lack, the head root of the highest (of those, the one most peers report). */
  private chooseTarget(): void {
    const peers = this.deps.syncPeers().filter((p) => this.lacks(p));
    const best = Math.max(0, ...peers.map((p) => p.status.headSlot));
    const votes = new Map<string, number>();
    for (const p of peers) if (p.status.headSlot === best) votes.set(toRootHex(p.status.headRoot), (votes.get(toRootHex(p.status.headRoot)) ?? 0) + 1);
    this.targetRoot = [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  }

  private async syncRound(): Promise<void> {
    this.chooseTarget();
    let start = this.deps.chain.getHead().slot + 1;
    let restartedFromFinalized = false;
    if (start > this.bestHead()) {
      // the branch followed is no higher than our head, so it leaves ours below it: from the finalized checkpoint
      restartedFromFinalized = true;
      start = computeStartSlotAtEpoch(this.deps.chain.getFinalizedCheckpoint().epoch) + 1;
    }
    /** the last batch imported in this round */
    let previous: Batch | null = null;
    const queue: Batch[] = [];
    log.info({from: start, target: this.bestHead(), targetRoot: this.targetRoot}, "range sync started");
    for (;;) {
      if (this.stopped) return;
      this.targetSlot = this.bestHead();
      // keep a few batches in flight
      let nextStart = queue.length > 0 ? queue[queue.length - 1].startSlot + BATCH_SLOTS : start;
      while (queue.length < BATCHES_AHEAD && nextStart <= this.targetSlot) {
        const batch = this.download(nextStart, 0, null);
        if (!batch) break;
        queue.push(batch);
        nextStart += BATCH_SLOTS;
      }
      const batch = queue.shift();
      if (!batch) break;
      const outcome = await this.importBatch(batch);
      if (outcome === "ok") {
        start = batch.startSlot + BATCH_SLOTS;
        previous = batch;
        continue;
      }
      let retryOf = batch;
      if (outcome === "parent-unknown" && previous !== null) {
        // the batch before left out blocks this one builds on: fetch that one again elsewhere
        this.deps.report(previous.peer, "low", "range sync: left out blocks the next batch builds on");
        queue.length = 0;
        retryOf = previous;
        previous = null;
      } else if (outcome === "parent-unknown" && !restartedFromFinalized) {
        // the round's first batch does not build on our head: our head is on a branch the
        // peers do not have, so go back to the finalized checkpoint
        restartedFromFinalized = true;
        queue.length = 0;
        start = computeStartSlotAtEpoch(this.deps.chain.getFinalizedCheckpoint().epoch) + 1;
        log.info({from: start}, "range sync restarts from the finalized checkpoint");
        continue;
      }
      if (retryOf.attempts + 1 >= MAX_BATCH_ATTEMPTS) {
        log.warn({startSlot: retryOf.startSlot}, "range sync gives up on a batch after repeated failures");
        return;
      }
      // later batches already downloaded stay queued behind the retry
      const retry = this.download(retryOf.startSlot, retryOf.attempts + 1, retryOf.peer);
      if (!retry) return;
      queue.unshift(retry);
    }
    log.info({headSlot: this.deps.chain.getHead().slot}, "range sync done");
  }

  /** The highest head of the peers on the round's branch. */
  private bestHead(): number {
    return Math.max(0, ...this.deps.syncPeers().filter((p) => toRootHex(p.status.headRoot) === this.targetRoot).map((p) => p.status.headSlot));
  }

  /** Starts downloading a batch from the next peer whose head reaches it (another than `avoid` when possible). */
  private download(startSlot: number, attempts: number, avoid: string | null): Batch | null {
    const candidates = this.aheadPeers(startSlot);
    const usable = candidates.filter((p) => p.peerId !== avoid);
    const pool = usable.length > 0 ? usable : candidates;
    if (pool.length === 0) return null;
    const peer = pool[this.nextPeer++ % pool.length].peerId;
    const blocks = this.deps.fetchBlocksByRange(peer, startSlot, BATCH_SLOTS);
    blocks.catch(() => undefined); // handled when the batch is imported
    return {startSlot, attempts, peer, blocks};
  }

  private async importBatch(batch: Batch): Promise<"ok" | "failed" | "parent-unknown"> {
    let blocks: SignedBeaconBlock[];
    try {
      blocks = await batch.blocks;
    } catch (e) {
      this.deps.report(batch.peer, "low", `blocks by range failed: ${(e as Error).message}`);
      return "failed";
    }
    for (const [i, block] of blocks.entries()) {
      try {
        await this.deps.chain.importBlock(block);
      } catch (e) {
        if (!(e instanceof BlockError)) throw e;
        if (e.code === "ALREADY_KNOWN" || e.code === "WOULD_REVERT_FINALIZED") continue;
        if (e.code === "PARENT_UNKNOWN" && i === 0) return "parent-unknown";
        // our execution engine did not answer: nothing wrong with the peer's blocks. Nor when a
        // block's sidecars could not be found: every peer was asked for them (a peer serves the
        // blocks of its branch but keeps only its own custody columns), and gossip ignores it too
        if (e.code === "EXECUTION_ENGINE_ERROR" || e.code === "DATA_UNAVAILABLE") return "failed";
        const action: PeerAction = e.code === "PARENT_UNKNOWN" || e.code === "FUTURE_SLOT" ? "mid" : "high";
        this.deps.report(batch.peer, action, `range sync block at slot ${block.message.slot}: ${e.message}`);
        return "failed";
      }
    }
    return "ok";
  }
}
