import {describe, it, expect} from "@jest/globals";
import type {CheckpointHex, ProtoBlock} from "../../../src/forkchoice/index.ts";
import {cp, makeBlock, root} from "./fixtures.ts";
import {generateEvents} from "./diffGenerator.ts";
import {Sides, anchorBlock, payloadHash, replay, type DiffEvent} from "./differential.ts";
import {describeEvents, shrink} from "./shrink.ts";
import {SAFE_SLOTS_TO_UPDATE_JUSTIFIED} from "./lodestarForkChoice.ts";

/**
 * The justified and finalized checkpoints against Lodestar 1.5.1's whole ForkChoice class (its
 * own Store), not only against our transcription of fork-choice.md: the seeded sequences of
 * differential.test.ts compare them after every event. Lodestar 1.5.1 follows fork-choice.md as of
 * v1.2 on every fork it knows (phase0 to capella; later forks change nothing in the checkpoint
 * rules). Two of v1.2's rules were dropped with the bouncing-attack fix (consensus-specs #3290);
 * each is shown here on a minimal sequence with the text of v1.6.1, which sides with us.
 */

const ZERO = cp(0, anchorBlock().blockRoot);
const B = (n: number) => root(0x2000 + n);

function block(slot: number, n: number, parent: string, checkpoints: {j?: CheckpointHex; f?: CheckpointHex; uj?: CheckpointHex; uf?: CheckpointHex} = {}): ProtoBlock {
  const b = makeBlock({slot, root: B(n), parent, justified: checkpoints.j ?? ZERO, finalized: checkpoints.f ?? ZERO, unrealizedJustified: checkpoints.uj, unrealizedFinalized: checkpoints.uf});
  return {...b, executionBlockHash: payloadHash(b.blockRoot)};
}

const add = (b: ProtoBlock): DiffEvent => ({kind: "block", block: b, timely: false, optimistic: false});
const tick = (slot: number): DiffEvent => ({kind: "tick", slot});

describe("justified and finalized checkpoints against Lodestar 1.5.1's ForkChoice", () => {
  it("catches a misreading that ours and the spec transcription share, and prints the smallest sequence", () => {
    // both of ours take a block's pulled-up checkpoints for its realized ones (no compute_pulled_up_tip);
    // Lodestar's ForkChoice gets the blocks as they are
    class TwiceMisread extends Sides {
      constructor() {
        super();
        const truth = new Map<string, ProtoBlock>();
        const onBlock = this.full.onBlock.bind(this.full);
        this.full.onBlock = (b, timely, optimistic) => onBlock(truth.get(b.blockRoot) ?? b, timely, optimistic);
        this.misread = (b) => {
          truth.set(b.blockRoot, b);
          return {...b, unrealizedJustifiedCheckpoint: b.justifiedCheckpoint, unrealizedFinalizedCheckpoint: b.finalizedCheckpoint};
        };
      }
      misread: (b: ProtoBlock) => ProtoBlock;
      override apply(event: DiffEvent): string | null {
        return super.apply(event.kind === "block" ? {...event, block: this.misread(event.block)} : event);
      }
    }
    const events = generateEvents(1, 250);
    expect(replay(events).disagreement).toBeNull();
    const found = replay(events, {makeSides: () => new TwiceMisread()}).disagreement;
    expect(found?.what).toMatch(/^lodestar (justified|finalized)$/);
    const smallest = shrink(events, () => new TwiceMisread());
    // what it takes: a block whose pulled-up checkpoint is ahead of its own, the chain under it, the next epoch
    expect(smallest.events.length).toBeLessThanOrEqual(12);
    const text = describeEvents(smallest.events, smallest.disagreement);
    expect(text).toMatch(/unrealized [1-9]\d*\/b\d+/);
    expect(text).toMatch(/lodestar (justified|finalized) differs: ours \{"epoch":\d+,"root":"b\d+"\}, Lodestar's ForkChoice \{"epoch":[1-9]/);
  });

  it("v1.2's should_update_justified_checkpoint: a conflicting justified checkpoint late in an epoch waits for the next one; v1.6.1 takes it", () => {
    // fork-choice.md v1.6.1, on_block: "update_checkpoints(store, state.current_justified_checkpoint,
    // state.finalized_checkpoint)", and update_checkpoints: "if justified_checkpoint.epoch >
    // store.justified_checkpoint.epoch: store.justified_checkpoint = justified_checkpoint". v1.2 took
    // it only in the first SAFE_SLOTS_TO_UPDATE_JUSTIFIED slots of an epoch or where it descends from
    // the store's, and kept it in best_justified_checkpoint for on_tick at the next epoch otherwise.
    expect(SAFE_SLOTS_TO_UPDATE_JUSTIFIED).toBe(2);
    const events: DiffEvent[] = [
      tick(8),
      add(block(8, 1, ZERO.root)),
      tick(16),
      add(block(16, 2, B(1), {j: cp(1, B(1))})),
      add(block(9, 3, ZERO.root)),
      // three slots into epoch 3: a justified checkpoint on b3's branch, not descending from b1
      tick(27),
      add(block(27, 4, B(3), {j: cp(2, B(3))})),
      tick(32),
    ];
    const strict = replay(events.slice(0, 7), {explain: false});
    expect(strict.disagreement?.what).toBe("lodestar justified");
    const {ours, full} = strict.sides;
    expect(ours.getJustifiedCheckpoint()).toEqual(cp(2, B(3)));
    expect(strict.sides.oracle.store.justified).toEqual(cp(2, B(3)));
    expect(full.justified).toEqual(cp(1, B(1)));
    expect(full.bestJustified).toEqual(cp(2, B(3)));
    // explained, and at the next epoch Lodestar takes it too
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.checkpointRules).toEqual({"v1.2-should-update-justified": 1});
    expect(result.sides.full.justified).toEqual(cp(2, B(3)));
  });

  it("v1.2 reset the justified checkpoint with a new finalized one, to an older epoch; v1.6.1 keeps the newer", () => {
    // fork-choice.md v1.6.1, update_checkpoints: "# Update finalized checkpoint / if
    // finalized_checkpoint.epoch > store.finalized_checkpoint.epoch: store.finalized_checkpoint =
    // finalized_checkpoint": the justified checkpoint moves only to a later epoch. v1.2's on_block
    // also set "store.justified_checkpoint = state.current_justified_checkpoint" there.
    const events: DiffEvent[] = [
      tick(8),
      add(block(8, 1, ZERO.root)),
      tick(17),
      add(block(16, 2, B(1))),
      add(block(17, 3, B(2), {uj: cp(2, B(2))})),
      // b3's pulled-up checkpoint is justified at epoch 3
      tick(25),
      // b4's state finalizes epoch 1 with epoch 1 justified
      add(block(25, 4, B(2), {j: cp(1, B(1)), f: cp(1, B(1))})),
      tick(32),
    ];
    const strict = replay(events.slice(0, 7), {explain: false});
    expect(strict.disagreement?.what).toBe("lodestar justified");
    const {ours, full} = strict.sides;
    expect([ours.getJustifiedCheckpoint(), ours.getFinalizedCheckpoint()]).toEqual([cp(2, B(2)), cp(1, B(1))]);
    expect([full.justified, full.finalized, full.bestJustified]).toEqual([cp(1, B(1)), cp(1, B(1)), cp(2, B(2))]);
    const result = replay(events);
    expect(result.disagreement).toBeNull();
    expect(result.checkpointRules).toEqual({"v1.2-finalized-resets-justified": 1});
    expect(result.sides.full.justified).toEqual(cp(2, B(2)));
  });
});
