import type {BodyDef} from "../routes/types.ts";

/**
 * Parsed JSON request bodies kept by their bytes, for body codecs whose value depends on the bytes
 * alone (`BodyDef.keptByBytes`). A validator client sends the same small body again and again (its
 * list of validator indices, every slot): each time it gets the same parsed value, frozen, which
 * a handler may recognize by identity to serve the answer it kept for it (attester duties do).
 * Small bodies only, and a bounded number per codec: a flood of distinct bodies clears them.
 */

const MAX_KEPT_BODY_BYTES = 16 * 1024;
const MAX_KEPT_BODIES = 256;
const keptByCodec = new WeakMap<object, Map<string, unknown>>();

/** The value `parse` gives for `bytes`, or the one it gave for the same bytes before. */
export async function parseKept(def: BodyDef<unknown, unknown>, bytes: Uint8Array, parse: () => Promise<unknown>): Promise<unknown> {
  if (!def.keptByBytes || bytes.length > MAX_KEPT_BODY_BYTES) return parse();
  let kept = keptByCodec.get(def);
  if (!kept) keptByCodec.set(def, (kept = new Map()));
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const known = kept.get(key);
  if (known !== undefined) return known;
  // kept only once parsed: a body refused is parsed (and refused) again each time
  const value = Object.freeze(await parse());
  if (kept.size >= MAX_KEPT_BODIES) kept.clear();
  kept.set(key, value);
  return value;
}
