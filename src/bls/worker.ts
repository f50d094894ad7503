import {parentPort, workerData} from "node:worker_threads";
import {verifyJobs} from "./verifyJobs.ts";
import {unpackJobs} from "./packedJobs.ts";

/** the pool's key table (pubkeyTable.ts): a view that grows with it */
const keyTable = new Uint8Array((workerData as {keys: SharedArrayBuffer}).keys);

/** A BLS worker thread: verifies the batches the pool (workerPool.ts) sends, one at a time. */
parentPort!.on("message", ({id, packed}: {id: number; packed: ArrayBuffer}) => {
  const jobs = unpackJobs(packed);
  let results: boolean[];
  try {
    results = verifyJobs(jobs, keyTable);
  } catch {
    results = jobs.map(() => false);
  }
  parentPort!.postMessage({id, results});
});
