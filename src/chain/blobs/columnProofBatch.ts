import type {fulu} from "@lodestar/types";
import {columnSidecarsKzgValid} from "./sidecars.ts";

interface Asked {
  sidecar: fulu.DataColumnSidecar;
  resolve(valid: boolean): void;
}

/**
 * The KZG cell proofs of gossip data column sidecars, checked a turn of the event loop at a time:
 * the sidecars asked for in one turn (a block's columns arrive together) are checked as one
 * batch (verify_cell_kzg_proof_batch over all their cells). A batch of a block's 128 columns
 * costs about what 6 columns checked one by one do (26 ms against 530 ms of CPU, measured with
 * one blob): a node that keeps every column spent most of its time on them. When a batch fails,
 * each of its sidecars is checked alone, so a bad sidecar fails only itself.
 */
export class ColumnProofBatch {
  private queue: Asked[] = [];
  private readonly verify: (sidecars: fulu.DataColumnSidecar[]) => boolean;
  private readonly defer: (flush: () => void) => void;

  /** `verify`: the batch check (tests count its calls); `defer`: runs the flush after the current turn */
  constructor(verify: (sidecars: fulu.DataColumnSidecar[]) => boolean = columnSidecarsKzgValid, defer: (flush: () => void) => void = setImmediate) {
    this.verify = verify;
    this.defer = defer;
  }

  /** Whether the sidecar's cell proofs hold (verify_data_column_sidecar_kzg_proofs), once its batch is checked. */
  isValid(sidecar: fulu.DataColumnSidecar): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.queue.length === 0) this.defer(() => this.flush());
      this.queue.push({sidecar, resolve});
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 1 && this.verify(batch.map((a) => a.sidecar))) {
      for (const asked of batch) asked.resolve(true);
      return;
    }
    for (const asked of batch) asked.resolve(this.verify([asked.sidecar]));
  }
}
