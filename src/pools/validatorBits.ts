import {deleteBelow} from "./util.ts";

/**
 * One bit per validator index for each of a few keys (epochs): which validators were seen. On
 * mainnet every one of a million validators attests once an epoch: a Set of them is a hash table
 * of a million entries an epoch, rebuilt as it grows and traced by every full garbage collection;
 * these bits are 125 KB an epoch, outside the heap.
 */
export class ValidatorBits {
  private readonly byKey = new Map<number, Uint8Array>();

  has(key: number, validatorIndex: number): boolean {
    const bits = this.byKey.get(key);
    const byte = validatorIndex >> 3;
    return bits !== undefined && byte < bits.length && (bits[byte] & (1 << (validatorIndex & 7))) !== 0;
  }

  /** Sets the validator's bit for `key`; false when it was set already. */
  add(key: number, validatorIndex: number): boolean {
    let bits = this.byKey.get(key);
    const byte = validatorIndex >> 3;
    if (bits === undefined || byte >= bits.length) {
      bits = grown(bits, byte + 1);
      this.byKey.set(key, bits);
    }
    const mask = 1 << (validatorIndex & 7);
    if ((bits[byte] & mask) !== 0) return false;
    bits[byte] |= mask;
    return true;
  }

  /** Forgets the keys below `min`. */
  deleteBelow(min: number): void {
    deleteBelow(this.byKey, min);
  }
}

/** A larger copy, doubling so that a growing validator set costs linear time. */
function grown(bits: Uint8Array | undefined, minLength: number): Uint8Array {
  const larger = new Uint8Array(Math.max(minLength, (bits?.length ?? 0) * 2, 128));
  if (bits) larger.set(bits);
  return larger;
}
