import type {ChainForkConfig} from "@lodestar/config";
import {ForkSeq, NUMBER_OF_COLUMNS} from "@lodestar/params";
import type {fulu, SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {BlobAndProofs} from "../../execution/engine.ts";
import {kzgCommitmentToVersionedHash} from "../../execution/engineJson.ts";
import {getLogger} from "../../log.ts";
import type {KzgThread} from "../../kzg/kzgThread.ts";
import {COLUMNS_TO_RECONSTRUCT, blobsOfColumns, recoverColumns} from "./reconstruction.ts";
import {blobCommitmentsOf, dataColumnSidecarsOfBlock} from "./sidecars.ts";

const log = getLogger("chain");

/**
 * Where a fulu block's data columns come from besides gossip and req/resp:
 * - the execution engine's blob pool (engine_getBlobsV2, fulu p2p-interface.md "Distributed Blob
 *   Publishing using blobs retrieved from local execution layer client"): when a block waits for
 *   columns, its blobs are asked for; all of them (with their cell proofs) give every column;
 * - reconstruction (das-core.md "Reconstruction and cross-seeding"): once half of a block's
 *   columns are here, the rest are rebuilt (recover_matrix), after a short delay that lets the
 *   others arrive on their own.
 * Either way the node takes the columns it samples that it lacked, as if they had come over
 * gossip: they count for is_data_available, are stored with the block, and are published on
 * their subnets (the node subscribes to the subnets of the columns it samples, and only to them).
 * Rebuilt columns it does not sample are kept a few blocks in memory and served by root.
 */

/** Blocks whose rebuilt unsampled columns are kept to serve. */
const MAX_REBUILT_BLOCKS = 16;
/** Blocks remembered as asked of the engine or reconstructed (each is done once). */
const MAX_STARTED = 256;

export interface HeldColumns {
  samplingColumns(): number[];
  pendingColumns(blockRootHex: string): fulu.DataColumnSidecar[];
  hasColumnSidecar(blockRootHex: string, index: number): boolean;
  /** takes columns as verified */
  addColumnSidecars(sidecars: fulu.DataColumnSidecar[]): void;
}

export interface ColumnSourcesDeps {
  config: ChainForkConfig;
  held: HeldColumns;
  kzg: Pick<KzgThread, "recover" | "computeCells" | "verifyCells" | "warm">;
  /** engine_getBlobsV2 (absent: an engine that has no blob pool) */
  getBlobs?: (fork: string, versionedHashes: Uint8Array[]) => Promise<Array<BlobAndProofs | null> | null>;
  /** waits `ms` (tests pass one that moves their clock) */
  sleep(ms: number): Promise<void>;
  /** how long reconstruction waits after half of a block's columns are here */
  reconstructDelayMs: number;
}

export type ColumnPublisher = (sidecars: fulu.DataColumnSidecar[]) => void;

export class ColumnSources {
  private readonly deps: ColumnSourcesDeps;
  private publisher: ColumnPublisher | null = null;
  private readonly started = new Set<string>();
  private readonly rebuilt = new Map<string, Map<number, fulu.DataColumnSidecar>>();

  constructor(deps: ColumnSourcesDeps) {
    this.deps = deps;
  }

  /** Where the columns the node takes from the engine or rebuilds are published (the network sets it). */
  setPublisher(publisher: ColumnPublisher | null): void {
    this.publisher = publisher;
  }

  /** The node now samples these columns: with half of them or more it rebuilds every block, so the KZG thread starts now. */
  onSamplingColumns(columns: number[]): void {
    if (columns.length >= COLUMNS_TO_RECONSTRUCT) this.deps.kzg.warm();
  }

  /** The blobs of a block from at least half of its columns, recovered on the KZG thread when the first half is not all there. */
  blobsOf(columns: fulu.DataColumnSidecar[]): Promise<Uint8Array[]> {
    return blobsOfColumns(this.deps.kzg, columns);
  }

  /** A rebuilt column the node does not sample, while it is kept. */
  rebuiltColumn(blockRootHex: string, index: number): fulu.DataColumnSidecar | null {
    return this.rebuilt.get(blockRootHex)?.get(index) ?? null;
  }

  /** A fulu block waits for columns: its blobs are asked of the engine, once. */
  onBlockWaiting(block: SignedBeaconBlock, blockRoot: Uint8Array): void {
    const {config, getBlobs} = this.deps;
    const slot = block.message.slot;
    if (!getBlobs || config.getForkSeq(slot) < ForkSeq.fulu || blobCommitmentsOf(block).length === 0) return;
    const rootHex = toRootHex(blockRoot);
    if (!this.start(`engine ${rootHex}`)) return;
    void this.fromEngine(block, rootHex, getBlobs).catch((e: Error) => log.debug({slot, root: rootHex, err: e.message}, "no data columns from the execution engine's blobs"));
  }

  /** Columns of a block arrived: with half of them (and not all), the rest are rebuilt, once. */
  onColumnsAdded(blockRootHex: string): void {
    const have = this.deps.held.pendingColumns(blockRootHex);
    if (have.length < COLUMNS_TO_RECONSTRUCT || have.length >= NUMBER_OF_COLUMNS) return;
    if (!this.start(`rebuild ${blockRootHex}`)) return;
    // the block may be imported (and its pending columns stored) before the delay is over
    void this.reconstruct(blockRootHex, have).catch((e: Error) => log.warn({root: blockRootHex, err: e.message}, "data column reconstruction failed"));
  }

  private start(key: string): boolean {
    if (this.started.has(key)) return false;
    this.started.add(key);
    if (this.started.size > MAX_STARTED) this.started.delete(this.started.values().next().value as string);
    return true;
  }

  private async fromEngine(block: SignedBeaconBlock, rootHex: string, getBlobs: NonNullable<ColumnSourcesDeps["getBlobs"]>): Promise<void> {
    const {config, held, kzg} = this.deps;
    const slot = block.message.slot;
    const commitments = blobCommitmentsOf(block);
    const answer = await getBlobs(config.getForkName(slot), commitments.map(kzgCommitmentToVersionedHash));
    // engine_getBlobsV2: null unless the engine has every blob
    if (!answer || answer.length !== commitments.length || answer.some((b) => b === null)) return;
    const blobs = answer as BlobAndProofs[];
    if (blobs.some((b) => b.proofs.length !== NUMBER_OF_COLUMNS)) throw new Error(`the engine gave blobs without ${NUMBER_OF_COLUMNS} cell proofs each`);
    if (!this.lacksSampled(rootHex)) return;
    const cells = await kzg.computeCells(blobs.map((b) => b.blob));
    const sidecars = dataColumnSidecarsOfBlock(config, block, cells, blobs.map((b) => b.proofs));
    const wanted = this.sampledAbsent(rootHex, sidecars);
    // the spec lets a node skip checking the engine's blobs; the node checks those it keeps and
    // publishes, so that an engine's bad answer never reaches its peers or its database
    if (!(await this.cellProofsValid(wanted))) throw new Error("the engine's blobs or cell proofs do not match the block's commitments");
    // every column was in hand: nothing to rebuild once half of them are held
    this.start(`rebuild ${rootHex}`);
    const added = this.take(rootHex, wanted);
    if (added > 0) log.info({slot, root: rootHex, blobs: blobs.length, columns: added}, "data columns built from the execution engine's blobs");
  }

  private async reconstruct(rootHex: string, had: fulu.DataColumnSidecar[]): Promise<void> {
    const {held, reconstructDelayMs} = this.deps;
    await this.deps.sleep(reconstructDelayMs);
    const columns = new Map(had.map((s) => [s.index, s]));
    for (const sidecar of held.pendingColumns(rootHex)) columns.set(sidecar.index, sidecar);
    if (columns.size >= NUMBER_OF_COLUMNS) return;
    const started = performance.now();
    const all = await recoverColumns(this.deps.kzg, [...columns.values()]);
    const sampled = new Set(held.samplingColumns());
    const unsampled = new Map(all.filter((s) => !columns.has(s.index) && !sampled.has(s.index)).map((s) => [s.index, s]));
    this.rebuilt.set(rootHex, unsampled);
    while (this.rebuilt.size > MAX_REBUILT_BLOCKS) this.rebuilt.delete(this.rebuilt.keys().next().value as string);
    const added = this.take(rootHex, this.sampledAbsent(rootHex, all.filter((s) => !columns.has(s.index))));
    const slot = all[0].signedBlockHeader.message.slot;
    const fields = {slot, root: rootHex, had: columns.size, rebuilt: all.length - columns.size, added, ms: Math.round(performance.now() - started)};
    if (added > 0) log.info(fields, "data columns rebuilt from half of them");
    else log.debug(fields, "data columns rebuilt from half of them");
  }

  private lacksSampled(rootHex: string): boolean {
    return this.deps.held.samplingColumns().some((c) => !this.deps.held.hasColumnSidecar(rootHex, c));
  }

  /** the sampled columns of `sidecars` the node does not hold yet */
  private sampledAbsent(rootHex: string, sidecars: fulu.DataColumnSidecar[]): fulu.DataColumnSidecar[] {
    const sampled = new Set(this.deps.held.samplingColumns());
    return sidecars.filter((s) => sampled.has(s.index) && !this.deps.held.hasColumnSidecar(rootHex, s.index));
  }

  /** Takes what is still absent as if it came over gossip and publishes it; how many were taken. */
  private take(rootHex: string, sidecars: fulu.DataColumnSidecar[]): number {
    const absent = sidecars.filter((s) => !this.deps.held.hasColumnSidecar(rootHex, s.index));
    if (absent.length === 0) return 0;
    this.deps.held.addColumnSidecars(absent);
    this.publisher?.(absent);
    return absent.length;
  }

  private cellProofsValid(sidecars: fulu.DataColumnSidecar[]): Promise<boolean> {
    const commitments: Uint8Array[] = [];
    const indices: number[] = [];
    const cells: Uint8Array[] = [];
    const proofs: Uint8Array[] = [];
    for (const s of sidecars) {
      s.column.forEach((cell, row) => {
        commitments.push(s.kzgCommitments[row]);
        indices.push(s.index);
        cells.push(cell);
        proofs.push(s.kzgProofs[row]);
      });
    }
    return this.deps.kzg.verifyCells(commitments, indices, cells, proofs);
  }
}
