import {fileURLToPath} from "node:url";
import {Ajv2020, type ValidateFunction} from "ajv/dist/2020.js";
import {type Json, type JsonObject, SchemaBundler, atPointer, isObject, readYaml} from "./openapi.ts";

/**
 * The vendored Web3Signer ETH2 signing API (vendor/web3signer) as checks of the signing request
 * bodies a client sends: the body's `type` picks its schema through the spec's discriminator
 * mapping; ajv checks it against that schema (required fields, types, patterns, one version of
 * each oneOf), and a walk of the same schema names every field the spec does not have (its
 * objects leave additionalProperties open, so ajv alone would let a misspelt field through).
 */

const DIR = fileURLToPath(new URL("../../vendor/web3signer", import.meta.url));
const SIGN_FILE = "signing/paths/sign.yaml";
const DEFS_ID = "web3signer-defs";

interface Loaded {
  ajv: Ajv2020;
  defs: JsonObject;
  /** bundled schema by request type */
  schemas: Map<string, JsonObject>;
}

function load(): Loaded {
  const bundler = new SchemaBundler(DIR, DEFS_ID);
  const body = atPointer(readYaml(SIGN_FILE, DIR), "/post/requestBody/content/application~1json/schema", SIGN_FILE) as JsonObject;
  const mapping = atPointer(body, "/discriminator/mapping", SIGN_FILE) as JsonObject;
  const schemas = new Map<string, JsonObject>();
  for (const [type, ref] of Object.entries(mapping)) schemas.set(type, bundler.bundle({$ref: ref}, SIGN_FILE) as JsonObject);
  const ajv = new Ajv2020({allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false});
  ajv.addKeyword("example");
  // OpenAPI 3.0's discriminator: an annotation here (each oneOf member's enum tells them apart)
  ajv.addKeyword("discriminator");
  ajv.addFormat("uint64", /^[0-9]{1,20}$/);
  ajv.addSchema({$id: DEFS_ID, $defs: bundler.defs});
  return {ajv, defs: bundler.defs, schemas};
}

let loaded: Loaded | undefined;
const compiled = new Map<string, ValidateFunction>();
const spec = (): Loaded => (loaded ??= load());

/** The request types the spec's discriminator maps. */
export function web3signerRequestTypes(): string[] {
  return [...spec().schemas.keys()];
}

/** Errors of a signing request body against the spec (empty when it conforms). */
export function validateSigningRequest(body: unknown): string[] {
  const type = isObject(body as Json) ? (body as JsonObject).type : undefined;
  const schema = typeof type === "string" ? spec().schemas.get(type) : undefined;
  if (!schema) return [`type ${JSON.stringify(type)} is not one of the spec's (${web3signerRequestTypes().join(", ")})`];
  let validate = compiled.get(type as string);
  if (!validate) compiled.set(type as string, (validate = spec().ajv.compile(schema)));
  const errors = validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message}`);
  return [...errors, ...unknownFields(schema, body as Json, "")];
}

/** The schema a `$ref` into the shared definitions names. */
function resolve(schema: JsonObject): JsonObject {
  let node = schema;
  while (typeof node.$ref === "string") node = spec().defs[node.$ref.slice(node.$ref.lastIndexOf("/") + 1)] as JsonObject;
  return node;
}

/** The alternatives a value may match: allOf members merged, every oneOf/anyOf member kept. */
function branches(schema: JsonObject): JsonObject[] {
  const node = resolve(schema);
  const own: JsonObject = {...node};
  delete own.allOf;
  delete own.oneOf;
  delete own.anyOf;
  let out: JsonObject[] = [own];
  for (const member of (node.allOf as JsonObject[] | undefined) ?? []) {
    out = out.flatMap((left) => branches(member).map((right) => mergeProperties(left, right)));
  }
  const alternatives = (node.oneOf ?? node.anyOf) as JsonObject[] | undefined;
  if (alternatives) out = out.flatMap((left) => alternatives.flatMap((alt) => branches(alt).map((right) => mergeProperties(left, right))));
  return out;
}

function mergeProperties(a: JsonObject, b: JsonObject): JsonObject {
  const properties = {...((a.properties as JsonObject) ?? {}), ...((b.properties as JsonObject) ?? {})};
  return {...a, ...b, properties};
}

/** Fields of `value` no branch of `schema` names (checked in the branch that knows most of them). */
function unknownFields(schema: JsonObject, value: Json, at: string): string[] {
  if (Array.isArray(value)) {
    const items = branches(schema).find((b) => isObject(b.items))?.items as JsonObject | undefined;
    return items ? value.flatMap((item, i) => unknownFields(items, item, `${at}/${i}`)) : [];
  }
  if (!isObject(value)) return [];
  let best: string[] | undefined;
  for (const branch of branches(schema)) {
    const properties = (branch.properties as JsonObject | undefined) ?? {};
    if (Object.keys(properties).length === 0) continue;
    const errors = Object.entries(value).flatMap(([key, child]) =>
      key in properties ? unknownFields(properties[key] as JsonObject, child, `${at}/${key}`) : [`${at}/${key} is not a field of the spec's schema`]
    );
    if (best === undefined || errors.length < best.length) best = errors;
  }
  return best ?? [];
}
