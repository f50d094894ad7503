import {readFileSync} from "node:fs";
import {dirname, join, relative, resolve} from "node:path";
import {fileURLToPath} from "node:url";
import {Ajv2020, type ErrorObject, type ValidateFunction} from "ajv/dist/2020.js";
import {KZG_COMMITMENT_INCLUSION_PROOF_DEPTH, SYNC_COMMITTEE_SIZE} from "@lodestar/params";
import {parse} from "yaml";

/**
 * The pinned Beacon API (vendor/beacon-apis) as JSON Schema validators of response bodies.
 *
 * Every `$ref` (across the apis/, types/ and params/ files, through the index's components) is
 * resolved by a small bundler: non-schema objects (path items, responses) are followed and used
 * in place; each schema a `$ref` points at becomes one entry of a shared `$defs` document, named
 * after its file and JSON pointer, and the `$ref` is rewritten to that entry. ajv (JSON Schema
 * 2020-12, which OpenAPI 3.1 uses, so `$ref` beside other keywords applies both) compiles the
 * shared definitions once and each operation's response schema on first use.
 */

export const SPEC_DIR = fileURLToPath(new URL("../../vendor/beacon-apis", import.meta.url));
export const INDEX_FILE = "beacon-node-oapi.yaml";
/** the `$id` of the shared definitions document inside ajv */
const DEFS_ID = "beacon-apis-defs";
const JSON_MEDIA_TYPE = "application/json";

export type Json = null | boolean | number | string | Json[] | {[key: string]: Json};
export type JsonObject = {[key: string]: Json};

export interface SpecOperation {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  /** bundled JSON schemas of the `application/json` response bodies, by status code */
  responses: Map<number, JsonObject | null>;
  /** the response headers the spec marks required, by status code */
  requiredHeaders: Map<number, string[]>;
}

/**
 * Where the spec's text is looser than its intent, or written for one preset only. Each entry
 * sets keywords on the schema at `pointer` of `file` as the file is read.
 */
const ADJUSTMENTS: {file: string; pointer: string; set: JsonObject}[] = [
  // integer strings (Uint64, and Gwei, Slot, Epoch… built on it) are decimal in the consensus
  // JSON encoding; the spec gives them no pattern
  {file: "types/primitive.yaml", pointer: "/Uint64", set: {pattern: "^[0-9]+$"}},
  {file: "types/primitive.yaml", pointer: "/Uint256", set: {pattern: "^[0-9]+$"}},
  {file: "types/primitive.yaml", pointer: "/Int64", set: {pattern: "^-?[0-9]+$"}},
  // fixed lengths the spec writes for the mainnet preset; the node may run the minimal one
  {file: "types/altair/sync_committee.yaml", pointer: "/Altair/SyncCommittee/properties/pubkeys", set: exactly(SYNC_COMMITTEE_SIZE)},
  {file: "types/deneb/blob_sidecar.yaml", pointer: "/Deneb/KZGCommitmentInclusionProof", set: exactly(KZG_COMMITMENT_INCLUSION_PROOF_DEPTH)},
];

function exactly(count: number): JsonObject {
  return {minItems: count, maxItems: count};
}

const yamlCache = new Map<string, Json>();
/** A spec file (relative to `dir`: SPEC_DIR, or another vendored spec's directory), parsed once. */
export function readYaml(file: string, dir = SPEC_DIR): Json {
  const path = join(dir, file);
  let doc = yamlCache.get(path);
  if (doc === undefined) {
    doc = parse(readFileSync(path, "utf8")) as Json;
    for (const adjustment of dir === SPEC_DIR ? ADJUSTMENTS.filter((a) => a.file === file) : []) {
      Object.assign(atPointer(doc, adjustment.pointer, `${file}#${adjustment.pointer}`) as JsonObject, adjustment.set);
    }
    yamlCache.set(path, doc);
  }
  return doc;
}

/** A `$ref` as the spec file it names (relative to `dir`) and the JSON pointer in it. */
export function refTarget(ref: string, fromFile: string, dir = SPEC_DIR): {file: string; pointer: string} {
  const [filePart, pointer = ""] = ref.split("#");
  const file = filePart === "" ? fromFile : relative(dir, resolve(dir, dirname(fromFile), filePart));
  return {file, pointer};
}

