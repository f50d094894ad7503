import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq, NUMBER_OF_COLUMNS} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ssz, type deneb, type fulu, type phase0, type SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {BeaconDb} from "../../db/beaconDb.ts";
import type {DbOp} from "../../db/repository.ts";
import type {ExecutionEngine} from "../../execution/engine.ts";
import {BlockError} from "../interface.ts";
import {ColumnSources} from "./columnSources.ts";
import {KzgThread} from "../../kzg/kzgThread.ts";
import {blobCommitmentsOf, sidecarMatchesBlock} from "./sidecars.ts";

/**
 * is_data_available of deneb and fulu: a block that commits to blobs is imported only once its
 * data is here, verified. Sidecars come from gossip, req/resp and the REST publish path, already
 * checked (inclusion proof, KZG proofs); they wait here, by block root, until their block is
 * imported and they are stored with it. Blocks older than the retention window need no data
 * (peers need not serve it).
 */

/** What a block needs before import: nothing, all its blobs, or the columns this node samples. */
export type DataRequirement = {kind: "none"} | {kind: "blobs"; count: number} | {kind: "columns"; columns: number[]};

/** What is still missing for a block, by index. */
export type MissingData = {kind: "blobs"; indices: number[]} | {kind: "columns"; indices: number[]};

/** Asks peers for missing sidecars; what arrives is given to `add*` (verified) before it resolves. */
export type SidecarFetcher = (block: SignedBeaconBlock, blockRoot: Uint8Array, missing: MissingData) => Promise<void>;

interface PendingData {
  slot: number;
  blobs: Map<number, deneb.BlobSidecar>;
  columns: Map<number, fulu.DataColumnSidecar>;
}

/** Blocks whose sidecars are kept while waiting for the block; the oldest go first. */
const MAX_PENDING_BLOCKS = 64;

