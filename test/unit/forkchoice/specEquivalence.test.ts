import {describe, it, expect} from "@jest/globals";
import {ForkChoice, ForkChoiceError, type CheckpointHex} from "../../../src/forkchoice/index.ts";
import {OPTS, SLOTS_PER_EPOCH, genesisBlock, root} from "./fixtures.ts";
import {balancesOf, epochOf, randomBlock, seededInts} from "./randomTree.ts";
import {SpecStore} from "./specStore.ts";

const VALIDATORS = 24;
const balances = (checkpoint: CheckpointHex): number[] => balancesOf(checkpoint, VALIDATORS);

function runScenario(seed: number, steps: number): {heads: Set<string>; checks: number; maxJustifiedEpoch: number} {
  const rand = seededInts(seed);
  const anchor = genesisBlock();
  const fc = new ForkChoice({anchor, currentSlot: 0, opts: OPTS, getJustifiedBalances: balances});
  const spec = new SpecStore(anchor, 0, SLOTS_PER_EPOCH, OPTS.proposerScoreBoostPercent, balances);
  const usedRoots = new Set<string>([anchor.blockRoot]);
  const heads = new Set<string>();
  let checks = 0;
  let maxJustifiedEpoch = 0;

  for (let step = 0; step < steps; step++) {
    const action = rand(100);
    if (action < 15) {
      const slot = spec.currentSlot + 1 + (rand(6) === 0 ? rand(10) : 0);
      fc.onTick(slot);
      spec.onTick(slot);
    } else if (action < 45) {
      const known = [...spec.blocks.values()];
      // mostly extend recent blocks so forks stay near the tip
      const parent = known[Math.max(0, known.length - 1 - rand(Math.min(known.length, 6)))];
      const slot = Math.min(spec.currentSlot, parent.slot + 1 + rand(3));
      let blockRoot = root(rand(2 ** 30));
      while (usedRoots.has(blockRoot)) blockRoot = root(rand(2 ** 30));
      usedRoots.add(blockRoot);
      const block = randomBlock(rand, (r, s) => spec.getAncestor(r, s), parent, slot, blockRoot);
      const isTimely = rand(2) === 0;
      let fcAccepted = true;
      try {
        fc.onBlock(block, {isTimely});
      } catch (e) {
        if (!(e instanceof ForkChoiceError)) throw e;
        fcAccepted = false;
      }
      expect(fcAccepted).toBe(spec.onBlock(block, isTimely));
    } else if (action < 85) {
      const candidates = [...spec.blocks.values()].filter((b) => fc.hasBlock(b.blockRoot));
      const target = candidates[candidates.length - 1 - rand(Math.min(candidates.length, 8))];
      const slot = target.slot + rand(spec.currentSlot - target.slot + 1);
      const validator = rand(VALIDATORS);
      fc.onAttestation(validator, target.blockRoot, epochOf(slot), slot);
      spec.onAttestation(validator, target.blockRoot, epochOf(slot), slot);
    } else if (action < 87) {
      const indices = [rand(VALIDATORS), rand(VALIDATORS)];
      fc.onAttesterSlashing(indices);
      spec.onAttesterSlashing(indices);
    } else if (action < 90) {
      const finalizedSlot = spec.blocks.get(spec.finalized.root)!.slot;
      const descendsFromFinalized = (r: string) => spec.getAncestor(r, finalizedSlot) === spec.finalized.root;
      // random checkpoints can justify one branch and finalize another, which takes >1/3 slashable
      // validators; pruning the justified block away then leaves fork choice without a root
      if (!descendsFromFinalized(spec.justified.root)) continue;
      const removed = fc.prune();
      for (const block of removed) expect([block.blockRoot, descendsFromFinalized(block.blockRoot)]).toEqual([block.blockRoot, false]);
      for (const node of fc.getAllNodes()) expect([node.blockRoot, descendsFromFinalized(node.blockRoot)]).toEqual([node.blockRoot, true]);
    } else {
      const head = fc.updateHead().blockRoot;
      expect(fc.getJustifiedCheckpoint()).toEqual(spec.justified);
      expect(fc.getFinalizedCheckpoint()).toEqual(spec.finalized);
      expect(head).toBe(spec.getHead());
      for (const node of fc.getAllNodes()) {
        expect([node.blockRoot, node.weight]).toEqual([node.blockRoot, spec.getWeight(node.blockRoot)]);
      }
      heads.add(head);
      checks++;
      maxJustifiedEpoch = Math.max(maxJustifiedEpoch, spec.justified.epoch);
    }
  }
  return {heads, checks, maxJustifiedEpoch};
}

describe("ForkChoice agrees with a literal transcription of the spec", () => {
  it("on random block trees, votes, slashings, ticks and prunes", () => {
    let distinctHeads = 0;
    let checks = 0;
    let justifiedProgress = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const result = runScenario(seed, 300);
      distinctHeads += result.heads.size;
      checks += result.checks;
      justifiedProgress += result.maxJustifiedEpoch > 0 ? 1 : 0;
    }
    // the scenarios exercise real head changes and non-genesis justification, not a trivial chain
    expect(checks).toBeGreaterThan(1000);
    expect(distinctHeads).toBeGreaterThan(200);
    expect(justifiedProgress).toBeGreaterThan(30);
  });
});
