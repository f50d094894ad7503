import {describe, expect, it} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {startDrivenChain} from "../../../bench/drivenChain.ts";

/**
 * The seeded slice of `npm run bench:memory`: a finalizing dev chain (every block, every
 * attestation) keeps a steady set of cached states and fork choice nodes as it goes on, rather
 * than one more per epoch.
 */
describe("a long-running chain", () => {
  it("holds as many states and fork choice nodes at epoch 12 as at epoch 6, and finalizes", async () => {
    const driven = await startDrivenChain({validators: 64, secondsPerSlot: 4});
    try {
      const at: Record<number, {states: number; bytes: number; nodes: number}> = {};
      for (let slot = 1; slot <= 12 * SLOTS_PER_EPOCH; slot++) {
        await driven.runSlot(slot);
        if (slot % SLOTS_PER_EPOCH === 0) {
          at[slot / SLOTS_PER_EPOCH] = {
            states: driven.chain.cachedStateCount(),
            bytes: driven.chain.cachedStateBytes(),
            nodes: driven.chain.forkChoice.getAllNodes().length,
          };
        }
      }
      expect(driven.chain.getFinalizedCheckpoint().epoch).toBeGreaterThanOrEqual(10);
      expect(at[12].states).toBeLessThanOrEqual(at[6].states);
      expect(at[12].nodes).toBeLessThanOrEqual(at[6].nodes);
      expect(at[12].bytes).toBeLessThan(at[6].bytes * 1.1);
    } finally {
      await driven.close();
    }
  }, 120_000);
});
