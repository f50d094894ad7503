import {describe, it, expect} from "@jest/globals";
import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";
import {cp, makeBlock, root} from "./fixtures.ts";
import {generateEvents} from "./diffGenerator.ts";
import {Sides, anchorBlock, payloadHash, replay, type DiffEvent, type ReplayResult} from "./differential.ts";
import {describeEvents, shrink} from "./shrink.ts";

/**
 * Our fork choice against another team's: Lodestar 1.5.1's proto-array and computeDeltas
 * (@lodestar/fork-choice, the registry's newest), fed by the spec transcription's Store, on seeded
 * event sequences; head, justified and finalized checkpoints, the weight and payload status of
 * every node compared after every event. The same events drive Lodestar's whole ForkChoice class
 * with a Store of its own: its justified and finalized checkpoints are compared after every event,
 * its head and weights where its rules and v1.6.1's agree (lodestarCheckpoints.test.ts shows where
 * they do not). `npm run diff:forkchoice` runs thousands of seeds.
 *
 * Lodestar 1.5.1 implements an older fork-choice.md (v1.2 era) than ours (v1.6.1). Where the two
 * versions' rules differ the head is not compared (counted as not comparable), and the
 * disagreements of known cause are shown below on minimal sequences, each with the spec's text.
 */

const SEEDS = 200;
const EVENTS = 250;

const ZERO = cp(0, anchorBlock().blockRoot);
const B = (n: number) => root(0x1000 + n);

function block(slot: number, n: number, parent: string, checkpoints: {j?: CheckpointHex; f?: CheckpointHex; uj?: CheckpointHex; uf?: CheckpointHex} = {}): ProtoBlock {
  const b = makeBlock({slot, root: B(n), parent, justified: checkpoints.j ?? ZERO, finalized: checkpoints.f ?? ZERO, unrealizedJustified: checkpoints.uj, unrealizedFinalized: checkpoints.uf});
  return {...b, executionBlockHash: payloadHash(b.blockRoot)};
}

function add(b: ProtoBlock, flags: {timely?: boolean; optimistic?: boolean} = {}): DiffEvent {
  return {kind: "block", block: b, timely: flags.timely ?? false, optimistic: flags.optimistic ?? false};
}

const tick = (slot: number): DiffEvent => ({kind: "tick", slot});

describe("ForkChoice agrees with Lodestar 1.5.1's proto-array", () => {
  it(`on ${SEEDS} seeded sequences of ${EVENTS} events`, () => {
    const total = {applied: 0, headsCompared: 0, headsNotComparable: 0, justified: 0, finalized: 0, invalidated: 0, fullCheckpoints: 0, fullHeads: 0};
    for (let seed = 1; seed <= SEEDS; seed++) {
      const events = generateEvents(seed, EVENTS);
      const result: ReplayResult = replay(events);
      if (result.disagreement !== null) {
        const smallest = shrink(events);
        throw new Error(`seed ${seed}: ours and Lodestar disagree; the smallest sequence showing it:\n${describeEvents(smallest.events, smallest.disagreement)}`);
      }
      total.applied += result.applied;
      total.headsCompared += result.headsCompared;
      total.headsNotComparable += result.headsNotComparable;
      total.justified += result.justifiedEpochs > 1 ? 1 : 0;
      total.finalized += result.finalizedEpochs > 0 ? 1 : 0;
      total.invalidated += result.invalidated;
      total.fullCheckpoints += result.fullCheckpointsCompared;
      total.fullHeads += result.fullHeadsCompared;
    }
    // the sequences exercise what they claim to: justification and finalization that move,
    // invalidations, and a head compared on most events
    expect(total.justified).toBeGreaterThan(SEEDS * 0.9);
    expect(total.finalized).toBeGreaterThan(SEEDS * 0.8);
    expect(total.invalidated).toBeGreaterThan(SEEDS);
    expect(total.headsCompared).toBeGreaterThan(total.applied * 0.3);
    // Lodestar's own Store: its checkpoints compared after every event, its head on many
    expect(total.fullCheckpoints).toBe(total.applied);
    expect(total.fullHeads).toBeGreaterThan(total.applied * 0.25);
  });

  it("finds a planted fault and prints the smallest sequence that shows it", () => {
    // our side loses validator 3's attestations: a fault the comparison must catch and shrink
    class Faulty extends Sides {
      override apply(event: DiffEvent): string | null {
        if (event.kind !== "attest" || !event.validators.includes(3)) return super.apply(event);
        for (const v of event.validators) this.oracle.store.onAttestation(v, event.root, Math.floor(event.slot / 8), event.slot);
        return super.apply({...event, validators: event.validators.filter((v) => v !== 3)});
      }
    }
    const events = generateEvents(1, EVENTS);
    const found = replay(events, {makeSides: () => new Faulty()}).disagreement;
    expect(found?.what).toBe("weight");
    const smallest = shrink(events, () => new Faulty());
    // what it takes: a block, validator 3's attestation to it, a later slot
    const kinds = smallest.events.map((e) => e.kind);
    expect(kinds.filter((k) => k === "attest")).toHaveLength(1);
    // (validator 3 may weigh nothing until the justified balances change: then a few more events)
    expect(smallest.events.length).toBeLessThanOrEqual(12);
    const text = describeEvents(smallest.events, smallest.disagreement);
    expect(text).toMatch(/validators [0-9,]*\b3\b[0-9,]* attest to b\d+ at slot \d+/);
    expect(text).toMatch(/weight differs: b\d+: ours \d+, Lodestar \d+/);
  });
});

