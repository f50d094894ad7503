import type {IndexedFailure} from "./errors.ts";
import {routes, type OperationId, type RouteTable} from "./routes/index.ts";
import type {ArgsOf, BodyDef, MetaField, ParamDef, ResultOf, Route, WireFormat} from "./routes/types.ts";
import {EVENT_STREAM_MEDIA_TYPE, readSseEvents} from "./sse.ts";
import {MEDIA_TYPE, isChunked, pieceTexts, type WireRequest, type WireResponse} from "./wire.ts";

/**
 * The API client, derived from the route table: it writes a request with the route's codecs,
 * hands it to a transport (HTTP, or the server's handlers in-process), and reads the answer
 * with the same codecs. Both transports carry the same bytes, so both give the same results.
 */

/** Moves one request: `httpTransport` below, or `inProcessTransport` from ./server/index.ts. */
export type Transport = (route: Route, req: WireRequest) => Promise<WireResponse>;

export interface RequestOptions {
  /** "ssz" asks for SSZ responses and sends SSZ bodies where the route allows them */
  format?: WireFormat;
  /** an event stream's: aborting it closes the stream (its iteration ends) */
  signal?: AbortSignal;
}

/** A non-2xx answer: the HTTP status and the spec's `{code, message, failures?}` body. */
export class ApiClientError extends Error {
  readonly status: number;
  readonly code: number;
  readonly failures?: IndexedFailure[];

  constructor(status: number, body: {code?: number; message?: string; failures?: IndexedFailure[]}) {
    super(body.message ?? `HTTP ${status}`);
    this.name = "ApiClientError";
    this.status = status;
    this.code = body.code ?? status;
    this.failures = body.failures;
  }
}

/**
 * Whether an error answer says the node lacks the route itself (a node built before it), not a
 * resource the route names: 405 or 501, or a 404 whose message is the web framework's "route not
 * found" (`Route GET:/eth/v2/beacon/pool/attestations not found` from fastify-based nodes such as
 * Lodestar; a block or validator that is not there is a 404 with another message).
 */
export function isRouteMissing(err: ApiClientError): boolean {
  return err.status === 405 || err.status === 501 || (err.status === 404 && /^(Route \S+ not found|Not Found)$/i.test(err.message));
}

export interface ApiClient {
  request<K extends OperationId>(operationId: K, args: ArgsOf<RouteTable[K]>, opts?: RequestOptions): Promise<ResultOf<RouteTable[K]>>;
}

const ACCEPT_SSZ = `${MEDIA_TYPE.ssz};q=1.0,${MEDIA_TYPE.json};q=0.9`;
type ArgDef = ParamDef<unknown> | BodyDef<unknown, unknown>;
type MetaDefs = Record<string, MetaField<unknown>>;

export function writeRequest(route: Route, args: Record<string, unknown>, format: WireFormat): WireRequest {
  const req: WireRequest = {params: {}, query: {}, headers: {}};
  for (const [key, def] of Object.entries(route.args as Record<string, ArgDef>)) {
    const value = args[key];
    if (def.in === "body") {
      const ssz = format === "ssz" ? def.ssz : undefined;
      req.headers["content-type"] = MEDIA_TYPE[ssz ? "ssz" : "json"];
      req.body = ssz ? ssz.serialize(value, args) : new TextEncoder().encode(JSON.stringify(def.toJson(value, args)));
      continue;
    }
    const strings = def.codec.format(value);
    if (strings === undefined || strings.length === 0) {
      if (def.in === "path") throw new Error(`${route.operationId}: missing path parameter ${key}`);
      continue;
    }
    if (def.in === "path") req.params[def.name] = strings[0];
    else if (def.in === "query") req.query[def.name] = strings;
    else req.headers[def.name.toLowerCase()] = strings[0];
  }
  const sszResponse = route.response.kind === "data" && route.response.data.ssz !== undefined;
  req.headers.accept = route.response.kind === "events" ? EVENT_STREAM_MEDIA_TYPE : format === "ssz" && sszResponse ? ACCEPT_SSZ : MEDIA_TYPE.json;
  return req;
}

/** A response body as one string (JSON text in pieces joined). */
export function bodyText(body: WireResponse["body"]): string {
  if (isChunked(body)) return Array.from(pieceTexts(body)).join("");
  return body === undefined ? "" : typeof body === "string" ? body : new TextDecoder().decode(body);
}

/** How errors about an answer name its route: `getSpec (GET /eth/v1/config/spec)`. */
function routeName(route: Route): string {
  return `${route.operationId} (${route.method} ${route.path})`;
}

/**
 * An error answer's `{code, message, failures?}`. Bodies of other shapes (a framework's own
 * `{statusCode, error, message}`, a validation report that is a JSON list, plain text) keep
 * their message, or their text as the message.
 */
function errorBody(status: number, text: string): {code?: number; message?: string; failures?: IndexedFailure[]} {
  try {
    const json = JSON.parse(text) as unknown;
    if (typeof json === "object" && json !== null && !Array.isArray(json) && typeof (json as {message?: unknown}).message === "string") return json as never;
  } catch {
    // not JSON: the text is the message
  }
  return {message: text || `HTTP ${status}`};
}

