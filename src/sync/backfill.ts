import type {BeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot, computeStartSlotAtEpoch, type PubkeyCache} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import type {SignatureVerifier} from "../bls/verifier.ts";
import type {BeaconDb} from "../db/beaconDb.ts";
import type {BackfillPoint} from "../db/chainMeta.ts";
import type {DbOp} from "../db/repository.ts";
import {failpoint} from "../failpoints.ts";
import {getLogger} from "../log.ts";
import type {PeerAction} from "../network/peers/peerScore.ts";
import {BackfillBatchError, type LinkedBlock, linkBatch, proposerSignaturesValid} from "./backfillChecks.ts";
import type {SyncPeer} from "./rangeSync.ts";

const log = getLogger("sync");

/** a progress line in the log at most this often (each batch is logged at debug) */
const PROGRESS_LOG_MS = 10_000;
/** failed batches in a row before backfill waits for the next slot (or a new peer) to try again */
const FAILURES_BEFORE_PAUSE = 3;

export interface BackfillMetrics {
  /** the slot of the lowest block stored */
  setSlot(slot: number): void;
  setTargetSlot(slot: number): void;
  addBlocks(count: number): void;
}

export interface BackfillDeps {
  config: BeaconConfig;
  db: BeaconDb;
  verifier: SignatureVerifier;
  /** the validator registry of a state at or after the anchor (a proposer of any older block is in it) */
  validators(): {pubkeyCache: PubkeyCache; count: number};
  currentSlot(): number;
  /** go back to genesis, not only MIN_EPOCHS_FOR_BLOCK_REQUESTS */
  toGenesis: boolean;
  /** connected peers of our chain, with their latest status */
  syncPeers(): SyncPeer[];
  report(peer: string, action: PeerAction, reason: string): void;
  fetchBlocksByRange(peer: string, startSlot: number, count: number, signal: AbortSignal): Promise<SignedBeaconBlock[]>;
  /** the sidecars the node keeps of these blocks, checked against them, as writes to store with them; throws when some are not to be had */
  fetchSidecars(peer: string, blocks: LinkedBlock[]): Promise<DbOp[]>;
  /** true while head sync needs the peers: backfill waits */
  busy(): boolean;
  metrics?: BackfillMetrics;
  now?: () => number;
}

/** The first slot backfill must reach: MIN_EPOCHS_FOR_BLOCK_REQUESTS before the current epoch, or genesis. */
export function backfillTargetSlot(config: BeaconConfig, currentSlot: number, toGenesis: boolean): number {
  if (toGenesis) return 0;
  return computeStartSlotAtEpoch(Math.max(0, computeEpochAtSlot(currentSlot) - config.MIN_EPOCHS_FOR_BLOCK_REQUESTS));
}

/** The peer did not answer the request (or not as the protocol allows). */
class RequestFailed extends Error {}

/** The lowest stored block, and the root its parent must have. */
interface Lowest extends BackfillPoint {
  parentRoot: Uint8Array;
}

/**
 * Backfill after checkpoint sync: the blocks before the anchor, fetched from peers newest first
 * with beacon_blocks_by_range, one epoch a batch (as Lighthouse), each batch checked (the chain
 * of parent roots down from the lowest block stored, and the proposers' signatures) and stored
 * in one write with the canonical slot index, the sidecars the node keeps, and how far it got.
 * So every reader finds the blocks at once, and a restart goes on from where it stopped. A peer
 * whose batch does not link or has a bad signature is scored down and the batch is asked of another.
 */
export class Backfill {
  private readonly deps: BackfillDeps;
  private lowest: Lowest | null = null;
  private anchorSlot = 0;
  private resumed = false;
  /** the next batch ends before this slot (the slots from it up to the lowest block are empty) */
  private cursor = 0;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly abort = new AbortController();
  private wakeUp: (() => void) | null = null;
  private nextPeer = 0;
  private lastFailedPeer: string | null = null;

