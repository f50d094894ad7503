/**
 * Long request work (thousands of items in one body) cut into slices of about `budgetMs`, with
 * the event loop let in between, so that the node's own timers and I/O (the slot's block, an
 * import, other requests) wait one slice at most, not the whole request.
 */

/** Default length of one slice of request work. */
export const WORK_SLICE_MS = 5;

/** A check to call between items: it lets the event loop in once `budgetMs` have passed since the last time. */
export function workSlicer(budgetMs = WORK_SLICE_MS): () => Promise<void> | undefined {
  let sliceStart = performance.now();
  return () => {
    if (performance.now() - sliceStart < budgetMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        sliceStart = performance.now();
        resolve();
      })
    );
  };
}

/** `items.map(fn)` in slices. */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T, index: number) => U, budgetMs = WORK_SLICE_MS): Promise<U[]> {
  const next = workSlicer(budgetMs);
  const out: U[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = fn(items[i], i);
    // reading the clock costs about as much as a small item: every 16th item
    if ((i & 15) === 15) await next();
  }
  return out;
}