export interface DataAvailabilityDeps {
  config: BeaconConfig;
  db: BeaconDb;
  currentSlot(): number;
  /** how long a block waits for its sidecars to arrive on their own before peers are asked */
  waitMs?: number;
  /** waits `ms` (a timer unless given: tests pass one that moves their clock) */
  sleep?: (ms: number) => Promise<void>;
  /** the execution engine, whose blob pool (engine_getBlobsV2) may hold a block's blobs */
  engine?: Pick<ExecutionEngine, "getBlobs">;
  /** how long reconstruction waits for the other columns once half are here (default: a twelfth of a slot) */
  reconstructDelayMs?: number;
  /** the thread of the KZG cell work (default: one of its own, stopped by `close`) */
  kzg?: KzgThread;
}

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class DataAvailability {
  private readonly deps: DataAvailabilityDeps;
  private readonly pending = new Map<string, PendingData>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** the columns this node samples (fulu); every column until the network says otherwise */
  private sampling: number[] = Array.from({length: NUMBER_OF_COLUMNS}, (_, i) => i);
  private fetcher: SidecarFetcher | null = null;
  /** the columns stored with the last blocks imported, by block root: held still, for the first-seen rule and the column sources */
  private readonly stored = new Map<string, Set<number>>();
  /** columns from the execution engine's blobs and from reconstruction */
  readonly columnSources: ColumnSources;
  private ownKzg: KzgThread | null = null;

  constructor(deps: DataAvailabilityDeps) {
    this.deps = deps;
    const engine = deps.engine;
    this.columnSources = new ColumnSources({
      config: deps.config,
      held: this,
      kzg: deps.kzg ?? (this.ownKzg = new KzgThread()),
      getBlobs: engine?.getBlobs ? (fork, hashes) => engine.getBlobs!(fork, hashes) : undefined,
      sleep: deps.sleep ?? timerSleep,
      reconstructDelayMs: deps.reconstructDelayMs ?? (deps.config.SECONDS_PER_SLOT * 1000) / 12,
    });
  }

  /** Stops the KZG thread, if it is its own. */
  async close(): Promise<void> {
    await this.ownKzg?.close();
  }

  setSamplingColumns(columns: number[]): void {
    this.sampling = [...columns].sort((a, b) => a - b);
    if (this.deps.config.FULU_FORK_EPOCH !== Infinity) this.columnSources.onSamplingColumns(this.sampling);
  }

  samplingColumns(): number[] {
    return this.sampling;
  }

  setFetcher(fetcher: SidecarFetcher | null): void {
    this.fetcher = fetcher;
  }

  requirement(block: SignedBeaconBlock): DataRequirement {
    const {config} = this.deps;
    const slot = block.message.slot;
    const fork = config.getForkSeq(slot);
    const count = blobCommitmentsOf(block).length;
    if (fork < ForkSeq.deneb || count === 0) return {kind: "none"};
    const window = fork >= ForkSeq.fulu ? config.MIN_EPOCHS_FOR_DATA_COLUMN_SIDECARS_REQUESTS : config.MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS;
    if (computeEpochAtSlot(slot) + window < computeEpochAtSlot(this.deps.currentSlot())) return {kind: "none"};
    return fork >= ForkSeq.fulu ? {kind: "columns", columns: this.sampling} : {kind: "blobs", count};
  }

  /** Verified blob sidecars (all of one block or not); kept until their block is imported. */
  addBlobSidecars(sidecars: deneb.BlobSidecar[]): void {
    for (const sidecar of sidecars) this.entryFor(sidecar.signedBlockHeader.message).blobs.set(sidecar.index, sidecar);
    this.notify(sidecars.map((s) => s.signedBlockHeader.message));
  }

  /** Verified data column sidecars; kept until their block is imported. */
  addColumnSidecars(sidecars: fulu.DataColumnSidecar[]): void {
    const roots = new Set<string>();
    for (const sidecar of sidecars) {
      const {rootHex, entry} = this.entryOf(sidecar.signedBlockHeader.message);
      entry.columns.set(sidecar.index, sidecar);
      roots.add(rootHex);
    }
    this.notify(sidecars.map((s) => s.signedBlockHeader.message));
    for (const rootHex of roots) this.columnSources.onColumnsAdded(rootHex);
  }

  hasBlobSidecar(blockRootHex: string, index: number): boolean {
    return this.pending.get(blockRootHex)?.blobs.has(index) ?? false;
  }

  /** Whether the node holds this column of the block: waiting for it, or stored with it lately. */
  hasColumnSidecar(blockRootHex: string, index: number): boolean {
    return (this.pending.get(blockRootHex)?.columns.has(index) ?? false) || (this.stored.get(blockRootHex)?.has(index) ?? false);
  }

  /** Sidecars received for a block not yet imported (req/resp serves them too). */
  pendingBlobSidecars(blockRootHex: string): deneb.BlobSidecar[] {
    return [...(this.pending.get(blockRootHex)?.blobs.values() ?? [])].sort((a, b) => a.index - b.index);
  }

  /** A column waiting for its block, or rebuilt lately and not sampled (served by root for a few blocks). */
  pendingColumnSidecar(blockRootHex: string, index: number): fulu.DataColumnSidecar | null {
    return this.pending.get(blockRootHex)?.columns.get(index) ?? this.columnSources.rebuiltColumn(blockRootHex, index);
  }

  /** The columns of a block not yet imported. */
  pendingColumns(blockRootHex: string): fulu.DataColumnSidecar[] {
    return [...(this.pending.get(blockRootHex)?.columns.values() ?? [])];
  }

  missing(block: SignedBeaconBlock, blockRootHex: string): MissingData | null {
    const need = this.requirement(block);
    if (need.kind === "none") return null;
    const have = this.pending.get(blockRootHex);
    const ok = have && this.matches(have, block);
    if (need.kind === "blobs") {
      const indices = Array.from({length: need.count}, (_, i) => i).filter((i) => !(ok && have.blobs.has(i)));
      return indices.length === 0 ? null : {kind: "blobs", indices};
    }
    const indices = need.columns.filter((c) => !(ok && have.columns.has(c)));
    return indices.length === 0 ? null : {kind: "columns", indices};
  }

  /**
   * Resolves once the block's data is here: at once, after the sidecars arrive, or after peers
   * were asked for what is still missing. Throws BlockError DATA_UNAVAILABLE otherwise.
   */
  async whenAvailable(block: SignedBeaconBlock, blockRoot: Uint8Array): Promise<void> {
    const rootHex = toRootHex(blockRoot);
    if (!this.missing(block, rootHex)) return;
    this.columnSources.onBlockWaiting(block, blockRoot);
    const waitMs = this.deps.waitMs ?? Math.min(4000, this.deps.config.SECONDS_PER_SLOT * 1000);
    if (await this.waitFor(block, rootHex, waitMs)) return;
    const missing = this.missing(block, rootHex);
    if (missing && this.fetcher) await this.fetcher(block, blockRoot, missing).catch(() => undefined);
    const still = this.missing(block, rootHex);
    if (still) {
      const what = still.kind === "blobs" ? `blob sidecars ${still.indices.join(",")}` : `data column sidecars ${still.indices.join(",")}`;
      throw new BlockError("DATA_UNAVAILABLE", `${what} of block ${rootHex} (slot ${block.message.slot}) are not available`);
    }
  }

  /** The writes that store the block's sidecars with it; the pending copies are dropped. */
  takeStoreOps(block: SignedBeaconBlock, blockRoot: Uint8Array): DbOp[] {
    const rootHex = toRootHex(blockRoot);
    const have = this.pending.get(rootHex);
    this.pending.delete(rootHex);
    if (!have || !this.matches(have, block)) return [];
    if (have.columns.size > 0) {
      this.stored.set(rootHex, new Set(have.columns.keys()));
      while (this.stored.size > MAX_PENDING_BLOCKS) this.stored.delete(this.stored.keys().next().value as string);
    }
    const ops: DbOp[] = [];
    if (have.blobs.size > 0) ops.push(this.deps.db.blobSidecars.putOp(blockRoot, [...have.blobs.values()].sort((a, b) => a.index - b.index)));
    for (const sidecar of have.columns.values()) ops.push(this.deps.db.dataColumnSidecars.putOp(sidecar, blockRoot));
    return ops;
  }

  /** Drops what waited for blocks at or before `slot` (finalized, or too old to come). */
  pruneBefore(slot: number): void {
    for (const [root, entry] of this.pending) if (entry.slot < slot) this.pending.delete(root);
  }

  private matches(have: PendingData, block: SignedBeaconBlock): boolean {
    const sample = have.blobs.values().next().value ?? have.columns.values().next().value;
    return !sample || sidecarMatchesBlock(this.deps.config, sample, block);
  }

  private entryFor(header: phase0.BeaconBlockHeader): PendingData {
    return this.entryOf(header).entry;
  }

  private entryOf(header: phase0.BeaconBlockHeader): {rootHex: string; entry: PendingData} {
    const rootHex = toRootHex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(header));
    let entry = this.pending.get(rootHex);
    if (!entry) {
      entry = {slot: header.slot, blobs: new Map(), columns: new Map()};
      this.pending.set(rootHex, entry);
      while (this.pending.size > MAX_PENDING_BLOCKS) this.pending.delete(this.pending.keys().next().value as string);
    }
    return {rootHex, entry};
  }

  private notify(headers: phase0.BeaconBlockHeader[]): void {
    const roots = new Set(headers.map((h) => toRootHex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(h))));
    for (const root of roots) for (const wake of this.waiters.get(root) ?? []) wake();
  }

  private waitFor(block: SignedBeaconBlock, rootHex: string, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      let waiters = this.waiters.get(rootHex);
      if (!waiters) this.waiters.set(rootHex, (waiters = new Set()));
      const done = (available: boolean) => {
        waiters.delete(check);
        if (waiters.size === 0) this.waiters.delete(rootHex);
        resolve(available);
      };
      const check = () => {
        if (!this.missing(block, rootHex)) done(true);
      };
      waiters.add(check);
      void (this.deps.sleep ?? timerSleep)(ms).then(() => done(false));
    });
  }
}
