import {graffitiFromText} from "../graffiti.ts";
import {type CompositeType, ListCompositeType, type Type} from "@chainsafe/ssz";
import {type ForkName, isForkPostDeneb, isForkPostElectra} from "@lodestar/params";
import {sszTypesFor, type BeaconBlock, type SignedBeaconBlock} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {ApiError, badRequest} from "./errors.ts";
import {DECIMAL, hexOfLength, parseFork} from "./textValues.ts";
import type {BodyDef, DataCodec, ParamCodec} from "./routes/types.ts";
import {isShared, jsonBytesOf, jsonTextOf, keptBytesOf} from "./jsonText.ts";
import {mapInSlices} from "./workSlices.ts";

/**
 * The building blocks of the route table: parameter codecs (string <-> value, with a clear
 * 400 on bad input), body and data codecs over ssz types (JSON and SSZ, per fork where the
 * type depends on it), and the metadata fields with their JSON keys and headers.
 */

// ---------------------------------------------------------------- parameters


/** A required single-valued parameter from a parser that returns undefined on bad input. */
export function scalar<T>(label: string | null, parseOne: (s: string) => T | undefined, formatOne: (v: T) => string): ParamCodec<T> {
  return {
    parse(raw, name) {
      if (raw === undefined || raw.length === 0) throw badRequest(`Missing required parameter ${name}`);
      if (raw.length > 1) throw badRequest(`Parameter ${name} given more than once`);
      const value = parseOne(raw[0]);
      if (value === undefined) throw badRequest(`Invalid ${label ?? name}: ${raw[0]}`);
      return value;
    },
    format: (v) => [formatOne(v)],
  };
}

/** Absent (or empty) becomes undefined. */
export function optional<T>(codec: ParamCodec<T>): ParamCodec<T | undefined> {
  return {
    parse: (raw, name) => (raw === undefined || raw.length === 0 || (raw.length === 1 && raw[0] === "") ? undefined : codec.parse(raw, name)),
    format: (v) => (v === undefined ? undefined : codec.format(v)),
  };
}

/**
 * How many validator ids one request may name, read at each request (`--rest-max-query-ids`,
 * `--rest-max-body-ids`): in the query, the spec's `maxItems` (64) by default; in a POST body
 * the spec sets no limit, and 5M ids would hold the event loop for seconds.
 */
export const idLimits = {query: 64, body: 100_000};

/**
 * What the spec's array schema allows: `maxItems` (read at each request: `--rest-max-query-ids`
 * can change it) and `uniqueItems`.
 */
export interface ListLimits {
  maxItems?: () => number;
  unique?: boolean;
}

/**
 * The first item given twice, for the spec's `uniqueItems` (as Nimbus does, a duplicate is
 * refused rather than silently merged). Items are compared by value: hex in any case (`0xAB`,
 * `0xab`) and decimals with leading zeros (`01`, `1`) are one item each.
 */
export function firstDuplicate(items: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const item of items) {
    const key = item.startsWith("0x") ? item.toLowerCase() : DECIMAL.test(item) ? BigInt(item).toString() : item;
    if (seen.has(key)) return item;
    seen.add(key);
  }
  return undefined;
}

/**
 * A list: repeated (`id=1&id=2`) and comma-separated (`id=1,2`) forms; absent is the empty list;
 * more than `maxItems()` is a 414, an item given twice where the spec says `uniqueItems` a 400.
 */
export function list<T>(codec: ParamCodec<T>, limits: ListLimits = {}): ParamCodec<T[]> {
  const {maxItems, unique = false} = limits;
  return {
    parse(raw, name) {
      const items = (raw ?? []).flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s !== "");
      if (maxItems !== undefined && items.length > maxItems()) {
        throw new ApiError(414, `Too many values in ${name}: ${items.length} (at most ${maxItems()})`);
      }
      const duplicate = unique ? firstDuplicate(items) : undefined;
      if (duplicate !== undefined) throw badRequest(`Duplicate value in ${name}: ${duplicate}`);
      return items.map((s) => codec.parse([s], name));
    },
    // one value per occurrence (OpenAPI's default for query arrays, `id=1&id=2`): older nodes do not split commas
    format: (values) => (!values || values.length === 0 ? undefined : values.map((v) => codec.format(v)![0])),
  };
}

