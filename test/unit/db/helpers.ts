// Shared by the db tests and by fixtures/batchWriter.ts (which runs outside jest: no jest imports here).
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {devChainConfig} from "../../../src/config/chainConfig.ts";

/** phase0 at genesis, then one fork per epoch: electra from epoch 5 (slot 40 in the minimal preset). */
export const testConfig = devChainConfig({
  secondsPerSlot: 6,
  genesisFork: "phase0",
  forkEpochs: {altair: 1, bellatrix: 2, capella: 3, deneb: 4, electra: 5},
});

export const ELECTRA_SLOT = 40;

export function makeTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "beacon-db-test-"));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, {recursive: true, force: true});
}

/** A recognizable 32-byte root: `n` as 4 big-endian bytes, then `fill`. */
export function testRoot(n: number, fill = 0xab): Uint8Array {
  const root = new Uint8Array(32).fill(fill);
  new DataView(root.buffer).setUint32(0, n);
  return root;
}
