import type {BodyDef} from "../routes/types.ts";
import type {MaybePromise} from "../../maybePromise.ts";

/**
 * Parsed JSON request bodies kept by their bytes, for body codecs whose value depends on the bytes
 * alone (`BodyDef.keptByBytes`). A validator client sends the same small body again and again (its
 * list of validator indices, every slot): each time it gets the same parsed value, frozen, which
 * a handler may recognize by identity to serve the answer it kept for it (attester duties do).
 * Small bodies only, and a bounded number per codec: a flood of distinct bodies clears them.
 */

const MAX_KEPT_BODY_BYTES = 16 * 1024;
const MAX_KEPT_BODIES = 256;
const keptByCodec = new WeakMap<object, {byText: Map<string, unknown>; last: {bytes: Buffer; value: unknown} | null}>();

/** The value `parse` gives for `bytes`, or the one it gave for the same bytes before (at hand, no promise). */
export function parseKept(def: BodyDef<unknown, unknown>, bytes: Uint8Array, parse: () => Promise<unknown>): MaybePromise<unknown> {
  if (!def.keptByBytes || bytes.length > MAX_KEPT_BODY_BYTES) return parse();
  let kept = keptByCodec.get(def);
  if (!kept) keptByCodec.set(def, (kept = {byText: new Map(), last: null}));
  // the body the client sent last time, compared byte by byte: no text made and hashed for it
  const last = kept.last;
  if (last !== null && bytes.length === last.bytes.length && Buffer.compare(bytes, last.bytes) === 0) return last.value;
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const known = kept.byText.get(key);
  if (known !== undefined) {
    kept.last = {bytes: Buffer.from(key, "latin1"), value: known};
    return known;
  }
  return parse().then((parsed) => {
    // kept only once parsed: a body refused is parsed (and refused) again each time
    const value = Object.freeze(parsed);
    if (kept.byText.size >= MAX_KEPT_BODIES) kept.byText.clear();
    kept.byText.set(key, value);
    kept.last = {bytes: Buffer.from(key, "latin1"), value};
    return value;
  });
}
