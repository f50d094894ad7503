import type {ValidatorIndices} from "./validators.ts";

/** The keys a fetch of duties asks for: their generation (ValidatorIndices.generation) and indices. */
export interface KeySet {
  generation: number;
  indices: number[];
}

interface Kept<T> {
  generation: number;
  value: T;
}

/**
 * Duties by epoch (or sync committee period), each kept with the generation of the key set it
 * was fetched for. The beacon node answers for the indices asked when a fetch began; a fetch
 * still in flight when a key is resolved, removed, held or released brings duties of the old
 * key set, and they must not pass for the new one's. So:
 *
 * - `current` gives only what was fetched for the current key set: after a key change every
 *   epoch's duties are stale, and the next poll fetches them again;
 * - one fetch per epoch and key set is in flight: a fetch begun for an earlier key set is not
 *   shared with those who ask after the change;
 * - an answer is kept unless one for a later key set was kept meanwhile (that one is returned).
 */
export class DutyStore<T> {
  private readonly validators: ValidatorIndices;
  private readonly kept = new Map<number, Kept<T>>();
  private readonly inFlight = new Map<number, {generation: number; promise: Promise<T | undefined>}>();

  constructor(validators: ValidatorIndices) {
    this.validators = validators;
  }

  /** What is kept for `key`, if it was fetched for the current key set. */
  current(key: number): T | undefined {
    const kept = this.kept.get(key);
    return kept?.generation === this.validators.generation ? kept.value : undefined;
  }

  /** What was last kept for `key`, for whatever key set (its duties are checked against the keys when performed). */
  latest(key: number): T | undefined {
    return this.kept.get(key)?.value;
  }

  forgetBefore(key: number): void {
    for (const known of this.kept.keys()) if (known < key) this.kept.delete(known);
  }

  /**
   * `load` for the current key set (given what is kept for that key set, which it may return as
   * it is), unless a fetch for it is in flight already. Its result is kept (undefined: nothing
   * is); a failure is passed on and keeps nothing.
   */
  fetch(key: number, load: (keys: KeySet, kept: T | undefined) => Promise<T | undefined>): Promise<T | undefined> {
    const generation = this.validators.generation;
    const pending = this.inFlight.get(key);
    if (pending?.generation === generation) return pending.promise;
    const promise = load({generation, indices: this.validators.indices}, this.current(key)).then((value) => {
      const kept = this.kept.get(key);
      if (kept && kept.generation > generation) return kept.value;
      if (value !== undefined) this.kept.set(key, {generation, value});
      return value;
    });
    const entry = {generation, promise};
    this.inFlight.set(key, entry);
    const done = (): void => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    promise.then(done, done);
    return promise;
  }
}
