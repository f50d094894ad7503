import {describe, expect, it} from "@jest/globals";
import type {fulu} from "@lodestar/types";
import {ColumnProofBatch} from "../../../../src/chain/blobs/columnProofBatch.ts";
import {buildDataColumnSidecars, columnSidecarsKzgValid} from "../../../../src/chain/blobs/sidecars.ts";
import {blobBlock, config} from "./columnFixture.ts";

/** The columns of a block of two real blobs (c-kzg's cells and proofs). */
const {block, blobs, proofs} = blobBlock("column proof batch", 2);
const columns = buildDataColumnSidecars(config, block, blobs, proofs.flat());

/** A batch checker over the real check (verify_cell_kzg_proof_batch), counting the sidecars of each call; flushed when the test says. */
function batchChecker() {
  const calls: number[] = [];
  const flushes: (() => void)[] = [];
  const batch = new ColumnProofBatch(
    (sidecars) => {
      calls.push(sidecars.length);
      return columnSidecarsKzgValid(sidecars);
    },
    (flush) => flushes.push(flush)
  );
  const flush = () => {
    for (const f of flushes.splice(0)) f();
  };
  return {batch, calls, flush};
}

/** A copy of a column whose first cell proof is another column's: its proofs no longer hold. */
function withWrongProof(column: fulu.DataColumnSidecar, other: fulu.DataColumnSidecar): fulu.DataColumnSidecar {
  return {...column, kzgProofs: [other.kzgProofs[0], ...column.kzgProofs.slice(1)]};
}

describe("gossip data columns: cell proofs checked a turn of the event loop at a time", () => {
  it("the columns asked for in one turn are checked in one call; each is valid", async () => {
    const {batch, calls, flush} = batchChecker();
    const answers = columns.slice(0, 40).map((c) => batch.isValid(c));
    flush();
    expect(await Promise.all(answers)).toEqual(Array(40).fill(true));
    expect(calls).toEqual([40]);
  });

  it("a column with a wrong proof fails alone: the others of its batch are valid", async () => {
    const {batch, calls, flush} = batchChecker();
    const asked = [columns[3], withWrongProof(columns[7], columns[8]), columns[9], columns[100]];
    const answers = asked.map((c) => batch.isValid(c));
    flush();
    expect(await Promise.all(answers)).toEqual([true, false, true, true]);
    // the batch, then each column alone
    expect(calls).toEqual([4, 1, 1, 1, 1]);
  });

  it("columns asked for in later turns make batches of their own; one alone is checked alone", async () => {
    const {batch, calls, flush} = batchChecker();
    const first = [batch.isValid(columns[0]), batch.isValid(columns[1])];
    flush();
    const second = batch.isValid(withWrongProof(columns[2], columns[5]));
    flush();
    expect(await Promise.all(first)).toEqual([true, true]);
    expect(await second).toBe(false);
    expect(calls).toEqual([2, 1]);
  });

  it("by default a batch is flushed after the turn it was asked in", async () => {
    const batch = new ColumnProofBatch();
    expect(await Promise.all([batch.isValid(columns[10]), batch.isValid(withWrongProof(columns[11], columns[12]))])).toEqual([true, false]);
  });
});
