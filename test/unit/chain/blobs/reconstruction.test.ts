import {afterAll, describe, expect, it, jest} from "@jest/globals";
import {NUMBER_OF_COLUMNS} from "@lodestar/params";
import {ssz, type fulu} from "@lodestar/types";
import {KzgThread} from "../../../../src/kzg/kzgThread.ts";
import {ReconstructionError, blobsOfColumns, recoverColumns} from "../../../../src/chain/blobs/reconstruction.ts";
import {buildDataColumnSidecars, columnInclusionProofIsValid, columnSidecarsKzgValid} from "../../../../src/chain/blobs/sidecars.ts";
import {blobBlock, config} from "./columnFixture.ts";

/**
 * recover_matrix (fulu das-core.md) on the KZG thread: half of a block's columns, any half, give
 * back every column, cell for cell and proof for proof, as c-kzg computes them from the blobs.
 */

// recovering a blob's cells and proofs is 0.3-0.5 s of native work on a loaded 2-core machine
jest.setTimeout(60_000);

describe("data column reconstruction", () => {
  const kzg = new KzgThread();
  afterAll(() => kzg.close());
  const {block, blobs, cells, proofs} = blobBlock("reconstruction", 2);
  const columns = buildDataColumnSidecars(config, block, blobs, proofs.flat());

  it("the columns built from the blobs are the spec's matrix: cell c of each blob with its proof, verifiable", () => {
    expect(columns).toHaveLength(NUMBER_OF_COLUMNS);
    for (const sidecar of columns) {
      expect(sidecar.column.map((c) => Buffer.from(c).toString("hex"))).toEqual(cells.map((row) => Buffer.from(row[sidecar.index]).toString("hex")));
    }
    expect(columnSidecarsKzgValid(columns)).toBe(true);
  });

  it("rebuilds every column from any half, byte for byte, off the event loop", async () => {
    // given in any order: recover_cells_and_kzg_proofs takes its cell indices ascending
    const halves: Array<[string, fulu.DataColumnSidecar[]]> = [["the odd columns and the last ones", columns.filter((c) => c.index % 2 === 1 || c.index >= 96).slice(16).reverse()]];
    for (const [what, half] of halves) {
      expect(half).toHaveLength(64);
      // the event loop stays free while the thread recovers: on it, each blob would hold the loop for
      // 0.3 s and more, so a 1 ms timer would fire about once a blob. Counted in turns, not in busy
      // time or gaps, which a loaded machine's scheduler stretches whatever runs where.
      let timerTurns = 0;
      const ticker = setInterval(() => timerTurns++, 1);
      const started = performance.now();
      const rebuilt = await recoverColumns(kzg, half);
      const tookMs = performance.now() - started;
      clearInterval(ticker);
      expect(rebuilt).toHaveLength(NUMBER_OF_COLUMNS);
      for (const [i, sidecar] of rebuilt.entries()) {
        expect({what, index: sidecar.index, same: ssz.fulu.DataColumnSidecar.equals(sidecar, columns[i])}).toEqual({what, index: i, same: true});
        // cell and proof for cell and proof, against c-kzg's compute_cells_and_kzg_proofs of the blobs
        for (let row = 0; row < blobs.length; row++) {
          expect(Buffer.from(sidecar.column[row]).equals(cells[row][i])).toBe(true);
          expect(Buffer.from(sidecar.kzgProofs[row]).equals(proofs[row][i])).toBe(true);
        }
      }
      expect(columnInclusionProofIsValid(config, rebuilt[5])).toBe(true);
      console.log(`recovered ${blobs.length} blobs from ${what} in ${tookMs.toFixed(0)} ms; a 1 ms timer fired ${timerTurns} times meanwhile`);
      expect(timerTurns).toBeGreaterThanOrEqual(10 * blobs.length);
    }
  });

  it("gives back the blobs (REST getBlobs) from the first half of the columns as they are, and from any other half recovered", async () => {
    const hex = (blobList: Uint8Array[]) => blobList.map((b) => Buffer.from(b).toString("hex"));
    expect(hex(await blobsOfColumns(kzg, columns.slice(0, 64)))).toEqual(hex(blobs));
    expect(hex(await blobsOfColumns(kzg, columns.slice(64)))).toEqual(hex(blobs));
  });

  it("refuses fewer than half of the columns, duplicates counted once, and columns of two blocks", async () => {
    const fewer = columns.slice(0, 63);
    await expect(recoverColumns(kzg, fewer)).rejects.toThrow(ReconstructionError);
    await expect(recoverColumns(kzg, fewer)).rejects.toThrow("63 distinct columns cannot rebuild the others: recover_matrix needs at least 64 (half of 128)");
    await expect(recoverColumns(kzg, [...fewer, columns[0], columns[1]])).rejects.toThrow(/^63 distinct columns/);
    const other = blobBlock("another block", 1, 4);
    const otherColumns = buildDataColumnSidecars(config, other.block, other.blobs, other.proofs.flat());
    await expect(recoverColumns(kzg, [...columns.slice(0, 63), otherColumns[100]])).rejects.toThrow("column 100 belongs to another block than column 0");
  });
});
