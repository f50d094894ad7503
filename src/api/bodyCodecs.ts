import {type CompositeType, ListCompositeType, type Type} from "@chainsafe/ssz";
import {type ForkName, isForkPostDeneb, isForkPostElectra} from "@lodestar/params";
import {sszTypesFor, type BeaconBlock, type SignedBeaconBlock} from "@lodestar/types";
import {ApiError, badRequest} from "./errors.ts";
import type {BodyDef, DataCodec} from "./routes/types.ts";
import {isShared, jsonBytesOf, jsonTextOf, keptBytesOf} from "./jsonText.ts";
import {mapInSlices} from "./workSlices.ts";
import {firstDuplicate} from "./paramCodecs.ts";

/** The route table's body and data codecs over ssz types: JSON and SSZ, per fork where the type depends on it. */

/** What the body and data codecs need of an ssz type (adapters such as block contents provide the same). */
export type SszLike<T> = Pick<Type<T>, "toJson" | "fromJson" | "serialize" | "deserialize">;

/** A JSON list: each item converted with `item`; item errors name their index. */
function listJson<T>(item: SszLike<T>) {
  const itemFromJson = (v: unknown, i: number): T => {
    try {
      return item.fromJson(v);
    } catch (e) {
      throw new Error(`item ${i}: ${(e as Error).message}`);
    }
  };
  const assertArray = (json: unknown): unknown[] => {
    if (!Array.isArray(json)) throw new Error("expected a JSON array");
    return json;
  };
  return {
    toJson: (values: T[]) => values.map((v) => item.toJson(v)),
    fromJson: (json: unknown): T[] => assertArray(json).map(itemFromJson),
    fromJsonInSlices: (json: unknown): Promise<T[]> => mapInSlices(assertArray(json), itemFromJson),
  };
}

/** The item's ssz list type, for SSZ bodies of lists (cached per item type and limit). */
const listTypes = new WeakMap<object, Map<number, SszLike<unknown[]>>>();
function sszListOf<T>(item: SszLike<T>, limit: number): SszLike<T[]> {
  let byLimit = listTypes.get(item);
  if (!byLimit) listTypes.set(item, (byLimit = new Map()));
  let type = byLimit.get(limit);
  // list items are always composite ssz types (containers), never the block-contents adapters
  if (!type) byLimit.set(limit, (type = new ListCompositeType(item as unknown as CompositeType<unknown, never, never>, limit) as SszLike<unknown[]>));
  return type as SszLike<T[]>;
}

/** A block with its blobs and their proofs, as produced (`BlockContents`) and as published (`SignedBlockContents`). */
export interface BlockContents {
  block: BeaconBlock;
  kzgProofs: Uint8Array[];
  blobs: Uint8Array[];
}
export interface SignedBlockContents {
  signedBlock: SignedBeaconBlock;
  kzgProofs: Uint8Array[];
  blobs: Uint8Array[];
}

/** The bare block type seen as contents without blobs (forks before deneb have no contents container). */
function bareBlockAsContents<C, B>(type: SszLike<B>, wrap: (b: B) => C, unwrap: (c: C) => B): SszLike<C> {
  return {
    toJson: (c) => type.toJson(unwrap(c)),
    fromJson: (json) => wrap(type.fromJson(json)),
    serialize: (c) => type.serialize(unwrap(c)),
    deserialize: (bytes) => wrap(type.deserialize(bytes)),
  };
}

export function blockContentsType(fork: ForkName): SszLike<BlockContents> {
  if (isForkPostDeneb(fork)) return forkType(fork, "BlockContents");
  return bareBlockAsContents(forkType<BeaconBlock>(fork, "BeaconBlock"), (block) => ({block, kzgProofs: [], blobs: []}), (c) => c.block);
}

