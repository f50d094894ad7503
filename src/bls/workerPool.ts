import {Worker} from "node:worker_threads";
import type {ISignatureSet, PubkeyCache} from "@lodestar/state-transition";
import {getLogger} from "../log.ts";
import {serializeSet, serializeSetBySigners, type SerializedSet, type SignatureVerifier, type VerifyOptions} from "./verifier.ts";
import {PubkeyTable} from "./pubkeyTable.ts";
import {verifyJobs} from "./verifyJobs.ts";
import {packJobs} from "./packedJobs.ts";
import {JobQueue} from "./jobQueue.ts";
import {LoopTurns, StepCost} from "../loopTurns.ts";

const log = getLogger("bls");

/** sets sent to a worker in one batch at most: one batch of a block's or a slot's gossip, small enough to retry job by job */
const MAX_BATCH_SETS = 128;
/**
 * On the event loop, a batch takes as many sets as fit in a turn's budget at the measured cost of
 * a set (3-4 in the default 2 ms), and never more than this. Smaller batches cost more per set
 * (one set 0.95 ms, 4 sets 0.6 ms a set, 16 sets 0.4), but each turn delays the REST requests in
 * flight: 16 sets (7 ms) in turns of 5 ms, against 6 sets in turns of 3 ms, under attester-duties
 * load with the dev validators' slot work (14 alternated rounds of 8 s each): requests over 5 ms
 * 0.96% -> 0.68%, p99.9 10.7 -> 7.7 ms, rounds with a p99 of 5 ms or more 6 -> 2.
 */
const MAX_BATCH_SETS_ON_LOOP = 6;
/**
 * Full batches a worker may hold, the one it checks included. A worker that has the next batch
 * already goes on to it; one that holds only the batch it checks waits, once done, for the event
 * loop to read its answer and post the next: seconds when the loop is held (a backlog of gossip
 * read from the sockets in one go, a long garbage collection). Under mainnet's gossip with all
 * subnets (bench:gossip), checks waited 4.8 s on average in the queue while the worker was idle
 * nine tenths of the time. Partial batches still go only to an idle worker, so that while all
 * are busy the jobs that come meanwhile join them.
 */
const MAX_BATCHES_PER_WORKER = 8;
/** what a set is first taken to cost on the event loop, until batches have been timed */
const INITIAL_MS_PER_SET = 0.45;
/** the worker of this module, from the sources or from the build (the same extension as this file) */
const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./worker.js", import.meta.url);

/**
 * A worker's heap holds one batch at a time (128 sets are about 40 KB): V8's defaults for a
 * machine with much memory would let each worker's young generation alone grow to tens of MiB.
 */
const WORKER_HEAP = {maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64};

interface Job {
  sets: SerializedSet[];
  resolve(valid: boolean): void;
  reject(err: Error): void;
}

interface PoolWorker {
  worker: Worker;
  /** the batches posted to it and not answered yet, by id, in the order it checks them */
  batches: Map<number, Job[]>;
  /** the sets of those batches */
  sets: number;
}

/**
 * BLS signature checks on worker threads (one fewer than the machine's cores, at least one), so
 * that the pairings of blocks, pool submissions and gossip never hold the event loop: the REST API
 * and the network keep answering while a slot's signatures are checked. Jobs that come in the same
 * turn of the event loop are checked together in one batch (up to `MAX_BATCH_SETS` sets), as
 * Lodestar's pool and Lighthouse's batch verifier do; a batch that fails is checked again job by
 * job in the worker, so a bad signature fails only its own job. A full batch is posted as soon
 * as its jobs are queued, to the worker with the least work, even mid-turn: workers keep
 * checking while the event loop is held. A set goes to a worker as its signers' validator
 * indices; the worker reads their keys from the shared key table (pubkeyTable.ts) and sums an
 * aggregate's itself.
 */
export class BlsWorkerPool implements SignatureVerifier {
  private readonly workers: PoolWorker[] = [];
  private readonly queue = new JobQueue<Job>();
  private nextId = 0;
  private flushScheduled = false;
  private closed = false;
  /** the on-loop cost of a set, over the batches checked */
  private readonly setCost = new StepCost(INITIAL_MS_PER_SET);

  private readonly turns: LoopTurns;
  /** the keys the workers read (sets go to them as signers' indices), from the first key cache asked with */
  private readonly keyTable = new PubkeyTable();
  private keyTableCache: PubkeyCache | undefined;

  /** `threads` 0: the batches are checked on the event loop, each a step of `turns` */
  constructor(threads: number, turns = new LoopTurns()) {
    this.turns = turns;
    for (let i = 0; i < threads; i++) this.workers.push(this.startWorker());
  }

  get threads(): number {
    return this.workers.length;
  }