export function atPointer(doc: Json, pointer: string, where: string): Json {
  let node = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    const next = node !== null && typeof node === "object" ? (node as JsonObject)[key] : undefined;
    if (next === undefined) throw new Error(`OpenAPI: ${where} does not resolve`);
    node = next;
  }
  return node;
}

export const isObject = (node: Json | undefined): node is JsonObject => node !== null && typeof node === "object" && !Array.isArray(node);

/** Follows `$ref`s of a non-schema object (path item, response) to the object itself and its file. */
export function deref(node: Json, file: string, dir = SPEC_DIR): {node: Json; file: string} {
  for (let hops = 0; isObject(node) && typeof node.$ref === "string"; hops++) {
    if (hops > 20) throw new Error(`OpenAPI: $ref loop at ${file}`);
    const target = refTarget(node.$ref, file, dir);
    node = atPointer(readYaml(target.file, dir), target.pointer, `${target.file}#${target.pointer}`);
    file = target.file;
  }
  return {node, file};
}

/** Gathers every schema a `$ref` reaches into one `$defs` map. */
export class SchemaBundler {
  readonly defs: JsonObject = {};
  private readonly names = new Map<string, string>();
  private readonly dir: string;
  private readonly defsId: string;

  /** `defsId`: the `$id` the shared definitions get in ajv */
  constructor(dir = SPEC_DIR, defsId = DEFS_ID) {
    this.dir = dir;
    this.defsId = defsId;
  }

  /** A copy of `schema` (found in `file`) whose `$ref`s point into the shared definitions. */
  bundle(schema: Json, file: string): Json {
    if (Array.isArray(schema)) return schema.map((item) => this.bundle(item, file));
    if (!isObject(schema)) return schema;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(schema)) {
      out[key] = key === "$ref" && typeof value === "string" ? this.refTo(value, file) : this.bundle(value, file);
    }
    return out;
  }

  private refTo(ref: string, fromFile: string): string {
    const {file, pointer} = refTarget(ref, fromFile, this.dir);
    const key = `${file}#${pointer}`;
    let name = this.names.get(key);
    if (name === undefined) {
      name = key.replace(/\.yaml#\//, ".").replace(/[^A-Za-z0-9.]+/g, "_");
      while (name in this.defs) name += "_";
      this.names.set(key, name);
      this.defs[name] = {}; // claimed before bundling, so self-references terminate
      this.defs[name] = this.bundle(atPointer(readYaml(file, this.dir), pointer, key), file);
    }
    return `${this.defsId}#/$defs/${name}`;
  }
}

const HTTP_METHODS = ["get", "post", "put", "delete"] as const;

function loadSpec(): {operations: Map<string, SpecOperation>; defs: JsonObject; errorSchema: JsonObject} {
  const bundler = new SchemaBundler();
  const operations = new Map<string, SpecOperation>();
  const paths = atPointer(readYaml(INDEX_FILE), "/paths", "paths") as JsonObject;
  for (const [path, ref] of Object.entries(paths)) {
    const item = deref(ref, INDEX_FILE);
    for (const method of HTTP_METHODS) {
      const op = (item.node as JsonObject)[method];
      if (!isObject(op)) continue;
      const responses = new Map<number, JsonObject | null>();
      const requiredHeaders = new Map<number, string[]>();
      for (const [status, response] of Object.entries((op.responses ?? {}) as JsonObject)) {
        const resolved = deref(response, item.file);
        const node = isObject(resolved.node) ? resolved.node : {};
        const media = isObject(node.content) ? node.content[JSON_MEDIA_TYPE] : undefined;
        const schema = isObject(media) && isObject(media.schema) ? (bundler.bundle(media.schema, resolved.file) as JsonObject) : null;
        responses.set(Number(status), schema);
        const headers = Object.entries(isObject(node.headers) ? node.headers : {});
        requiredHeaders.set(Number(status), headers.filter(([, header]) => (deref(header, resolved.file).node as JsonObject).required === true).map(([name]) => name));
      }
      const operationId = String(op.operationId);
      operations.set(operationId, {operationId, method: method.toUpperCase() as SpecOperation["method"], path, responses, requiredHeaders});
    }
  }
  const errorSchema = bundler.bundle({$ref: "#/components/schemas/ErrorMessage"}, INDEX_FILE) as JsonObject;
  return {operations, defs: bundler.defs, errorSchema};
}