/**
 * The metadata of an answer, field by field: its JSON key (JSON answers), else its header, else
 * what the field's absence means (fields older spec versions lacked). Keys the route does not
 * know are ignored; a field that is missing and required is an error naming it and the route.
 */
function readMeta(route: Route, fields: [string, MetaField<unknown>][], json: Record<string, unknown> | undefined, headers: Record<string, string>): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  for (const [key, field] of fields) {
    const jsonValue = json?.[field.json];
    const header = headers[field.header.toLowerCase()];
    if (jsonValue !== undefined) meta[key] = field.fromJson(jsonValue);
    else if (header !== undefined && header !== "") meta[key] = field.fromHeader(header);
    else if (field.whenAbsent) meta[key] = field.whenAbsent.value;
    else throw new Error(json ? `the answer has no "${field.json}" (nor an ${field.header} header)` : `the answer has no ${field.header} header`);
  }
  return meta;
}

export function readResponse(route: Route, res: WireResponse, signal?: AbortSignal): unknown {
  const headers = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
  if (res.status >= 400) throw new ApiClientError(res.status, errorBody(res.status, bodyText(res.body)));
  const response = route.response;
  if (response.kind === "empty") return undefined;
  if (response.kind === "status") return {data: res.status};
  if (response.kind === "events") {
    if (!res.eventStream) throw new Error(`${route.operationId}: expected an event stream`);
    return {data: readSseEvents(res.eventStream, response.event, signal)};
  }
  const fields = Object.entries(response.meta as MetaDefs);
  let meta: Record<string, unknown>;
  let data: unknown;
  try {
    if ((headers["content-type"] ?? "").startsWith(MEDIA_TYPE.ssz)) {
      meta = readMeta(route, fields, undefined, headers);
      // an empty list serializes to no bytes at all, which the HTTP transport gives as no body
      const bytes = res.body === undefined ? new Uint8Array(0) : res.body;
      if (!response.data.ssz || !(bytes instanceof Uint8Array)) throw new Error("unexpected SSZ response");
      data = response.data.ssz.deserialize(bytes, meta);
    } else {
      const json = JSON.parse(bodyText(res.body)) as Record<string, unknown>;
      if (typeof json !== "object" || json === null) throw new Error("the answer is not a JSON object");
      meta = readMeta(route, fields, json, headers);
      data = response.data.fromJson(response.unwrapped ? json : json.data, meta);
    }
  } catch (e) {
    throw new Error(`${routeName(route)}: ${(e as Error).message}`, {cause: e});
  }
  return fields.length > 0 ? {data, meta} : {data};
}

export function createApiClient(transport: Transport): ApiClient {
  return {
    async request(operationId, args, opts) {
      const route = (routes as Record<string, Route>)[operationId];
      const res = await transport(route, writeRequest(route, args as Record<string, unknown>, opts?.format ?? "json"));
      return readResponse(route, res, opts?.signal) as never;
    },
  };
}

export interface HttpTransportOptions {
  /**
   * A successful JSON answer of a list route (one whose codec reads items one by one) is handed
   * on as it arrives (`textStream`), not read whole first: for the JSON-RPC layer, which streams
   * such results.
   */
  streamLists?: boolean;
  /** The signal of the request about to be made, if any: an aborted request rejects with the signal's reason (a validator client's per-node timeouts). */
  signal?: () => AbortSignal | undefined;
}

/** Requests over HTTP to a beacon node at `baseUrl` (node's fetch). */
export function httpTransport(baseUrl: string, opts: HttpTransportOptions = {}): Transport {
  const base = baseUrl.replace(/\/+$/, "");
  return async (route, req) => {
    const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(req.params[name]));
    const url = new URL(base + path);
    for (const [name, values] of Object.entries(req.query)) {
      for (const value of [values ?? []].flat()) url.searchParams.append(name, value);
    }
    const res = await fetch(url, {method: route.method, headers: req.headers as Record<string, string>, body: req.body, signal: opts.signal?.()});
    const headers = Object.fromEntries(res.headers.entries());
    if ((headers["content-type"] ?? "").startsWith(EVENT_STREAM_MEDIA_TYPE) && res.body) {
      return {status: res.status, headers, eventStream: res.body.pipeThrough(new TextDecoderStream())};
    }
    const response = route.response;
    if (opts.streamLists && res.ok && res.body && (headers["content-type"] ?? "").startsWith(MEDIA_TYPE.json) && response.kind === "data" && response.data.itemFromJson) {
      return {status: res.status, headers, textStream: res.body.pipeThrough(new TextDecoderStream())};
    }
    const body = (headers["content-type"] ?? "").startsWith(MEDIA_TYPE.ssz) ? new Uint8Array(await res.arrayBuffer()) : await res.text();
    return {status: res.status, headers, body: body.length === 0 ? undefined : body};
  };
}
