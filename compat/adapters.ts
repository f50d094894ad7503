import type {WireRequest} from "../src/api/wire.ts";
import {paramCount, type LegacyMethod, type LegacyParam} from "./methods.ts";

/**
 * The few places where the legacy interface and REST differ in shape, and the number encoding.
 *
 * Params: positional JSON values become a REST request. A path, query or header argument takes
 * a string or a non-negative integer (a query list also takes an array of them) that the
 * route's own parser accepts; a body takes a JSON object or array (its integers sent as REST's
 * decimal strings), or a string where the route takes a text body (setGraffiti, setLogLevel:
 * sent as `text/plain`). Anything else is -32602, before any REST call.
 *
 * Results: the legacy interface wrote integers as JSON numbers where REST writes decimal
 * strings. A string of the REST `data` becomes a number only where the route's own codec reads
 * that position as an integer (a number or bigint in the value it decodes), so text such as a
 * graffiti, a version or a config value is never touched; every number is written with the
 * exact digits REST gave (JSON.rawJSON), so uint64 values above 2^53 stay exact.
 */

export type Encoding = "legacy" | "rest";
export const ENCODINGS: readonly Encoding[] = ["legacy", "rest"];

/** Node 24's exact-number JSON (not yet in TypeScript's lib). */
type RawJson = {readonly rawJSON: string};
const {rawJSON, isRawJSON} = JSON as unknown as {rawJSON(text: string): RawJson; isRawJSON(value: unknown): value is RawJson};

const DECIMAL = /^(0|[1-9][0-9]*)$/;
const INTEGER_TEXT = /^-?[0-9]+$/;

/** A bad param of a call: answered as -32602, naming the param. */
export class InvalidParamsError extends Error {}

/**
 * JSON.parse reviver for requests: an integer literal beyond 2^53 keeps its exact text (a raw
 * JSON value) instead of being rounded, so a uint64 param or body field arrives unchanged.
 */
export function exactIntegers(_key: string, value: unknown, context?: {source?: string}): unknown {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined && INTEGER_TEXT.test(context.source)) {
    return rawJSON(context.source);
  }
  return value;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (isRawJSON(value)) return `the number ${value.rawJSON}`;
  return typeof value === "string" ? `the string ${JSON.stringify(value)}` : `${typeof value} ${JSON.stringify(value)}`;
}

function invalid(method: LegacyMethod, index: number, param: LegacyParam, problem: string): InvalidParamsError {
  return new InvalidParamsError(`${method.name}: param ${index + 1} (${param.name}) ${problem}`);
}

/** A scalar param as the string REST takes; undefined when it is not a string or a non-negative integer. */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (isRawJSON(value) && DECIMAL.test(value.rawJSON)) return value.rawJSON;
  return undefined;
}

/** The integers of a JSON body as REST writes them: decimal strings (exact ones for big values). */
export function integersToStrings(json: unknown): unknown {
  if (typeof json === "number") return Number.isInteger(json) ? String(json) : json;
  if (isRawJSON(json)) return INTEGER_TEXT.test(json.rawJSON) ? json.rawJSON : json;
  if (Array.isArray(json)) return json.map(integersToStrings);
  if (json !== null && typeof json === "object") return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, integersToStrings(v)]));
  return json;
}

function checkCount(method: LegacyMethod, params: unknown[]): void {
  const {min, max} = paramCount(method);
  if (params.length >= min && params.length <= max) return;
  const names = method.params.map((p) => p.name).join(", ");
  const takes = min === max ? `${max}` : `${min} to ${max}`;
  throw new InvalidParamsError(`${method.name} takes ${takes} param${max === 1 ? "" : "s"} [${names}], got ${params.length}`);
}

/** The REST request of a legacy call; throws InvalidParamsError for a wrong count or type. */
export function buildRequest(method: LegacyMethod, params: unknown[]): WireRequest {
  checkCount(method, params);
  const req: WireRequest = {params: {}, query: {}, headers: {accept: "application/json"}};
  method.params.forEach((param, i) => {
    const value = params[i];
    if (value === undefined || value === null) {
      if (param.required) throw invalid(method, i, param, "is required");
      return;
    }
    const def = param.def;
    if (def.in === "body") {
      if (def.text) {
        if (typeof value !== "string") throw invalid(method, i, param, `must be a string, not ${describe(value)}`);
        req.headers["content-type"] = "text/plain; charset=utf-8";
        req.body = new TextEncoder().encode(value);
        return;
      }
      if (typeof value !== "object") throw invalid(method, i, param, `must be a JSON object or array, not ${describe(value)}`);
      const body = method.oneItemOfList && !Array.isArray(value) ? [value] : value;
      req.headers["content-type"] = "application/json";
      req.body = new TextEncoder().encode(JSON.stringify(integersToStrings(body)));
      return;
    }
    const items = def.in === "query" && Array.isArray(value) ? value : [value];
    const texts = items.map(scalarText);
    if (texts.some((t) => t === undefined)) {
      const wanted = def.in === "query" ? "a string, a non-negative integer or an array of them" : "a string or a non-negative integer";
      throw invalid(method, i, param, `must be ${wanted}, not ${describe(value)}`);
    }
    // the route's own parser: a value REST would refuse is a bad param, answered before any call
    try {
      def.codec.parse(texts as string[], def.name);
    } catch (e) {
      throw invalid(method, i, param, `is invalid: ${(e as Error).message}`);
    }
    if (def.in === "path") req.params[def.name] = texts[0]!;
    else if (def.in === "query") req.query[def.name] = texts as string[];
    else req.headers[def.name.toLowerCase()] = texts[0]!;
  });
  return req;
}

// ---------------------------------------------------------------- results

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x) && !ArrayBuffer.isView(x);
const camelCase = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The decoded value's field for a JSON key: the same key, or its camelCase form (`genesis_time` → `genesisTime`). */
export function valueField(value: unknown, key: string): unknown {
  if (!isObject(value)) return undefined;
  return key in value ? value[key] : value[camelCase(key)];
}

/**
 * The decoded counterpart of a JSON object: the value itself, or, when an adapter wrapped it
 * (a block before deneb read as block contents `{block, ...}`), the wrapped field whose keys match.
 */
function counterpart(json: Record<string, unknown>, value: unknown): unknown {
  const keys = Object.keys(json);
  const matches = (v: unknown) => isObject(v) && keys.some((k) => valueField(v, k) !== undefined);
  if (keys.length === 0 || !isObject(value) || matches(value)) return value;
  return Object.values(value).find(matches);
}

/** REST JSON with every integer (per the decoded `value`) written as an exact JSON number. */
export function toLegacyNumbers(json: unknown, value: unknown): unknown {
  if (typeof json === "string") return (typeof value === "number" || typeof value === "bigint") && DECIMAL.test(json) ? rawJSON(json) : json;
  if (Array.isArray(json)) return json.map((item, i) => toLegacyNumbers(item, Array.isArray(value) ? value[i] : undefined));
  if (isObject(json)) {
    const source = counterpart(json, value);
    return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, toLegacyNumbers(v, valueField(source, k))]));
  }
  return json;
}