  verify(sets: ISignatureSet[], pubkeyCache: PubkeyCache, opts: VerifyOptions = {}): Promise<boolean> {
    if (sets.length === 0) return Promise.resolve(true);
    if (this.closed) return Promise.reject(new Error("BLS worker pool closed"));
    let serialized: SerializedSet[];
    try {
      // the workers read keys from the table; on the event loop, a set's key is written out (no table to fill)
      const bySigners = this.workers.length > 0 && (this.keyTableCache ??= pubkeyCache) === pubkeyCache;
      serialized = sets.map((set) => (bySigners ? serializeSetBySigners(set, pubkeyCache, this.keyTable) : serializeSet(set, pubkeyCache)));
    } catch {
      // a validator index the cache does not know: nothing to verify against
      return Promise.resolve(false);
    }
    return new Promise((resolve, reject) => {
      const job = {sets: serialized, resolve, reject};
      this.queue.push(job, opts.priority);
      // a priority job goes at once to a worker with room, busy or not, in a batch of its own
      // (with what follows it in the queue); a full batch need not wait for the turn's other
      // jobs, nor for the event loop to turn
      const target = opts.priority ? this.leastLoaded() : undefined;
      if (target) this.post(target, this.takeBatch());
      if (this.workers.length > 0) this.postFullBatches();
      if (this.queue.length > 0) this.scheduleFlush();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new Error("BLS worker pool closed"));
    await Promise.all(this.workers.map(({worker}) => worker.terminate()));
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const flush = (): void => {
      this.flushScheduled = false;
      this.flush();
    };
    // the rest of this turn's jobs join the batch; on the event loop, so do the jobs that come
    // before the step's turn, as it waits behind the other CPU-bound steps (the node's signing)
    if (this.workers.length > 0) setImmediate(flush);
    // its cost as it will be when its turn comes: the batch it will take, at the measured rate
    else void this.turns.run(flush, () => Math.min(this.queue.sets, this.setsPerTurn()) * this.setCost.ms);
  }

  private flush(): void {
    if (this.workers.length === 0) {
      // no threads: one batch is checked here, within a turn's budget, and the event loop comes in before the next
      const jobs = this.takeBatch(this.setsPerTurn());
      const sets = jobs.reduce((n, job) => n + job.sets.length, 0);
      let results: boolean[];
      try {
        results = this.setCost.time(() => verifyJobs(jobs.map((job) => job.sets)), sets);
      } catch {
        results = jobs.map(() => false);
      }
      jobs.forEach((job, i) => job.resolve(results[i]));
      if (this.queue.length > 0) this.scheduleFlush();
      return;
    }
    this.postFullBatches();
    // what is left makes a partial batch: only for an idle worker
    for (const pw of this.workers) {
      if (this.queue.length === 0) return;
      if (pw.batches.size === 0) this.post(pw, this.takeBatch());
    }
  }

  /** Batches posted to the workers and not answered yet. */
  get batchesInFlight(): number {
    return this.workers.reduce((n, pw) => n + pw.batches.size, 0);
  }

  /** Every full batch the queue holds, each to the worker with the fewest sets posted, while one has room. */
  private postFullBatches(): void {
    while (this.queue.sets >= MAX_BATCH_SETS) {
      const target = this.leastLoaded();
      if (!target) return;
      this.post(target, this.takeBatch());
    }
  }

  /** The worker with the fewest sets posted, of those with room for another batch. */
  private leastLoaded(): PoolWorker | undefined {
    let target: PoolWorker | undefined;
    for (const pw of this.workers) if (pw.batches.size < MAX_BATCHES_PER_WORKER && (!target || pw.sets < target.sets)) target = pw;
    return target;
  }

  private post(pw: PoolWorker, jobs: Job[]): void {
    const id = this.nextId++;
    pw.batches.set(id, jobs);
    pw.sets += jobs.reduce((n, job) => n + job.sets.length, 0);
    // a worker with work keeps the process alive until it answers; an idle one does not
    pw.worker.ref();
    const packed = packJobs(jobs.map((job) => job.sets));
    pw.worker.postMessage({id, packed}, [packed]);
  }

  /** sets of an on-loop batch: as many as a turn's budget holds at their measured cost (at least one) */
  private setsPerTurn(): number {
    return Math.max(1, Math.min(MAX_BATCH_SETS_ON_LOOP, Math.floor(this.turns.budgetMs / this.setCost.ms)));
  }

  /** The next jobs of the queue, up to `maxSets` sets (at least one job): see JobQueue for their order. */
  private takeBatch(maxSets = MAX_BATCH_SETS): Job[] {
    return this.queue.take(maxSets);
  }

  private startWorker(): PoolWorker {
    const pw: PoolWorker = {worker: new Worker(WORKER_URL, {resourceLimits: WORKER_HEAP, workerData: {keys: this.keyTable.keys}}), batches: new Map(), sets: 0};
    pw.worker.unref();
    pw.worker.on("message", ({id, results}: {id: number; results: boolean[]}) => {
      const jobs = pw.batches.get(id);
      if (!jobs) return;
      pw.batches.delete(id);
      pw.sets -= jobs.reduce((n, job) => n + job.sets.length, 0);
      if (pw.batches.size === 0) pw.worker.unref();
      jobs.forEach((job, i) => job.resolve(results[i] === true));
      this.flush();
    });
    pw.worker.on("error", (err) => log.error({err}, "BLS worker failed"));
    pw.worker.on("exit", (code) => {
      if (this.closed) return;
      // its batches are lost with it: those callers get an error, and a new worker takes its place
      for (const jobs of pw.batches.values()) jobs.forEach((job) => job.reject(new Error(`BLS worker exited (${code})`)));
      const index = this.workers.indexOf(pw);
      if (index >= 0) this.workers[index] = this.startWorker();
      this.flush();
    });
    return pw;
  }
}
