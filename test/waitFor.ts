/**
 * Polls `probe` every `everyMs` until it gives a value (not null, undefined or false; a probe
 * that throws counts as not yet, and its last error is told if time runs out). With no heavy
 * imports, so that a bench can use it before it sets the preset @lodestar/params reads.
 */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  for (;;) {
    try {
      const value = await probe();
      if (value !== null && value !== undefined && value !== false) return value;
    } catch (e) {
      lastError = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${lastError})` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
