/**
 * The JSON text of answers that many requests share, made once. A handler marks a value shared
 * when it keeps it to serve again (the answer cache does, for everything it holds) and promises
 * never to change it afterwards; the server then serializes it once per codec, and later requests
 * of the same value reuse the text. Values not marked are serialized every time, as a fresh value
 * may be built from state that changes. Texts live as long as their values (weak maps), so they
 * go when the answer cache drops the values.
 */

import {toHex} from "@lodestar/utils";

const shared = new WeakSet<object>();
const texts = new WeakMap<object, WeakMap<object, string>>();
const encodings = new WeakMap<object, WeakMap<object, Buffer>>();

/** Whether `value` was marked shared. */
export function isShared(value: unknown): boolean {
  return typeof value === "object" && value !== null && shared.has(value);
}

/** Marks `value` as shared and never changed again; returns it. */
export function markShared<T>(value: T): T {
  if (typeof value === "object" && value !== null) shared.add(value);
  return value;
}

/**
 * The JSON text of `value` by `codec` (any object that stands for one way of writing it): from
 * `compute` the first time, then kept if the value is shared.
 */
export function jsonTextOf(codec: object, value: unknown, compute: () => string): string {
  if (typeof value !== "object" || value === null || !shared.has(value)) return compute();
  let byValue = texts.get(codec);
  if (!byValue) texts.set(codec, (byValue = new WeakMap()));
  let text = byValue.get(value);
  if (text === undefined) byValue.set(value, (text = compute()));
  return text;
}

/**
 * The same JSON text as UTF-8 bytes, kept beside it for a shared value: encoding a text on every
 * request (16 KB of attester duties, say) costs more than the rest of the request's work.
 */
export function jsonBytesOf(codec: object, value: unknown, compute: () => string): Buffer {
  return keptBytesOf(codec, value, () => Buffer.from(jsonTextOf(codec, value, compute)));
}

/** The JSON bytes of `value` by `codec` from `compute` (which may build them from kept parts), kept if the value is shared. */
export function keptBytesOf(codec: object, value: unknown, compute: () => Buffer): Buffer {
  if (typeof value !== "object" || value === null || !shared.has(value)) return compute();
  let byValue = encodings.get(codec);
  if (!byValue) encodings.set(codec, (byValue = new WeakMap()));
  let bytes = byValue.get(value);
  if (bytes === undefined) byValue.set(value, (bytes = compute()));
  return bytes;
}

/** The 0x hex of bytes kept and written again and again (the dependent root of every duties answer), made once per array. */
export function keptHex(bytes: Uint8Array): string {
  let hex = hexOfKept.get(bytes);
  if (hex === undefined) hexOfKept.set(bytes, (hex = toHex(bytes)));
  return hex;
}
const hexOfKept = new WeakMap<Uint8Array, string>();