function createAjv(defs: JsonObject): Ajv2020 {
  // strictTypes off: the spec leaves `type` implicit beside `required`, `allOf` and `anyOf`
  const ajv = new Ajv2020({allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false});
  ajv.addKeyword("example"); // OpenAPI's annotation
  ajv.addFormat("hex", /^0x[0-9a-fA-F]*$/);
  ajv.addSchema({$id: DEFS_ID, $defs: defs});
  return ajv;
}

let loaded: {operations: Map<string, SpecOperation>; defs: JsonObject; ajv: Ajv2020; errorSchema: JsonObject} | undefined;
const validators = new Map<string, ValidateFunction>();

function spec(): NonNullable<typeof loaded> {
  if (!loaded) {
    const {operations, defs, errorSchema} = loadSpec();
    loaded = {operations, defs, errorSchema, ajv: createAjv(defs)};
  }
  return loaded;
}

/** The spec's operation by operationId; undefined for routes the spec does not have. */
export function specOperation(operationId: string): SpecOperation | undefined {
  return spec().operations.get(operationId);
}

/** Every definition a schema reaches, for a self-contained copy. */
function reachableDefs(schema: Json, defs: JsonObject, out: JsonObject = {}): JsonObject {
  const prefix = `${DEFS_ID}#/$defs/`;
  for (const match of JSON.stringify(schema).matchAll(/"\$ref":"([^"]+)"/g)) {
    const name = match[1].slice(prefix.length);
    if (!match[1].startsWith(prefix) || name in out) continue;
    out[name] = defs[name];
    reachableDefs(defs[name], defs, out);
  }
  return out;
}

/**
 * The JSON Schema of an operation's `application/json` response body at `status`, self-contained
 * (its definitions under `$defs`); undefined when the spec declares no such body.
 */
export function responseSchema(operationId: string, status: number): JsonObject | undefined {
  const schema = specOperation(operationId)?.responses.get(status);
  if (!schema) return undefined;
  const withDefs = {...schema, $defs: reachableDefs(schema, spec().defs)};
  return JSON.parse(JSON.stringify(withDefs).replaceAll(`"${DEFS_ID}#/$defs/`, `"#/$defs/`)) as JsonObject;
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath || "(body)";
  const detail = error.keyword === "enum" ? ` ${JSON.stringify(error.params.allowedValues)}` : "";
  return `${where} ${error.message}${detail}`;
}

/**
 * Errors of a response body against the spec (empty when it conforms). An operation the spec
 * does not have, or a status it does not declare, is itself an error; so is a success body where
 * the spec declares none (and the reverse). An error status whose body the spec leaves undescribed
 * (getHealth's 400) is held to the API's general `ErrorMessage`.
 */
export function validateResponse(operationId: string, status: number, body: unknown): string[] {
  const op = specOperation(operationId);
  if (!op) return [`${operationId} is not in the OpenAPI spec`];
  if (!op.responses.has(status)) return [`${operationId}: status ${status} is not among the spec's (${[...op.responses.keys()].join(", ")})`];
  const schema = op.responses.get(status) ?? (status >= 400 && body !== undefined ? spec().errorSchema : null);
  if (!schema) return body === undefined ? [] : [`${operationId}: status ${status} has no JSON body in the spec, got one`];
  if (body === undefined) return [`${operationId}: status ${status} needs a JSON body, got none`];
  const key = `${operationId} ${status}`;
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = spec().ajv.compile(schema)));
  if (validate(body)) return [];
  return (validate.errors ?? []).map(describeError);
}

/**
 * The spec's example event of each event-stream topic (`data` parsed): the spec gives events no
 * schema, so their examples are what an event's fields are checked against.
 */
export function eventExamples(): Map<string, JsonObject> {
  const item = deref(atPointer(readYaml(INDEX_FILE), "/paths/~1eth~1v1~1events", "events path"), INDEX_FILE);
  const content = atPointer(item.node, "/get/responses/200/content/text~1event-stream/examples", "event examples") as JsonObject;
  const out = new Map<string, JsonObject>();
  for (const example of Object.values(content)) {
    const text = String((example as JsonObject).value);
    const event = /^event: *(\S+)/m.exec(text)?.[1];
    const data = /^data: *(.+)$/m.exec(text)?.[1];
    if (event && data) out.set(event, JSON.parse(data) as JsonObject);
  }
  return out;
}
