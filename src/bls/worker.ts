import {parentPort} from "node:worker_threads";
import {verifyJobs} from "./verifyJobs.ts";
import type {SerializedSet} from "./verifier.ts";

/** A BLS worker thread: verifies the batches the pool (workerPool.ts) sends, one at a time. */
parentPort!.on("message", ({id, jobs}: {id: number; jobs: SerializedSet[][]}) => {
  let results: boolean[];
  try {
    results = verifyJobs(jobs);
  } catch {
    results = jobs.map(() => false);
  }
  parentPort!.postMessage({id, results});
});
