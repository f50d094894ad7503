import type {Route} from "../../src/api/routes/types.ts";
import {eventExamples, specOperation, validateResponse} from "./openapi.ts";
import type {SampleRequest} from "./sampleContext.ts";
import type {SampleResponse} from "./sendSample.ts";

/**
 * What a sample's answer must be: the expected status; for a route in the OpenAPI spec, a body
 * (and required headers) as its schema for that status says; for the product's routes outside
 * the spec, the shape the route table promises; and errors as `{code, message}` everywhere.
 * Returns the problems found (empty when the answer conforms).
 */
export function checkResponse(route: Route, req: SampleRequest, res: SampleResponse): string[] {
  if (res.status !== req.status) return [`status ${res.status}, expected ${req.status}: ${res.text.slice(0, 300)}`];
  if (res.events) return checkEvents(req, res.events);
  let body: unknown;
  if (res.text !== "") {
    const contentType = res.headers.get("content-type") ?? "";
    if (!contentType.startsWith("application/json")) return [`a body of Content-Type "${contentType}", expected application/json`];
    try {
      body = JSON.parse(res.text);
    } catch {
      return [`a body that is not JSON: ${res.text.slice(0, 200)}`];
    }
  }
  const problems = res.status >= 400 ? errorShape(body, req.failures === true) : [];
  const spec = specOperation(route.operationId);
  if (spec) {
    // A request-level 400 (a bad header, a body that is no list) has no items to name, so the
    // `failures` of a batch route's IndexedErrorMessage are required only of item failures.
    const itemLevel = req.failures === true;
    problems.push(...validateResponse(route.operationId, res.status, body).filter((p) => itemLevel || !p.endsWith("required property 'failures'")));
    for (const header of spec.requiredHeaders.get(res.status) ?? []) {
      if (!res.headers.has(header)) problems.push(`no ${header} header, which the spec requires`);
    }
  } else if (res.status < 400) {
    problems.push(...tableShape(route, body));
  }
  return problems;
}

/** The spec's `ErrorMessage` (and `IndexedErrorMessage` for batch submissions). */
function errorShape(body: unknown, failures: boolean): string[] {
  const error = body as {code?: unknown; message?: unknown; failures?: unknown} | undefined;
  const problems: string[] = [];
  if (typeof error?.code !== "number") problems.push(`error body without a numeric code: ${JSON.stringify(body)}`);
  if (typeof error?.message !== "string" || error.message === "") problems.push(`error body without a message: ${JSON.stringify(body)}`);
  if (failures) {
    const list = error?.failures;
    const ok = Array.isArray(list) && list.length > 0 && list.every((f) => typeof f?.index === "number" && typeof f?.message === "string");
    if (!ok) problems.push(`error body without failures [{index, message}]: ${JSON.stringify(body)}`);
  }
  return problems;
}

/** Routes outside the spec: `{data, ...meta}` for data responses, no body otherwise. */
function tableShape(route: Route, body: unknown): string[] {
  if (route.response.kind !== "data") return body === undefined ? [] : [`a body where the route table has none: ${JSON.stringify(body).slice(0, 200)}`];
  if (route.response.unwrapped) return body === undefined ? ["no body"] : [];
  if (typeof body !== "object" || body === null || !("data" in body)) return [`no data in the body: ${JSON.stringify(body)?.slice(0, 200)}`];
  const metaKeys = Object.values(route.response.meta as Record<string, {json: string}>).map((field) => field.json);
  return metaKeys.filter((key) => !(key in body)).map((key) => `no ${key} beside data`);
}

/** Events: of a requested topic, with the fields (and value kinds) of the spec's example of that topic. */
function checkEvents(req: SampleRequest, events: {event: string; data: string}[]): string[] {
  const topics = String(req.query?.topics ?? "").split(",");
  const examples = eventExamples();
  const problems: string[] = [];
  for (const {event, data} of events) {
    if (!topics.includes(event)) problems.push(`event ${event} was not asked for (${topics.join(",")})`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      problems.push(`event ${event}: data is not JSON: ${data.slice(0, 200)}`);
      continue;
    }
    const example = examples.get(event);
    if (example) problems.push(...likeExample(example, parsed, event));
  }
  return problems;
}

const HEX = /^0x[0-9a-fA-F]*$/;
const DECIMAL = /^[0-9]+$/;
/** hex strings of these lengths are fixed-size (version, root, public key, signature) */
const FIXED_HEX_LENGTHS = new Set([10, 66, 98, 194]);

function likeExample(example: unknown, actual: unknown, where: string): string[] {
  if (Array.isArray(example)) {
    if (!Array.isArray(actual)) return [`${where}: expected an array`];
    return example.length > 0 && actual.length > 0 ? likeExample(example[0], actual[0], `${where}[0]`) : [];
  }
  if (typeof example === "object" && example !== null) {
    if (typeof actual !== "object" || actual === null) return [`${where}: expected an object`];
    return Object.entries(example).flatMap(([key, value]) =>
      key in actual ? likeExample(value, (actual as Record<string, unknown>)[key], `${where}.${key}`) : [`${where}: no ${key}`]
    );
  }
  if (typeof example !== typeof actual) return [`${where}: a ${typeof actual}, expected a ${typeof example}`];
  if (typeof example !== "string") return [];
  const text = actual as string;
  if (HEX.test(example)) {
    if (!HEX.test(text)) return [`${where}: ${text} is not 0x hex`];
    if (FIXED_HEX_LENGTHS.has(example.length) && text.length !== example.length) return [`${where}: ${text} is not ${(example.length - 2) / 2} bytes`];
  } else if (DECIMAL.test(example) && !DECIMAL.test(text)) {
    return [`${where}: ${text} is not a decimal string`];
  }
  return [];
}