  constructor(deps: BackfillDeps) {
    this.deps = deps;
  }

  /** Reads where backfill stands: the stored lowest block, or the anchor block. */
  async load(): Promise<void> {
    const {db} = this.deps;
    const anchor = await db.chainMeta.anchorCheckpoint.get();
    const anchorBlock = anchor ? await db.blocks.get(anchor.root) : null;
    this.anchorSlot = anchorBlock?.message.slot ?? 0;
    const stored = await db.chainMeta.backfilledTo.get();
    const point = stored ?? (anchor && anchorBlock ? {slot: anchorBlock.message.slot, root: anchor.root} : null);
    const block = stored ? await db.blocks.get(stored.root) : anchorBlock;
    if (!point || !block) return;
    this.resumed = stored !== null;
    this.lowest = {slot: point.slot, root: point.root, parentRoot: block.message.parentRoot};
    this.cursor = point.slot;
    this.deps.metrics?.setSlot(point.slot);
  }

  /** The slot of the earliest block the node has (status v2's earliest_available_slot). */
  earliestAvailableSlot(): number {
    return this.lowest?.slot ?? 0;
  }

  /** Starts backfilling in the background (after `load`). */
  start(): void {
    if (this.running || !this.lowest) return;
    this.running = this.run()
      .catch((e: Error) => {
        if (!this.stopped) log.warn({err: e.message}, "backfill stopped on an error");
      })
      .finally(() => (this.running = null));
  }

  /** Resolves once backfill has stopped: complete, stopped, or given up on an error. */
  finished(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Something changed (a slot, a peer, head sync done): a waiting backfill looks again. */
  wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wake();
    await this.running;
  }

  private target(): number {
    return backfillTargetSlot(this.deps.config, this.deps.currentSlot(), this.deps.toGenesis);
  }

  private isComplete(lowest: Lowest, target: number): boolean {
    return lowest.slot === 0 || lowest.slot <= target || this.cursor <= target;
  }