const MAX_UINT64 = 2n ** 64n - 1n;

export function parseUint(s: string): number | undefined {
  if (!DECIMAL.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * A uint64 that names data (a slot, a validator or committee index). Every uint64 is a valid id
 * (400 is only for what does not parse): one past 2^53 is carried as the nearest double, which
 * names nothing the node has (a 404, or no match), and is formatted back as a uint64.
 */
export function parseUintId(s: string): number | undefined {
  // up to 15 digits is below 2^53: a number as it is
  if (s.length <= 15) return DECIMAL.test(s) ? Number(s) : undefined;
  if (!DECIMAL.test(s) || s.replace(/^0+/, "").length > 20) return undefined;
  const n = BigInt(s);
  return n <= MAX_UINT64 ? Number(n) : undefined;
}
export function formatUintId(v: number): string {
  if (Number.isSafeInteger(v)) return String(v);
  const n = BigInt(v);
  return String(n > MAX_UINT64 ? MAX_UINT64 : n);
}

export const uint = scalar<number>(null, parseUint, String);
/** A slot or index naming data: see parseUintId. */
export const uintId = scalar<number>(null, parseUintId, formatUintId);
export const uint64 = scalar<bigint>(null, (s) => (DECIMAL.test(s) && BigInt(s) <= MAX_UINT64 ? BigInt(s) : undefined), String);
export const root = scalar<Uint8Array>(null, (s) => hexOfLength(s, 32), toHex);
export const signature = scalar<Uint8Array>(null, (s) => hexOfLength(s, 96), toHex);

export function oneOf<T extends string>(values: readonly T[]): ParamCodec<T> {
  return scalar<T>(null, (s) => (values.includes(s as T) ? (s as T) : undefined), (v) => v);
}

/** A flag that counts when present, and takes no value (`?skip_randao_verification`: the spec's `maxLength: 0`). */
export const flag: ParamCodec<boolean> = {
  parse(raw, name) {
    if (raw?.some((value) => value !== "")) throw badRequest(`Parameter ${name} takes no value`);
    return raw !== undefined && raw.length > 0;
  },
  format: (v) => (v ? [""] : undefined),
};

type NamedStateId = "head" | "genesis" | "finalized" | "justified";
/** A state id: a name, a slot, or a 0x state root (lowercase hex). */
export type StateId = NamedStateId | number | `0x${string}`;
/** A block id: a name, a slot, or a 0x block root (lowercase hex). */
export type BlockId = Exclude<NamedStateId, "justified"> | number | `0x${string}`;

function chainId<T extends StateId>(names: readonly string[]) {
  return (s: string): T | undefined => {
    if (names.includes(s)) return s as T;
    const slot = parseUintId(s);
    if (slot !== undefined) return slot as T;
    return hexOfLength(s, 32) ? (s.toLowerCase() as T) : undefined;
  };
}

const formatChainId = (id: StateId): string => (typeof id === "number" ? formatUintId(id) : id);
export const stateId = scalar<StateId>("state ID", chainId(["head", "genesis", "finalized", "justified"]), formatChainId);
export const blockId = scalar<BlockId>("block ID", chainId(["head", "genesis", "finalized"]), formatChainId);

/** A validator: its index, or its 48-byte public key. */
export type ValidatorId = number | Uint8Array;
export function parseValidatorId(s: string): ValidatorId | undefined {
  return s.startsWith("0x") ? hexOfLength(s, 48) : parseUintId(s);
}
export const formatValidatorId = (v: ValidatorId): string => (typeof v === "number" ? formatUintId(v) : toHex(v));
export const validatorId = scalar<ValidatorId>("validator ID", parseValidatorId, formatValidatorId);

export const fork = scalar<ForkName>("consensus version", parseFork, (v) => v);

/** graffitiFromText, undefined for bad input (the query parameter's codec gives its own message). */
export function parseGraffiti(s: string): Uint8Array | undefined {
  try {
    return graffitiFromText(s);
  } catch {
    return undefined;
  }
}
export const graffiti = scalar<Uint8Array>(null, parseGraffiti, toHex);
export {graffitiFromText};

// ---------------------------------------------------------------- bodies and data

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

export * from "./metaFields.ts";
export {parseFork};
