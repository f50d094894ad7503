import {describe, it, expect} from "@jest/globals";
import {ForkChoice, ForkChoiceError, type CheckpointHex, type ProtoBlock} from "../../../src/forkchoice/index.ts";
import {OPTS, SLOTS_PER_EPOCH, cp, genesisBlock, root} from "./fixtures.ts";
import {SpecStore} from "./specStore.ts";

const VALIDATORS = 24;

/** mulberry32: a small seeded PRNG so every run replays the same scenarios */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Justified balances differ per checkpoint, with some validators inactive (0). */
function balancesOf(checkpoint: CheckpointHex): number[] {
  const salt = parseInt(checkpoint.root.slice(-6), 16) + checkpoint.epoch * 7919;
  return Array.from({length: VALIDATORS}, (_, i) => ((salt + i * 2654435761) >>> 0) % 40 < 4 ? 0 : 16 + (((salt >>> 3) + i * 97) % 17));
}

function epochOf(slot: number): number {
  return Math.floor(slot / SLOTS_PER_EPOCH);
}

/** A block whose checkpoints are plausible for its chain: non-decreasing, realized behind unrealized, roots being its own checkpoint blocks. */
function randomBlock(rand: (n: number) => number, spec: SpecStore, parent: ProtoBlock, slot: number, blockRoot: string): ProtoBlock {
  const epoch = epochOf(slot);
  const checkpointAt = (e: number): CheckpointHex => {
    const start = e * SLOTS_PER_EPOCH;
    return cp(e, slot <= start ? blockRoot : (spec.getAncestor(parent.blockRoot, start) as string));
  };
  const between = (lo: number, hi: number) => (hi <= lo ? lo : lo + rand(hi - lo + 1));
  const justifiedEpoch = rand(3) === 0 ? between(parent.justifiedCheckpoint.epoch, Math.max(0, epoch - 1)) : parent.justifiedCheckpoint.epoch;
  const finalizedEpoch = rand(3) === 0 ? between(parent.finalizedCheckpoint.epoch, Math.max(0, justifiedEpoch - 1)) : parent.finalizedCheckpoint.epoch;
  const unrealizedJustifiedEpoch = rand(2) === 0 ? between(justifiedEpoch, epoch) : justifiedEpoch;
  const unrealizedFinalizedEpoch = rand(3) === 0 ? between(finalizedEpoch, Math.max(finalizedEpoch, unrealizedJustifiedEpoch - 1)) : finalizedEpoch;
  return {
    slot,
    blockRoot,
    parentRoot: parent.blockRoot,
    stateRoot: blockRoot,
    targetRoot: checkpointAt(epoch).root,
    justifiedCheckpoint: checkpointAt(justifiedEpoch),
    finalizedCheckpoint: checkpointAt(Math.min(finalizedEpoch, justifiedEpoch)),
    unrealizedJustifiedCheckpoint: checkpointAt(unrealizedJustifiedEpoch),
    unrealizedFinalizedCheckpoint: checkpointAt(Math.min(unrealizedFinalizedEpoch, unrealizedJustifiedEpoch)),
    executionBlockHash: null,
  };
}

function runScenario(seed: number, steps: number): {heads: Set<string>; checks: number; maxJustifiedEpoch: number} {
  const rand = prng(seed);
  const anchor = genesisBlock();
  const fc = new ForkChoice({anchor, currentSlot: 0, opts: OPTS, getJustifiedBalances: balancesOf});
  const spec = new SpecStore(anchor, 0, SLOTS_PER_EPOCH, OPTS.proposerScoreBoostPercent, balancesOf);
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
      const block = randomBlock(rand, spec, parent, slot, blockRoot);
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