  private idle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => (this.wakeUp = resolve));
  }

  private async run(): Promise<void> {
    const now = this.deps.now ?? Date.now;
    const startedMs = now();
    /** when the first batch was asked for (the rate leaves out the wait for head sync and peers) */
    let fetchingSinceMs: number | null = null;
    let stored = 0;
    let lastLogMs = -Infinity;
    let failures = 0;
    const first = this.lowest!;
    if (this.isComplete(first, this.target())) {
      log.debug({lowestSlot: first.slot}, "backfill has nothing to do");
      return;
    }
    log.info({from: first.slot, anchorSlot: this.anchorSlot, target: this.target(), resumed: this.resumed}, "backfill started");
    while (!this.stopped) {
      const lowest = this.lowest!;
      const target = this.target();
      this.deps.metrics?.setTargetSlot(target);
      if (this.isComplete(lowest, target)) {
        log.info({lowestSlot: lowest.slot, target, blocks: stored, seconds: Math.round((now() - startedMs) / 1000)}, "backfill complete");
        return;
      }
      const end = this.cursor;
      const start = computeStartSlotAtEpoch(computeEpochAtSlot(end - 1));
      const peer = this.deps.busy() ? null : this.pickPeer(start);
      if (!peer) {
        await this.idle();
        continue;
      }
      fetchingSinceMs ??= now();
      try {
        const linked = await this.fetchBatch(peer, start, end, lowest);
        stored += linked.length;
        failures = 0;
        this.lastFailedPeer = null;
        const elapsedS = Math.max(0.001, (now() - fetchingSinceMs) / 1000);
        const progress = {lowestSlot: this.lowest!.slot, target, batch: `${start}..${end - 1}`, blocks: stored, blocksPerSecond: Math.round((stored / elapsedS) * 10) / 10, peer};
        if (now() - lastLogMs >= PROGRESS_LOG_MS) {
          lastLogMs = now();
          log.info(progress, "backfill progress");
        } else log.debug(progress, "backfill batch stored");
        failpoint("backfill:after-batch", start);
      } catch (e) {
        if (this.stopped) return;
        this.onBatchFailed(peer, start, end, e as Error);
        if (++failures >= FAILURES_BEFORE_PAUSE) {
          failures = 0;
          await this.idle();
        }
      }
    }
  }

  /** A peer that has the batch (its head reaches it, its history starts at or before it); not the one that just failed when there is another. */
  private pickPeer(start: number): string | null {
    const candidates = this.deps.syncPeers().filter((p) => p.status.headSlot >= start && (p.status.earliestAvailableSlot ?? 0) <= start);
    const others = candidates.filter((p) => p.peerId !== this.lastFailedPeer);
    const pool = others.length > 0 ? others : candidates;
    return pool.length === 0 ? null : pool[this.nextPeer++ % pool.length].peerId;
  }

  /** Fetches, checks and stores the blocks of [start, end); returns them. */
  private async fetchBatch(peer: string, start: number, end: number, lowest: Lowest): Promise<LinkedBlock[]> {
    const {config, db} = this.deps;
    const blocks = await this.deps.fetchBlocksByRange(peer, start, end - start, this.abort.signal).catch((e: Error) => {
      throw new RequestFailed(e.message);
    });
    const {linked, nextExpected} = await linkBatch(config, blocks, lowest.parentRoot);
    const newLowest = linked[linked.length - 1];
    // the range reached genesis: the lowest block must be the genesis block itself
    if (start === 0 && (newLowest?.block.message.slot ?? lowest.slot) !== 0) {
      throw new BackfillBatchError("NOT_LINKED", `left out the blocks before slot ${newLowest?.block.message.slot ?? lowest.slot}, down to genesis`);
    }
    if (!(await proposerSignaturesValid(config, linked, this.deps.validators(), this.deps.verifier))) {
      throw new BackfillBatchError("BAD_SIGNATURE", `a block of slots ${start}..${end - 1} has an invalid proposer signature`);
    }
    if (newLowest) {
      const sidecarOps = await this.deps.fetchSidecars(peer, linked);
      const point = {slot: newLowest.block.message.slot, root: newLowest.root};
      await db.batch([
        ...linked.flatMap(({block, root}) => [db.blocks.putOp(root, block), db.canonicalBlocks.putOp(block.message.slot, root)]),
        ...sidecarOps,
        db.chainMeta.backfilledTo.putOp(point),
      ]);
      this.lowest = {...point, parentRoot: nextExpected};
      this.deps.metrics?.setSlot(point.slot);
      this.deps.metrics?.addBlocks(linked.length);
    }
    this.cursor = start;
    return linked;
  }

  private onBatchFailed(peer: string, start: number, end: number, e: Error): void {
    this.lastFailedPeer = peer;
    // batches found empty since the lowest block: one of those answers may have been the lie
    // (the missing parent is in its range), so the fault is not surely this peer's
    const afterEmpty = end < this.lowest!.slot;
    // the slots below the lowest block are asked again
    this.cursor = this.lowest!.slot;
    const batch = `${start}..${end - 1}`;
    if (e instanceof BackfillBatchError) {
      // sidecars that failed their checks were reported where they were checked
      const surelyThisPeer = e.code === "BAD_SIGNATURE" || (e.code === "NOT_LINKED" && !afterEmpty);
      if (surelyThisPeer) this.deps.report(peer, e.code === "BAD_SIGNATURE" ? "high" : "mid", `backfill: ${e.message}`);
      log.warn({peer, batch, code: e.code, err: e.message}, "backfill batch refused; asking another peer");
    } else if (e instanceof RequestFailed) {
      this.deps.report(peer, "low", `backfill: blocks by range failed: ${e.message}`);
      log.debug({peer, batch, err: e.message}, "backfill batch failed");
    } else {
      // our side (the database, the signature checks): nothing to hold against the peer
      log.warn({batch, err: e.message}, "backfill batch failed");
    }
  }
}
