import {type CompositeType, ListCompositeType, type Type} from "@chainsafe/ssz";
import {type SszLike, listData} from "./codecs.ts";
import {isShared} from "./jsonText.ts";
import {type AsciiWriter, writtenList} from "./asciiJson.ts";
import type {DataCodec} from "./routes/types.ts";
import type {JsonPiece} from "./wire.ts";

/**
 * Large answers without one large string: JSON text produced in pieces (a list item, one
 * element of a state's list) from lazy lists and ssz tree views, and grouped into chunks the
 * server writes as they come. Joined, the pieces are exactly `JSON.stringify(toJson(data))`.
 */

/** About this many characters go to the socket in one write. */
export const CHUNK_CHARS = 16 * 1024;

/** What the JSON and SSZ writers need of an ssz tree view (a state, or a list inside one). */
export interface SszView {
  readonly type: Type<unknown>;
  toValue(): unknown;
  serialize(): Uint8Array;
}

/** A list the handler gives lazily; it can be iterated more than once. */
export function lazyList<T>(items: () => Iterator<T>): Iterable<T> {
  return {[Symbol.iterator]: items};
}

/**
 * Small pieces grouped into chunks of at least `size` characters (the last one may be shorter).
 * Pieces given as bytes are written pieces already (asciiJson.ts): they go on as they are.
 */
export function* coalesce(pieces: Iterable<JsonPiece>, size = CHUNK_CHARS): Generator<JsonPiece> {
  let buffer = "";
  for (const piece of pieces) {
    if (typeof piece !== "string") {
      if (buffer !== "") yield buffer;
      buffer = "";
      yield piece;
      continue;
    }
    buffer += piece;
    if (buffer.length >= size) {
      yield buffer;
      buffer = "";
    }
  }
  if (buffer !== "") yield buffer;
}

/** The text before the data of `{...fields, "data": <data>}`. */
export function envelopeHead(fields: Record<string, unknown>): string {
  const head = JSON.stringify(fields);
  return head === "{}" ? '{"data":' : `${head.slice(0, -1)},"data":`;
}

/** The pieces of `{...fields, "data": <data>}`: the text JSON.stringify gives for that object. */
export function* envelopeChunks(fields: Record<string, unknown>, data: Iterable<JsonPiece>): Generator<JsonPiece> {
  yield envelopeHead(fields);
  yield* data;
  yield "}";
}

/** `{...fields, "data": <dataText>}` as JSON.stringify gives it, around data already in JSON text. */
export function envelopeText(fields: Record<string, unknown>, dataText: string): string {
  return `${envelopeHead(fields)}${dataText}}`;
}

function* arrayChunks<T>(items: Iterable<T>, toJson: (item: T) => unknown): Generator<string> {
  yield "[";
  let first = true;
  for (const item of items) {
    yield (first ? "" : ",") + JSON.stringify(toJson(item));
    first = false;
  }
  yield "]";
}

type FieldEntry = {fieldName: string; fieldType: AnyType; jsonKey: string};
type AnyType = Type<unknown> & {fieldsEntries?: FieldEntry[]; elementType?: AnyType};
/** A tree view (ViewDU) as the walker reads it: container fields by name, list elements by index. */
type AnyView = Record<string, unknown> & {length: number; toValue(): unknown; get(i: number): unknown; getReadonly(i: number): unknown};

function* indices(length: number): Generator<number> {
  for (let i = 0; i < length; i++) yield i;
}

const isView = (x: unknown): x is AnyView => typeof x === "object" && x !== null && typeof (x as AnyView).toValue === "function";
const valueOf = (x: unknown): unknown => (isView(x) ? x.toValue() : x);

/**
 * The JSON of a tree view: a container field by field, a list or vector element by element
 * (each element whole), anything else (roots, bit lists, small values) in one piece.
 */
function* viewChunks(type: AnyType, view: unknown): Generator<string> {
  if (!isView(view)) {
    yield JSON.stringify(type.toJson(view));
  } else if (type.fieldsEntries) {
    yield "{";
    for (const [i, {fieldName, fieldType, jsonKey}] of type.fieldsEntries.entries()) {
      yield `${i === 0 ? "" : ","}${JSON.stringify(jsonKey)}:`;
      yield* viewChunks(fieldType, view[fieldName]);
    }
    yield "}";
  } else if (type.elementType) {
    const element = type.elementType;
    const read = element.isBasic ? (i: number) => view.get(i) : (i: number) => valueOf(view.getReadonly(i));
    yield* arrayChunks(indices(view.length), (i) => element.toJson(read(i)));
  } else {
    yield JSON.stringify(type.toJson(view.toValue()));
  }
}

/** The JSON text of a tree view, in pieces. */
export function viewJsonChunks(view: SszView): Iterable<string> {
  return viewChunks(view.type as AnyType, view);
}

/**
 * Response data the handler gives as an ssz tree view (a whole state, a list of a state): JSON
 * written field by field and element by element, SSZ as the view's own serialization. The
 * client reads the value back with the type `select(meta)`.
 */
export function viewData<D, M>(select: (meta: M) => SszLike<D>, opts: {ssz: boolean}): DataCodec<D, M, SszView> {
  return {
    toJson: (view) => view.type.toJson(view.toValue()),
    toJsonChunks: (view) => viewJsonChunks(view),
    fromJson: (json, meta) => select(meta).fromJson(json),
    ssz: opts.ssz ? {serialize: (view) => view.serialize(), deserialize: (bytes, meta) => select(meta).deserialize(bytes)} : undefined,
  };
}

/**
 * Response data that is a JSON list of ssz values the handler gives lazily (validators,
 * balances): written item by item. `sszLimit` (the spec's list limit) enables SSZ answers;
 * `writeItem`, exactly `JSON.stringify(item.toJson(v))` made faster, writes the items of the
 * largest lists (a million validators, or validator indices in an epoch's committees).
 */
export function streamedListData<T, M>(item: SszLike<T>, sszLimit?: number, writeItem?: (out: AsciiWriter, value: T) => void): DataCodec<T[], M, Iterable<T>> {
  const list = listData<T, M>(item);
  // list items are composite ssz types (containers)
  const sszList = sszLimit === undefined ? undefined : new ListCompositeType(item as unknown as CompositeType<T, unknown, unknown>, sszLimit);
  return {
    toJson: (items) => Array.from(items, (v) => item.toJson(v)),
    // a list the answer cache keeps (an array of shared items) is written once, then served as its bytes
    toJsonChunks: (items) => (isShared(items) ? undefined : writeItem ? writtenList(items, writeItem) : arrayChunks(items, (v) => item.toJson(v))),
    toJsonBytes: (items, meta) => (isShared(items) ? list.toJsonBytes!(items as T[], meta) : undefined),
    fromJson: list.fromJson,
    itemFromJson: (json) => item.fromJson(json),
    ssz: sszList && {serialize: (items) => sszList.serialize(Array.from(items)), deserialize: (bytes) => sszList.deserialize(bytes)},
  };
}
