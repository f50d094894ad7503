import {atPointer, deref, INDEX_FILE, isObject, readYaml, refTarget, specOperation, type Json, type JsonObject} from "./openapi.ts";
import type {SampleRequest} from "./sampleContext.ts";

/**
 * The request constraints the OpenAPI documents declare (`uniqueItems`, `maxItems`, `minItems`,
 * `enum`, `pattern`, `maxLength`) on each operation's parameters and on its JSON body (an array
 * body, or the array properties of an object body), each turned into one request that breaks it:
 * the node must refuse every one with a 400 (a 414 where the spec answers too many ids so).
 *
 * Constraints inside the containers of a body (the hex fields of an attestation, say) are not
 * walked here: those bodies are read by their ssz types, whose own checks the samples exercise.
 */

export interface Violation {
  /** what is broken, named in failures: `query id: uniqueItems` */
  label: string;
  /** the sample request with the one part replaced */
  request: SampleRequest;
  /** the statuses the spec allows for it */
  statuses: number[];
  /** a text the error message must contain (the duplicated value, for `uniqueItems`) */
  mentions?: string;
}

type Location = {in: "path" | "query"; name: string} | {in: "body"; property: string | null};

/** A schema with its `$ref`s (and `allOf` of one part) resolved, to the depth a request constraint sits at. */
function resolve(schema: Json, file: string, depth = 0): JsonObject {
  if (depth > 8 || !isObject(schema)) return {};
  if (typeof schema.$ref === "string") {
    const target = refTarget(schema.$ref, file);
    const {$ref: _, ...rest} = schema;
    return {...resolve(atPointer(readYaml(target.file), target.pointer, schema.$ref), target.file, depth + 1), ...rest};
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "items") out.items = resolve(value, file, depth + 1);
    else if (key === "properties" && isObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, file, depth + 1)]));
    else if (key === "oneOf" && Array.isArray(value)) out.oneOf = value.map((v) => resolve(v, file, depth + 1));
    else out[key] = value;
  }
  return out;
}

/** The enum values a schema allows, its `oneOf` branches included (the validator statuses). */
function enumOf(schema: JsonObject): string[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  if (Array.isArray(schema.oneOf)) {
    const branches = (schema.oneOf as JsonObject[]).map(enumOf);
    if (branches.every((b) => b !== undefined)) return branches.flat() as string[];
  }
  return undefined;
}

/** A string the pattern refuses. */
function breaking(pattern: string): string {
  const candidate = ["0xzz", "not a match", "-1"].find((s) => !new RegExp(pattern).test(s));
  if (candidate === undefined) throw new Error(`no string found that breaks the pattern ${pattern}`);
  return candidate;
}

/** The spec's parameters and JSON body schema of an operation, resolved. */
function operationSchemas(operationId: string): {params: {in: "path" | "query"; name: string; required: boolean; schema: JsonObject}[]; body: JsonObject | undefined} {
  const op = specOperation(operationId);
  if (!op) return {params: [], body: undefined};
  const item = deref(atPointer(readYaml(INDEX_FILE), `/paths/${op.path.replaceAll("~", "~0").replaceAll("/", "~1")}`, op.path), INDEX_FILE);
  const operation = (item.node as JsonObject)[op.method.toLowerCase()] as JsonObject;
  const params = ((operation.parameters ?? []) as Json[]).map((p) => {
    const {node, file} = deref(p, item.file);
    const param = {...(node as JsonObject), ...(isObject(p) ? p : {})};
    return {in: param.in as "path" | "query", name: String(param.name), required: param.required === true, schema: resolve(param.schema ?? {}, file)};
  });
  const media = isObject(operation.requestBody) ? (deref(operation.requestBody, item.file).node as JsonObject).content : undefined;
  const json = isObject(media) ? media["application/json"] : undefined;
  return {params: params.filter((p) => p.in === "path" || p.in === "query"), body: isObject(json) && json.schema ? resolve(json.schema, item.file) : undefined};
}

/** A well-formed item for the location: from the sample if it has one, else from the schema. */
function validItem(base: SampleRequest, at: Location, item: JsonObject): string {
  const given = at.in === "body" ? (at.property === null ? base.body : (base.body as Record<string, unknown> | undefined)?.[at.property]) : at.in === "path" ? base.params?.[at.name] : base.query?.[at.name];
  const first = Array.isArray(given) ? given[0] : given;
  if (first !== undefined && first !== null && typeof first !== "object") return String(first).split(",")[0];
  return enumOf(item)?.[0] ?? "1";
}

/** The sample request with the located part set to `value`. */
function withValue(base: SampleRequest, at: Location, value: string | string[] | undefined): SampleRequest {
  const request: SampleRequest = {...base, params: {...base.params}, query: {...base.query}};
  if (at.in === "body") request.body = at.property === null ? value : {...(base.body as object), [at.property]: value};
  else if (at.in === "path") request.params![at.name] = value as string;
  else request.query![at.name] = value;
  return request;
}

function where(at: Location): string {
  if (at.in === "body") return at.property === null ? "body" : `body ${at.property}`;
  return `${at.in} ${at.name}`;
}

/** One request per constraint of one parameter or body array. */
function violationsAt(base: SampleRequest, at: Location, schema: JsonObject, required: boolean, tooManyStatus: number): Violation[] {
  const out: Violation[] = [];
  const add = (rule: string, value: string | string[] | undefined, statuses = [400], mentions?: string) =>
    out.push({label: `${where(at)}: ${rule}`, request: withValue(base, at, value), statuses, mentions});
  const scalarRules = (item: JsonObject, wrap: (s: string) => string | string[]) => {
    if (enumOf(item)) add("enum", wrap("not_a_value"));
    if (typeof item.pattern === "string") add("pattern", wrap(breaking(item.pattern)));
    if (typeof item.maxLength === "number") add("maxLength", wrap("x".repeat(item.maxLength + 1)));
  };
  if (schema.type !== "array") {
    scalarRules(schema, (s) => s);
    return out;
  }
  const item = isObject(schema.items) ? schema.items : {};
  if (item.type === "object" || (item.type === undefined && isObject(item.properties))) return out;
  const one = validItem(base, at, item);
  if (schema.uniqueItems === true) add("uniqueItems", [one, one], [400], one);
  if (typeof schema.maxItems === "number") {
    const distinct = Array.from({length: schema.maxItems + 1}, (_, i) => String(i));
    add("maxItems", at.in === "query" ? distinct.join(",") : distinct, [tooManyStatus]);
  }
  if (typeof schema.minItems === "number" && schema.minItems > 0 && (at.in === "body" || required)) {
    add("minItems", at.in === "body" ? Array(schema.minItems - 1).fill(one) : undefined);
  }
  scalarRules(item, (s) => [s]);
  return out;
}

/** Every constraint of an operation's request, broken one at a time in its first sample that succeeds. */
export function requestViolations(operationId: string, base: SampleRequest): Violation[] {
  const op = specOperation(operationId);
  if (!op) return [];
  const tooMany = op.responses.has(414) ? 414 : 400;
  const {params, body} = operationSchemas(operationId);
  const out = params.flatMap((p) => violationsAt(base, {in: p.in, name: p.name}, p.schema, p.required, tooMany));
  if (body?.type === "array") out.push(...violationsAt(base, {in: "body", property: null}, body, true, 400));
  else if (body && isObject(body.properties)) {
    for (const [property, schema] of Object.entries(body.properties)) {
      if (isObject(schema) && schema.type === "array") out.push(...violationsAt(base, {in: "body", property}, schema, false, 400));
    }
  }
  return out;
}