export function signedBlockContentsType(fork: ForkName): SszLike<SignedBlockContents> {
  if (isForkPostDeneb(fork)) return forkType(fork, "SignedBlockContents");
  const bare = forkType<SignedBeaconBlock>(fork, "SignedBeaconBlock");
  return bareBlockAsContents(bare, (signedBlock) => ({signedBlock, kzgProofs: [], blobs: []}), (c) => c.signedBlock);
}

/** The type of a fork-dependent value by its ssz type name (`SignedBeaconBlock`, `Attestation`, ...). */
export function forkType<T>(fork: ForkName, name: string): SszLike<T> {
  const type = (sszTypesFor(fork) as unknown as Record<string, SszLike<T> | undefined>)[name];
  if (!type) throw new Error(`No ssz type ${name} at fork ${fork}`);
  return type;
}

/** A body that is a JSON list of ssz values; `sszLimit` enables SSZ bodies (the spec's list limit). */
export function listBody<T, O>(select: (others: O) => SszLike<T>, sszLimit?: number): BodyDef<T[], O> {
  return {
    in: "body",
    fromJson: (json, others) => listJson(select(others)).fromJson(json),
    fromJsonInSlices: (json, others) => listJson(select(others)).fromJsonInSlices(json),
    toJson: (values, others) => listJson(select(others)).toJson(values),
    ssz:
      sszLimit === undefined
        ? undefined
        : {
            deserialize: (bytes, others) => sszListOf(select(others), sszLimit).deserialize(bytes),
            serialize: (values, others) => sszListOf(select(others), sszLimit).serialize(values),
          },
  };
}

/**
 * A JSON array of strings, each parsed by `parse` (null or absent is the empty list); more than
 * `maxItems` is a 400 before any item is parsed, and so is an item given twice with `unique`.
 */
export function parseStringList<T>(json: unknown, what: string, parse: (s: string) => T | undefined, limits: {maxItems?: number; unique?: boolean} = {}): T[] {
  if (json === undefined || json === null) return [];
  if (!Array.isArray(json)) throw new Error(`${what} must be an array`);
  const {maxItems, unique = false} = limits;
  if (maxItems !== undefined && json.length > maxItems) throw new ApiError(400, `Too many ${what}: ${json.length} (at most ${maxItems})`);
  const values = json.map((s, i) => {
    const value = typeof s === "string" ? parse(s) : undefined;
    if (value === undefined) throw new Error(`invalid ${what} item ${i}: ${JSON.stringify(s)}`);
    return value;
  });
  const duplicate = unique ? firstDuplicate(json as string[]) : undefined;
  if (duplicate !== undefined) throw badRequest(`Duplicate ${what} item: ${duplicate}`);
  return values;
}

/** A body that is a JSON array of strings (validator indices, public keys); fewer than `minItems` is a 400. */
export function stringListBody<T, O>(what: string, parse: (s: string) => T | undefined, format: (v: T) => string, {minItems = 0} = {}): BodyDef<T[], O> {
  return {
    in: "body",
    keptByBytes: true,
    fromJson(json) {
      if (!Array.isArray(json)) throw new Error(`expected a JSON array of ${what}`);
      if (json.length < minItems) throw badRequest(`Expected at least ${minItems} ${what}, got ${json.length}`);
      return parseStringList(json, what, parse);
    },
    toJson: (values) => values.map(format),
  };
}

/** A body that is one ssz value, its type chosen by the other arguments (the `Eth-Consensus-Version` header) or fixed. */
export function valueBody<T, O>(select: (others: O) => SszLike<T>): BodyDef<T, O> {
  return {in: "body", fromJson: (json, others) => select(others).fromJson(json), toJson: (value, others) => select(others).toJson(value)};
}

/**
 * A body that is text: `text/plain` (or form-encoded, field `formField`), or a JSON string.
 * `parse` throws with the reason; an optional body left out is undefined.
 */