describe("where ours and Lodestar 1.5.1 differ", () => {
  it("filter_block_tree, changed after Lodestar 1.5.1: a leaf whose voting source is at most two epochs old stays viable", () => {
    // fork-choice.md v1.6.1 filter_block_tree: "The voting source should be either at the same
    // height as the store's justified checkpoint or not more than two epochs ago":
    //   correct_justified = (store.justified_checkpoint.epoch == GENESIS_EPOCH
    //       or voting_source.epoch == store.justified_checkpoint.epoch
    //       or voting_source.epoch + 2 >= current_epoch)
    // Lodestar 1.5.1 (nodeIsViableForHead) wants the voting source equal to the store's justified
    // checkpoint. A pulls the justified checkpoint up to epoch 2; its sibling C, voting source
    // epoch 1, carries the votes.
    const J1 = cp(1, B(1));
    const events: DiffEvent[] = [
      tick(8),
      add(block(8, 1, ZERO.root, {uj: J1})),
      tick(18),
      add(block(16, 2, B(1), {j: J1})),
      add(block(17, 3, B(2), {j: J1, uj: cp(2, B(2))})),
      add(block(18, 4, B(2), {j: J1})),
      {kind: "attest", validators: [0, 1, 2, 3, 4, 5], root: B(4), slot: 18},
      tick(24),
    ];
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.headsNotComparable).toBeGreaterThan(0);
    const {ours, oracle} = result.sides;
    expect(ours.getJustifiedCheckpoint()).toEqual(cp(2, B(2)));
    expect(ours.getHead().blockRoot).toBe(B(4));
    expect(oracle.store.getHead()).toBe(B(4));
    expect(oracle.head).toBe(B(3));
  });

  it("Lodestar takes a block with children for a head when its own checkpoints pass; the spec judges leaves only", () => {
    // fork-choice.md filter_block_tree: "If any children branches contain expected
    // finalized/justified checkpoints, add to filtered block-tree and signal viability to parent"
    // and otherwise "return False": a block with children is viable only through a viable child.
    // Lodestar's nodeLeadsToViableHead also accepts the block itself. The checkpoints here are
    // ones no real chain carries (the child's pulled-up justification behind its parent's), so
    // the generator does not make them: with real ones a child always passes when its parent does.
    const events: DiffEvent[] = [
      tick(22),
      add(block(22, 1, ZERO.root, {uj: cp(2, ZERO.root)})),
      tick(25),
      add(block(25, 2, B(1), {j: cp(2, ZERO.root), uj: cp(2, ZERO.root)})),
      tick(29),
      add(block(29, 3, B(2), {j: cp(2, ZERO.root), uj: cp(3, B(1)), uf: cp(1, ZERO.root)})),
      tick(40),
      add(block(40, 4, B(3), {j: cp(3, B(1)), f: cp(2, ZERO.root)})),
      tick(41),
      add(block(41, 5, B(4), {j: cp(3, B(1)), f: cp(2, ZERO.root), uj: cp(5, B(4))})),
      tick(43),
      add(block(43, 6, B(5), {j: cp(3, B(1)), f: cp(2, ZERO.root)})),
      tick(56),
    ];
    const strict = replay(events, {explain: false});
    expect(strict.disagreement?.what).toBe("head");
    expect(strict.sides.ours.getHead().blockRoot).toBe(B(4));
    expect(strict.sides.oracle.store.getHead()).toBe(B(4));
    expect(strict.sides.oracle.head).toBe(B(5));
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.explained["lodestar-inner-block"]).toBe(1);
  });

  it("no leaf under the justified block is viable: the spec's head is the justified block, Lodestar throws", () => {
    // fork-choice.md get_head: "head = store.justified_checkpoint.root", then only children in the
    // filtered tree are followed; with none it returns the justified block. Lodestar 1.5.1 keeps
    // a best child that its filter has just rejected (maybeUpdateBestChildAndDescendant compares
    // two rejected children by weight) and its findHead throws INVALID_BEST_NODE.
    const events: DiffEvent[] = [
      tick(10),
      add(block(8, 1, ZERO.root, {uj: cp(1, B(1))})),
      add(block(9, 2, B(1))),
      add(block(10, 3, B(1))),
      {kind: "attest", validators: [0, 1, 2, 3, 4, 5], root: B(2), slot: 9},
      tick(11),
      {kind: "attest", validators: [6, 7, 8, 9, 10, 11, 12, 13], root: B(3), slot: 11},
      // two epochs on: justified 1/b1, and b2 and b3 (voting source epoch 0) pass neither filter
      tick(24),
    ];
    const strict = replay(events, {explain: false});
    expect(strict.disagreement?.detail).toContain("INVALID_BEST_NODE");
    expect(strict.sides.ours.getJustifiedCheckpoint()).toEqual(cp(1, B(1)));
    expect(strict.sides.ours.getHead().blockRoot).toBe(B(1));
    expect(strict.sides.oracle.store.getHead()).toBe(B(1));
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.explained["lodestar-no-viable-head"]).toBe(1);
  });

  it("the justified block found INVALID: Lodestar stops choosing a head, ours keeps the justified block", () => {
    // sync/optimistic.md, Re-Orgs: "If the justified checkpoint transitions from NOT_VALIDATED ->
    // INVALIDATED, a consensus engine MAY choose to alert the user and force the application to exit."
    const events: DiffEvent[] = [
      tick(1),
      add(block(1, 1, ZERO.root)),
      tick(16),
      add(block(16, 2, B(1), {uj: cp(2, B(2))}), {optimistic: true}),
      {kind: "invalid", root: B(2), latestValidHash: payloadHash(B(1))},
      tick(24),
    ];
    const strict = replay(events, {explain: false});
    expect(strict.disagreement?.detail).toContain("INVALID_JUSTIFIED_EXECUTION_STATUS");
    expect(strict.sides.ours.getHead().blockRoot).toBe(B(2));
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.explained["lodestar-invalid-justified"]).toBe(1);
  });

  it("INVALID with an unknown latest valid hash: Lodestar leaves the block's descendants as they were", () => {
    // sync/optimistic.md: "When a block transitions from NOT_VALIDATED -> INVALIDATED, all
    // descendants of the block MUST also transition from NOT_VALIDATED -> INVALIDATED."
    // (The sequences never send such an INVALID: the gate keeps to latest valid hashes of ancestors.)
    const sides = new Sides();
    for (const event of [tick(3), add(block(1, 1, ZERO.root), {optimistic: true}), add(block(2, 2, B(1)), {optimistic: true})]) sides.apply(event);
    sides.apply({kind: "invalid", root: B(1), latestValidHash: "0x" + "ab".repeat(32)});
    expect([sides.ours.getValidity(B(1)), sides.ours.getValidity(B(2))]).toEqual(["invalid", "invalid"]);
    expect([sides.oracle.validity(B(1)), sides.oracle.validity(B(2))]).toEqual(["invalid", "optimistic"]);
  });
});
