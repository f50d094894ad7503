import {graffitiFromText} from "../graffiti.ts";
import type {ForkName} from "@lodestar/params";
import {toHex} from "@lodestar/utils";
import {ApiError, badRequest} from "./errors.ts";
import {DECIMAL, hexOfLength, parseFork} from "./textValues.ts";
import type {ParamCodec} from "./routes/types.ts";

/** The route table's parameter codecs: string <-> value, with a clear 400 on bad input. */

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