export function textBody<T, O>(formField: string, parse: (text: string) => T, format: (value: T) => string, opts: {optional?: boolean} = {}): BodyDef<T, O> {
  return {
    in: "body",
    optional: opts.optional,
    text: {formField, fromText: (text) => parse(text)},
    fromJson(json) {
      if (json === undefined && opts.optional) return undefined as T;
      if (typeof json !== "string") throw new Error("expected a JSON string");
      return parse(json);
    },
    toJson: (value) => (value === undefined ? undefined : format(value)),
  };
}

/** A body parsed by hand (shapes that are not one ssz type). */
export function customBody<T, O>(fromJson: (json: unknown) => T, toJson: (value: T) => unknown): BodyDef<T, O> {
  return {in: "body", fromJson: (json) => fromJson(json), toJson: (value) => toJson(value)};
}

/** Response data of one ssz type, or a type chosen by the metadata (`meta.version`). */
export function sszData<D, M>(select: (meta: M) => SszLike<D>, opts: {ssz: boolean}): DataCodec<D, M> {
  return {
    toJson: (data, meta) => select(meta).toJson(data),
    fromJson: (json, meta) => select(meta).fromJson(json),
    ssz: opts.ssz
      ? {serialize: (data, meta) => select(meta).serialize(data), deserialize: (bytes, meta) => select(meta).deserialize(bytes)}
      : undefined,
  };
}

/** Response data that is a JSON list of ssz values; the text of shared items is made once (jsonText.ts). */
const OPEN_LIST = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE_LIST = Buffer.from("]");

function itemBytes<D>(item: SszLike<D>, data: D[]): Uint8Array[] {
  const parts: Uint8Array[] = [OPEN_LIST];
  data.forEach((v, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(jsonBytesOf(item, v, () => JSON.stringify(item.toJson(v))));
  });
  parts.push(CLOSE_LIST);
  return parts;
}

export function listData<D, M>(item: SszLike<D>): DataCodec<D[], M> {
  const codec = listJson(item);
  return {
    toJson: (data) => codec.toJson(data),
    toJsonText: (data) => `[${data.map((v) => jsonTextOf(item, v, () => JSON.stringify(item.toJson(v)))).join(",")}]`,
    // items built afresh for each request are cheaper to write as one text than to encode one by one;
    // a shared list of shared items (an answer served again) is joined once
    toJsonBytes: (data) => {
      if (data.length === 0 || !isShared(data[0])) return undefined;
      return isShared(data) ? [keptBytesOf(codec, data, () => Buffer.concat(itemBytes(item, data)))] : itemBytes(item, data);
    },
    fromJson: (json) => codec.fromJson(json),
  };
}

/** Response data that is a JSON list of a type chosen by the metadata (`meta.version`). */
export function forkListData<D, M>(select: (meta: M) => SszLike<D>): DataCodec<D[], M> {
  return {toJson: (data, meta) => listJson(select(meta)).toJson(data), fromJson: (json, meta) => listJson(select(meta)).fromJson(json)};
}

/**
 * Response data of an old route that lists objects whose type changed at electra (v1 block
 * attestations): JSON in the type of `meta.version`, as the fork's own route gives it; SSZ in the
 * old type while it can carry the fork's objects, and after that a 406 naming `newerRoute`.
 */
export function preElectraListData<D, M extends {version: ForkName}>(name: string, oldType: SszLike<D>, limit: number, newerRoute: string): DataCodec<D[], M> {
  const json = forkListData<D, M>((meta) => forkType(meta.version, name));
  return {
    ...json,
    ssz: {
      serialize(data, meta) {
        if (isForkPostElectra(meta.version)) throw new ApiError(406, `SSZ of a ${meta.version} ${name} list does not fit this route's pre-electra type: use ${newerRoute}`);
        return sszListOf(oldType, limit).serialize(data);
      },
      deserialize: (bytes) => sszListOf(oldType, limit).deserialize(bytes),
    },
  };
}

/** Response data that already is JSON (the spec map of getSpec). */
export function jsonData<D, M>(): DataCodec<D, M> {
  return {toJson: (data) => data, fromJson: (json) => json as D};
}
