import type {PubkeyCache} from "@lodestar/state-transition";

/** bytes of an uncompressed public key (a G1 point's two coordinates) */
export const PUBKEY_BYTES = 96;
/** the table's reserve: more validators than any network has (mainnet about two million) */
const MAX_KEYS = 1 << 23;
/** the table grows by at least this many keys at a time */
const GROWTH_KEYS = 1 << 16;

/**
 * The validators' public keys, uncompressed, by validator index, in shared memory the BLS workers
 * read: a set is sent to a worker as its signers' indices, and the worker reads (and for an
 * aggregate, sums) their keys itself. Summing an aggregate's keys on the event loop (an
 * aggregate-and-proof's 400-500 attesters, about 0.8 ms under load) was a tenth of the main
 * thread under all-subnet gossip (bench:gossip's profile).
 *
 * Written only by the thread that owns the pool, a key at a time as sets first need it (a key
 * never changes once a validator has an index), so there is no copy of all keys at start; a
 * worker reads a key only in a batch posted after it was written (posting orders the writes).
 */
export class PubkeyTable {
  /** growable: workers' views of it grow with it (only address space is reserved up front) */
  readonly keys: SharedArrayBuffer = new (SharedArrayBuffer as GrowableSharedArrayBufferConstructor)(0, {maxByteLength: MAX_KEYS * PUBKEY_BYTES});
  /** which indices are written (one byte each) */
  private written = new Uint8Array(0);
  private readonly bytes = new Uint8Array(this.keys);

  /** Writes the key of each index not yet written, from `cache`; throws for an index the cache does not hold. */
  cover(indices: readonly number[], cache: PubkeyCache): void {
    for (const index of indices) {
      if (index < this.written.length && this.written[index] === 1) continue;
      if (!Number.isSafeInteger(index) || index < 0 || index >= MAX_KEYS) throw new Error(`validator index ${index} out of the key table`);
      const key = cache.getOrThrow(index).toBytes(false);
      this.growTo(index + 1);
      this.bytes.set(key, index * PUBKEY_BYTES);
      this.written[index] = 1;
    }
  }

  private growTo(keys: number): void {
    if (keys <= this.written.length) return;
    const size = Math.min(MAX_KEYS, Math.max(keys, this.written.length + GROWTH_KEYS, this.written.length * 1.5) | 0);
    (this.keys as GrowableSharedArrayBuffer).grow(size * PUBKEY_BYTES);
    const written = new Uint8Array(size);
    written.set(this.written);
    this.written = written;
  }
}

/** A worker's view of the table: the uncompressed key of a validator index. */
export function keyBytesOf(table: Uint8Array, index: number): Uint8Array {
  return table.subarray(index * PUBKEY_BYTES, (index + 1) * PUBKEY_BYTES);
}

/** ES2024's growable SharedArrayBuffer (Node 20 and later), beyond the project's TypeScript lib */
type GrowableSharedArrayBufferConstructor = new (length: number, options: {maxByteLength: number}) => SharedArrayBuffer;
interface GrowableSharedArrayBuffer extends SharedArrayBuffer {
  grow(length: number): void;
}
