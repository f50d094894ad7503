import {parentPort} from "node:worker_threads";
import {computeCells, loadKzg, recoverCellsAndProofs, verifyCellProofs} from "./kzg.ts";
import type {KzgJob, KzgJobResult} from "./kzgThread.ts";

/**
 * The KZG worker thread (kzgThread.ts): runs the cell work that takes hundreds of milliseconds a
 * blob (recovering cells and their proofs, computing cells) away from the event loop. c-kzg keeps
 * its trusted setup per thread, so this thread loads its own copy first.
 */
loadKzg();

function run(job: KzgJob): KzgJobResult {
  switch (job.op) {
    case "recover": {
      const rows = job.rows.map((row) => recoverCellsAndProofs(row.indices, row.cells));
      return {op: "recover", cells: rows.map((r) => r.cells), proofs: rows.map((r) => r.proofs)};
    }
    case "cells":
      return {op: "cells", cells: job.blobs.map((blob) => computeCells(blob))};
    case "verify":
      return {op: "verify", valid: verifyCellProofs(job.commitments, job.indices, job.cells, job.proofs)};
  }
}

parentPort!.on("message", ({id, job}: {id: number; job: KzgJob}) => {
  try {
    parentPort!.postMessage({id, result: run(job)});
  } catch (e) {
    parentPort!.postMessage({id, error: (e as Error).message});
  }
});
