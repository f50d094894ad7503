import {Worker} from "node:worker_threads";
import {getLogger} from "../log.ts";

const log = getLogger("chain");

/**
 * A thread for the KZG cell work of data columns. Recovering a blob's cells and cell proofs from
 * half of them takes 0.3-0.5 s of native work on a 2-core machine (its proofs dominate), and
 * computing a blob's cells 5-10 ms: on the event loop, a block of six blobs would hold every
 * request and gossip message for seconds. c-kzg keeps its settings per thread, so the thread
 * loads its own trusted setup (1.5-3 s, about 40 MiB); it is started on first use, not at start,
 * as most nodes never reconstruct. Jobs run one after the other, in the order given.
 */

export type KzgJob =
  | {op: "recover"; rows: {indices: number[]; cells: Uint8Array[]}[]}
  | {op: "cells"; blobs: Uint8Array[]}
  | {op: "verify"; commitments: Uint8Array[]; indices: number[]; cells: Uint8Array[]; proofs: Uint8Array[]};

export type KzgJobResult =
  | {op: "recover"; cells: Uint8Array[][]; proofs: Uint8Array[][]}
  | {op: "cells"; cells: Uint8Array[][]}
  | {op: "verify"; valid: boolean};

/** the worker of this module, from the sources or from the build (the same extension as this file) */
const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./kzgWorker.ts" : "./kzgWorker.js", import.meta.url);

/** A job holds one block's cells at a time (a few MiB at most); the trusted setup is native memory. */
const WORKER_HEAP = {maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 128};

interface Pending {
  resolve(result: KzgJobResult): void;
  reject(err: Error): void;
}

export class KzgThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;

  /** Starts the thread (it loads its trusted setup) ahead of the first job, for a node that will need it. */
  warm(): void {
    if (!this.closed && !this.worker) this.start();
  }

  /** recover_cells_and_kzg_proofs of each row (a blob): its cell indices ascending and those cells, at least half of them */
  async recover(rows: {indices: number[]; cells: Uint8Array[]}[]): Promise<{cells: Uint8Array[][]; proofs: Uint8Array[][]}> {
    const result = await this.run({op: "recover", rows});
    if (result.op !== "recover") throw new Error("KZG thread answered another job");
    return result;
  }

  /** compute_cells of each blob */
  async computeCells(blobs: Uint8Array[]): Promise<Uint8Array[][]> {
    const result = await this.run({op: "cells", blobs});
    if (result.op !== "cells") throw new Error("KZG thread answered another job");
    return result.cells;
  }

  /** verify_cell_kzg_proof_batch (false for malformed input) */
  async verifyCells(commitments: Uint8Array[], indices: number[], cells: Uint8Array[], proofs: Uint8Array[]): Promise<boolean> {
    if (cells.length === 0) return true;
    const result = await this.run({op: "verify", commitments, indices, cells, proofs});
    if (result.op !== "verify") throw new Error("KZG thread answered another job");
    return result.valid;
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error("KZG thread closed"));
    await worker?.terminate();
  }

  private run(job: KzgJob): Promise<KzgJobResult> {
    if (this.closed) return Promise.reject(new Error("KZG thread closed"));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {resolve, reject});
      // a worker with work keeps the process alive until it answers; an idle one does not
      worker.ref();
      worker.postMessage({id, job});
    });
  }

  private start(): Worker {
    const worker = new Worker(WORKER_URL, {resourceLimits: WORKER_HEAP});
    this.worker = worker;
    worker.unref();
    worker.on("message", ({id, result, error}: {id: number; result?: KzgJobResult; error?: string}) => {
      const job = this.pending.get(id);
      if (!job) return;
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      if (error !== undefined) job.reject(new Error(error));
      else job.resolve(result!);
    });
    worker.on("error", (err) => log.error({err: err.message}, "KZG thread failed"));
    worker.on("exit", (code) => {
      if (this.worker !== worker) return;
      // its jobs are lost with it; the next job starts a new thread
      this.worker = null;
      this.failAll(new Error(`KZG thread exited (${code})`));
    });
    return worker;
  }

  private failAll(err: Error): void {
    const jobs = [...this.pending.values()];
    this.pending.clear();
    for (const job of jobs) job.reject(err);
  }
}
