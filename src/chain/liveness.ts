import {computeEpochAtSlot} from "@lodestar/state-transition";

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
  private readonly byEpoch = new Map<number, Uint8Array>();
  private latestEpoch = 0;

  record(epoch: number, validatorIndices: Iterable<number>): void {
    if (epoch <= this.latestEpoch - KEPT_EPOCHS) return;
    let bits = this.byEpoch.get(epoch) ?? new Uint8Array(0);
    for (const index of validatorIndices) {
      const byte = index >> 3;
      if (byte >= bits.length) bits = grow(bits, byte + 1);
      bits[byte] |= 1 << (index & 7);
    }
    this.byEpoch.set(epoch, bits);
    if (epoch > this.latestEpoch) {
      this.latestEpoch = epoch;
      for (const kept of this.byEpoch.keys()) if (kept <= epoch - KEPT_EPOCHS) this.byEpoch.delete(kept);
    }
  }

  recordBlock(block: BlockActivity): void {
    this.record(computeEpochAtSlot(block.slot), [block.proposerIndex]);
    for (const att of block.attestations) this.record(att.data.target.epoch, att.attestingIndices);
  }

  /** Whether the validator was seen in `epoch` (false too for epochs no longer or not yet recorded). */
  isLive(epoch: number, validatorIndex: number): boolean {
    const bits = this.byEpoch.get(epoch);
    const byte = validatorIndex >> 3;
    return bits !== undefined && byte < bits.length && (bits[byte] & (1 << (validatorIndex & 7))) !== 0;
  }
}

/** A larger copy, doubling so that recording a growing validator set stays linear. */
function grow(bits: Uint8Array, minLength: number): Uint8Array {
  const grown = new Uint8Array(Math.max(minLength, bits.length * 2));
  grown.set(bits);
  return grown;
}
