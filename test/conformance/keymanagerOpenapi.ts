import {fileURLToPath} from "node:url";
import {Ajv2020, type ValidateFunction} from "ajv/dist/2020.js";
import {SchemaBundler, atPointer, deref, isObject, readYaml} from "./openapi.ts";

/**
 * The pinned keymanager API (vendor/keymanager-apis) as JSON Schema validators of request and
 * response bodies, bundled by openapi.ts's bundler as the Beacon API is.
 */

const DIR = fileURLToPath(new URL("../../vendor/keymanager-apis", import.meta.url));
const INDEX_FILE = "keymanager-oapi.yaml";
const DEFS_ID = "keymanager-apis-defs";

type Json = ReturnType<typeof readYaml>;
type JsonObject = {[key: string]: Json};

export interface KeymanagerOperation {
  operationId: string;
  method: string;
  path: string;
  request: JsonObject | null;
  /** JSON response body schemas by status (null: no body) */
  responses: Map<number, JsonObject | null>;
}

function load(): {operations: Map<string, KeymanagerOperation>; ajv: Ajv2020} {
  const bundler = new SchemaBundler(DIR, DEFS_ID);
  const operations = new Map<string, KeymanagerOperation>();
  const schemaOf = (content: Json, file: string): JsonObject | null => {
    const media = isObject(content) ? content["application/json"] : undefined;
    return isObject(media) && isObject(media.schema) ? (bundler.bundle(media.schema, file) as JsonObject) : null;
  };
  for (const [path, ref] of Object.entries(atPointer(readYaml(INDEX_FILE, DIR), "/paths", "paths") as JsonObject)) {
    const item = deref(ref, INDEX_FILE, DIR);
    for (const method of ["get", "post", "delete"]) {
      const op = (item.node as JsonObject)[method];
      if (!isObject(op)) continue;
      const requestBody = isObject(op.requestBody) ? op.requestBody : undefined;
      const request = requestBody ? schemaOf(requestBody.content, item.file) : null;
      const responses = new Map<number, JsonObject | null>();
      for (const [status, response] of Object.entries(op.responses as JsonObject)) {
        const resolved = deref(response, item.file, DIR);
        responses.set(Number(status), schemaOf((resolved.node as JsonObject).content, resolved.file));
      }
      operations.set(String(op.operationId), {operationId: String(op.operationId), method: method.toUpperCase(), path, request, responses});
    }
  }
  const ajv = new Ajv2020({allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false});
  ajv.addKeyword("example");
  ajv.addFormat("hex", /^0x[0-9a-fA-F]*$/);
  ajv.addSchema({$id: DEFS_ID, $defs: bundler.defs});
  return {operations, ajv};
}

let loaded: ReturnType<typeof load> | undefined;
const compiled = new Map<string, ValidateFunction>();
const spec = (): ReturnType<typeof load> => (loaded ??= load());

export function keymanagerOperations(): KeymanagerOperation[] {
  return [...spec().operations.values()];
}

function check(key: string, schema: JsonObject, body: unknown): string[] {
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = spec().ajv.compile(schema)));
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message}`);
}

/** Errors of a request body against the operation's schema (empty when it conforms). */
export function validateKeymanagerRequest(operationId: string, body: unknown): string[] {
  const op = spec().operations.get(operationId);
  if (!op) return [`${operationId} is not in the keymanager spec`];
  if (!op.request) return body === undefined ? [] : [`${operationId} takes no body`];
  return check(`${operationId} request`, op.request, body);
}

/** Errors of a response against the spec: a status it does not declare, a body where it declares none (and the reverse), the schema. */
export function validateKeymanagerResponse(operationId: string, status: number, body: unknown): string[] {
  const op = spec().operations.get(operationId);
  if (!op) return [`${operationId} is not in the keymanager spec`];
  if (!op.responses.has(status)) return [`${operationId}: status ${status} is not among the spec's (${[...op.responses.keys()].join(", ")})`];
  const schema = op.responses.get(status);
  if (!schema) return body === undefined ? [] : [`${operationId}: status ${status} has no body in the spec, got one`];
  if (body === undefined) return [`${operationId}: status ${status} needs a JSON body, got none`];
  return check(`${operationId} ${status}`, schema, body);
}
