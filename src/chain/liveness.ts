import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ValidatorBits} from "../pools/validatorBits.ts";

/** Epochs of liveness kept: the API serves the previous, current and next epoch; one more for the turn of an epoch. */
const KEPT_EPOCHS = 4;

/** What a block shows of its validators' activity. */
export interface BlockActivity {
  slot: number;
  proposerIndex: number;
  /** the block's attestations, as indexed attestations */
  attestations: readonly {data: {target: {epoch: number}}; attestingIndices: readonly number[]}[];
}

/**
 * Which validators the node saw active in each recent epoch: block proposers, attesters whose
 * attestation was in an imported block, and attesters whose attestation the pools validated
 * (an attestation counts in its target epoch). One bit per validator for each of the last
 * KEPT_EPOCHS epochs seen, so the record stays small however many validators there are.
 */
export class ValidatorLiveness {
  private readonly byEpoch = new ValidatorBits();
  private latestEpoch = 0;

  record(epoch: number, validatorIndices: Iterable<number>): void {
    if (epoch <= this.latestEpoch - KEPT_EPOCHS) return;
    for (const index of validatorIndices) this.byEpoch.add(epoch, index);
    if (epoch > this.latestEpoch) {
      this.latestEpoch = epoch;
      this.byEpoch.deleteBelow(epoch - KEPT_EPOCHS + 1);
    }
  }

  recordBlock(block: BlockActivity): void {
    this.record(computeEpochAtSlot(block.slot), [block.proposerIndex]);
    for (const att of block.attestations) this.record(att.data.target.epoch, att.attestingIndices);
  }

  /** Whether the validator was seen in `epoch` (false too for epochs no longer or not yet recorded). */
  isLive(epoch: number, validatorIndex: number): boolean {
    return this.byEpoch.has(epoch, validatorIndex);
  }
}
