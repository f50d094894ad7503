import jayson from "jayson/promise/index.js";
import {ApiClientError, bodyText, isRouteMissing, readResponse, type Transport} from "../src/api/client.ts";
import type {Route} from "../src/api/routes/types.ts";
import {isChunked, pieceTexts, type JsonPiece, type WireRequest, type WireResponse} from "../src/api/wire.ts";
import {truncateEcho} from "../src/api/server/limits.ts";
import {parseJsonInSlices} from "../src/api/server/slicedJson.ts";
import {getLogger} from "../src/log.ts";
import {InvalidParamsError, buildRequest, exactIntegers, scalarText, toLegacyNumbers, type Encoding} from "./adapters.ts";
import type {ReadRest} from "./fillers.ts";
import {forkAtSlot} from "./forks.ts";
import {routes} from "../src/api/routes/index.ts";
import {legacyMethods, type ArgDef, type LegacyMethod} from "./methods.ts";
import type {Answer} from "./results.ts";
import type {Registry} from "prom-client";
import {RequestMetrics} from "../src/metrics/requests.ts";
import {StreamedResult, streamedReply, streamedResultOf} from "./streamedResult.ts";
import {BoundedLabel} from "../src/metrics/labels.ts";

/**
 * The legacy JSON-RPC 2.0 interface (jayson) in front of the REST handlers: each method of the
 * table (table.ts) is forwarded, as a REST request, over a Transport — the node's handlers
 * in-process, or `httpTransport(upstream)` for any beacon node's REST API — and the REST
 * answer (its `data`, or what the method's selector picks of it) is the result. No beacon
 * logic lives here.
 */

export interface CompatOptions {
  transport: Transport;
  /** "legacy": integers as JSON numbers (the removed interface); "rest": the REST `data` unchanged */
  encoding: Encoding;
  /** the upstream's REST URL when forwarding over HTTP (named in errors); absent in-process */
  upstream?: string;
  /** counts calls and their latency by method and outcome on this registry (the node's, with --metrics) */
  metricsRegistry?: Registry;
  /** calls in one batch at most (default `DEFAULT_MAX_BATCH`) */
  maxBatch?: number;
  /** the work of one request at most, batch or single call: see `callWork` (default `DEFAULT_MAX_WORK`) */
  maxWork?: number;
  /**
   * characters of one call's REST answer at most (default `DEFAULT_MAX_ANSWER_CHARS`), where its
   * reply is built whole: in a batch, or an answer not streamed (see StreamedResult)
   */
  maxAnswerChars?: number;
}

export const DEFAULT_MAX_BATCH = 100;
export const DEFAULT_MAX_WORK = 4096;
export const DEFAULT_MAX_ANSWER_CHARS = 64 * 1024 * 1024;
/** Calls of a batch started together; the event loop is given back between slices so the chain's timers run. */
const BATCH_SLICE = 16;
/** Requests longer than this are checked against the limits from a plain parse first. */
const PLAIN_PRECHECK_BYTES = 256 * 1024;

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** JSON-RPC's "server error" range: a failure of the beacon node itself (its REST error is in `data`). */
export const SERVER_ERROR = -32000;
export const INVALID_PARAMS = -32602;
export const METHOD_NOT_FOUND = -32601;
export const INTERNAL_ERROR = -32603;
const log = getLogger("rpc");
const rpcError = (code: number, message: string, data?: unknown): RpcError => (data === undefined ? {code, message} : {code, message, data});
const isRpcError = (e: unknown): e is RpcError => typeof e === "object" && e !== null && typeof (e as RpcError).code === "number" && !(e instanceof Error);

/** An upstream that answers an extension endpoint with these lacks it (it is not a beacon-gateway). */
const MISSING_ENDPOINT = new Set([404, 405, 501]);

function restError(method: LegacyMethod, err: ApiClientError, upstream: string | undefined): RpcError {
  const {route} = method;
  const data = {status: err.status, message: err.message, ...(err.failures ? {failures: err.failures} : {})};
  if (upstream !== undefined && route.tag === "Ext" && MISSING_ENDPOINT.has(err.status)) {
    const message = `${method.name} needs ${route.method} ${route.path}, an extension endpoint of beacon-gateway, which the beacon node at ${upstream} does not serve (HTTP ${err.status})`;
    return rpcError(METHOD_NOT_FOUND, message, data);
  }
  // another client's node that predates the route (Lodestar 1.5.1 has no v2 pool routes, say)
  if (upstream !== undefined && isRouteMissing(err)) {
    return rpcError(METHOD_NOT_FOUND, `${method.name} needs ${route.method} ${route.path}, which the beacon node at ${upstream} does not serve (HTTP ${err.status})`, data);
  }
  return rpcError(SERVER_ERROR, err.message, data);
}

/**
 * The text of a REST answer, refused once it is over `maxChars`, for a reply built whole: an
 * answer of hundreds of MB (every validator of a mainnet state) would hold that many times over
 * in memory. An answer in pieces, or arriving over HTTP, is read no further than the limit.
 */
async function boundedAnswerText(method: LegacyMethod, res: WireResponse, maxChars: number): Promise<string> {
  const refuse = (): never => {
    throw rpcError(SERVER_ERROR, `${method.name}: the answer of ${method.route.operationId} is over ${maxChars} characters, more than one JSON-RPC reply carries; the REST API streams it`);
  };
  if (res.textStream === undefined && !isChunked(res.body)) {
    const text = bodyText(res.body);
    if (text.length > maxChars) refuse();
    return text;
  }
  let text = "";
  // breaking out of the loop cancels a stream: the rest is not read
  for await (const piece of res.textStream ?? pieceTexts(res.body as Iterable<JsonPiece>)) {
    text += piece;
    if (text.length > maxChars) refuse();
  }
  return text;
}

/** The REST answer as the legacy result: its `data` (the status, `true` for no body), then the method's selector. */
async function resultOf(method: LegacyMethod, res: WireResponse, encoding: Encoding, maxAnswerChars: number, streaming: boolean): Promise<unknown> {
  const route: Route = method.route;
  const streamed = streaming ? streamedResultOf(method, res, encoding) : undefined;
  if (streamed) return streamed;
  const text = await boundedAnswerText(method, res, maxAnswerChars);
  if (route.response.kind === "status" && method.statusResults.includes(res.status)) {
    return pickResult(method, {json: res.status, value: res.status}, encoding);
  }
  // throws ApiClientError for a REST error; decodes the data with the route's codec otherwise
  const decoded = readResponse(route, {...res, body: text}) as {data: unknown} | number | undefined;
  const response = route.response;
  let answer: Answer;
  if (response.kind === "empty") answer = {json: true, value: true};
  else if (response.kind === "status") answer = {json: res.status, value: res.status};
  else if (response.kind === "data") {
    const body = JSON.parse(text) as Record<string, unknown>;
    answer = {json: response.unwrapped ? body : body.data, value: (decoded as {data: unknown}).data};
  } else throw new Error(`${route.operationId} is not a JSON answer`);
  return pickResult(method, answer, encoding);
}

function pickResult(method: LegacyMethod, base: Answer, encoding: Encoding): unknown {
  const answer = method.result ? method.result.pick(base) : base;
  return encoding === "legacy" ? toLegacyNumbers(answer.json, answer.value) : answer.json;
}

/** Reads another REST answer's `data` over the same transport (for fillers). */
function restReader(transport: Transport): ReadRest {
  return async (operationId, partial) => {
    const route = routes[operationId] as Route;
    const res = await transport(route, {params: {}, query: {}, headers: {accept: "application/json"}, ...partial});
    let text = res.textStream ? "" : bodyText(res.body);
    for await (const piece of res.textStream ?? []) text += piece;
    readResponse(route, {...res, body: text});
    return (JSON.parse(text) as {data: unknown}).data;
  };
}

/** The route arguments the call left out that the method's fillers find. */
async function fillArgs(method: LegacyMethod, req: WireRequest, transport: Transport): Promise<void> {
  for (const [arg, filler] of Object.entries(method.fill)) {
    const def = (method.route.args as Record<string, ArgDef>)[arg]!;
    if (def.in === "body") continue;
    const where = def.in === "path" ? req.params : def.in === "query" ? req.query : req.headers;
    const name = def.in === "header" ? def.name.toLowerCase() : def.name;
    if (where[name] !== undefined) continue;
    const value = await filler.find(req, restReader(transport));
    if (def.in === "query") req.query[name] = [value];
    else if (def.in === "path") req.params[name] = value;
    else req.headers[name] = value;
  }
}

/** The route's `fork` header for a body that did not carry it: the fork of the slot the body names. */
async function setForkOfBody(method: LegacyMethod, req: WireRequest, transport: Transport): Promise<void> {
  if (!method.forkOfBody || req.body === undefined) return;
  const body = JSON.parse(new TextDecoder().decode(req.body)) as unknown;
  const slot = scalarText(method.forkOfBody(body));
  const param = method.params.find((p) => p.def.in === "body")!;
  if (slot === undefined || !/^[0-9]+$/.test(slot)) {
    throw new InvalidParamsError(`${method.name}: param ${method.params.indexOf(param) + 1} (${param.name}) has no slot to tell its fork by`);
  }
  const fork = (method.route.args as Record<string, ArgDef>).fork!;
  const header = fork.in === "header" ? fork.name.toLowerCase() : "eth-consensus-version";
  req.headers[header] = await forkAtSlot(transport, slot);
}

/** Calls one legacy method: its REST request over the transport, and the result (or a JSON-RPC error thrown). */
export async function callLegacyMethod(method: LegacyMethod, params: unknown, opts: CompatOptions, streaming = false): Promise<unknown> {
  if (params !== undefined && !Array.isArray(params)) throw rpcError(INVALID_PARAMS, `${method.name} takes positional params: a JSON array`);
  let req: WireRequest;
  try {
    req = buildRequest(method, params ?? []);
  } catch (e) {
    if (e instanceof InvalidParamsError) throw rpcError(INVALID_PARAMS, e.message);
    throw e;
  }
  let res: WireResponse;
  try {
    await setForkOfBody(method, req, opts.transport);
    await fillArgs(method, req, opts.transport);
    res = await opts.transport(method.route, req);
  } catch (e) {
    if (e instanceof InvalidParamsError) throw rpcError(INVALID_PARAMS, e.message);
    if (e instanceof ApiClientError) throw restError(method, e, opts.upstream);
    const where = opts.upstream ? ` at ${opts.upstream}` : "";
    throw rpcError(SERVER_ERROR, `cannot reach the beacon node${where}: ${(e as Error).message}`);
  }
  try {
    return await resultOf(method, res, opts.encoding, opts.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS, streaming);
  } catch (e) {
    if (e instanceof ApiClientError) throw restError(method, e, opts.upstream);
    if (isRpcError(e)) throw e;
    log.warn({method: method.name, err: e}, "unreadable REST answer");
    throw rpcError(INTERNAL_ERROR, `${method.name}: the REST answer of ${method.route.operationId} could not be read: ${(e as Error).message}`);
  }
}

/**
 * The replies of a batch as JSON text, a slice of calls at a time as they are answered: the
 * event loop is given back between slices, a reader that stops early stops the calls not yet
 * made, and no more than a slice of replies is held. Notifications have no reply.
 */
async function* batchReplies(calls: unknown[], answer: (call: unknown) => Promise<unknown>): AsyncGenerator<string> {
  let opened = false;
  for (let i = 0; i < calls.length; i += BATCH_SLICE) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const reply of await Promise.all(calls.slice(i, i + BATCH_SLICE).map(answer))) {
      if (reply === undefined) continue;
      yield `${opened ? "," : "["}${JSON.stringify(reply)}`;
      opened = true;
    }
  }
  if (opened) yield "]";
}

/** A valid call without an id (or with a null one, as jayson reads it): a notification, which gets no reply. */
function isNotification(call: unknown): boolean {
  return isObject(call) && (call.id === undefined || call.id === null) && invalidRequest(call) === undefined;
}

/** A reply as one text (a batch's pieces joined); undefined for none. */
export async function replyText(reply: RpcReply): Promise<string | undefined> {
  if (reply === undefined || typeof reply === "string") return reply;
  let text = "";
  for await (const piece of reply) text += piece;
  return text;
}

/** The reply to a request: the text of one call's reply, a batch's replies in pieces as they come, or nothing (notifications only). */
export type RpcReply = string | AsyncIterable<string> | undefined;

/** The JSON-RPC server: answers a request (one call or a batch) with its reply. */
export function createJsonRpc(opts: CompatOptions): (requestBody: string | Uint8Array) => Promise<RpcReply> {
  const handlers = (streaming: boolean): Record<string, (params: unknown) => Promise<unknown>> =>
    Object.fromEntries([...legacyMethods.values()].map((method) => [method.name, (params: unknown) => callMethod(method, params, streaming)]));
  const callMethod = async (method: LegacyMethod, params: unknown, streaming: boolean): Promise<unknown> => {
    const started = Date.now();
    try {
      return await callLegacyMethod(method, params, opts, streaming);
    } catch (e) {
      if (isRpcError(e)) throw e;
      log.error({method: method.name, err: e}, "JSON-RPC call failed");
      throw rpcError(INTERNAL_ERROR, `${method.name}: ${(e as Error).message}`);
    } finally {
      log.debug({method: method.name, ms: Date.now() - started}, "JSON-RPC call");
    }
  };
  // a single call's large result may stream; a batch's replies are each built whole
  const singleCalls = new jayson.Server(handlers(true));
  const batchCalls = new jayson.Server(handlers(false));
  const call = async (request: unknown, server = batchCalls): Promise<unknown> =>
    invalidRequest(request) ?? new Promise<unknown>((resolve) => server.call(request as never, (error: unknown, success: unknown) => resolve(error ?? success)));
  const metrics = opts.metricsRegistry ? callMetrics(opts.metricsRegistry) : null;
  const answer = !metrics
    ? call
    : async (request: unknown, server = batchCalls): Promise<unknown> => {
        const started = performance.now();
        const reply = await call(request, server);
        metrics.observe(request, reply, (performance.now() - started) / 1000);
        return reply;
      };
  const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
  const maxWork = opts.maxWork ?? DEFAULT_MAX_WORK;
  /** The -32600 reply of a request over the limits, checked before any call is made; undefined within them. */
  const overLimits = (request: unknown): string | undefined => {
    if (Array.isArray(request) && request.length > maxBatch) {
      return JSON.stringify({jsonrpc: "2.0", id: null, error: rpcError(-32600, `Invalid Request: a batch of ${request.length} calls (at most ${maxBatch})`)});
    }
    const work = (Array.isArray(request) ? request : [request]).reduce((sum: number, r) => sum + callWork(r), 0);
    if (work <= maxWork) return undefined;
    const id = isObject(request) && (typeof request.id === "string" || typeof request.id === "number") ? request.id : null;
    return JSON.stringify({jsonrpc: "2.0", id, error: rpcError(-32600, `Invalid Request: ${work} units of work (at most ${maxWork}: one per call, per item of an array param, per comma-separated value)`)});
  };
  const parseError = (e: unknown): string => JSON.stringify({jsonrpc: "2.0", id: null, error: rpcError(-32700, "Parse error", truncateEcho((e as Error).message))});
  return async (requestBody) => {
    const bytes = typeof requestBody === "string" ? new TextEncoder().encode(requestBody) : requestBody;
    // parsed in slices that let the node's own work in; the exact-integer reviver costs seconds on
    // megabytes of input: a large request is first parsed plainly (much faster) and checked against
    // the limits, and only then read exactly
    if (bytes.length > PLAIN_PRECHECK_BYTES) {
      let plain: unknown;
      try {
        plain = await parseJsonInSlices(bytes);
      } catch (e) {
        return parseError(e);
      }
      const refused = overLimits(plain);
      if (refused !== undefined) return refused;
    }
    let request: unknown;
    try {
      request = await parseJsonInSlices(bytes, {reviver: exactIntegers});
    } catch (e) {
      return parseError(e);
    }
    const refused = overLimits(request);
    if (refused !== undefined) return refused;
    if (Array.isArray(request) && request.length > 0) {
      const replies = batchReplies(request, (each) => answer(each));
      // a batch of notifications only is answered with nothing at all (JSON-RPC 2.0): its calls still run
      if (request.every(isNotification)) {
        for await (const _ of replies);
        return undefined;
      }
      return replies;
    }
    // a notification's result is never read: it is built whole (and dropped) like a batch's, not left streaming
    const reply = (await answer(request, isNotification(request) ? batchCalls : singleCalls)) as {id?: unknown; result?: unknown} | undefined;
    if (reply?.result instanceof StreamedResult) return streamedReply(reply, reply.result);
    return reply === undefined ? undefined : JSON.stringify(reply);
  };
}

/** The outcome label: "ok", or one of the error codes this server answers with ("other" for anything else). */
const OUTCOMES = new BoundedLabel(["ok", ...[-32700, -32600, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR, SERVER_ERROR].map(String)], "other");

/** JSON-RPC calls by method (the table's names; any other is "unknown") and outcome; a notification's has no reply: "ok". */
function callMetrics(registry: Registry) {
  const metrics = new RequestMetrics(registry, {
    prefix: "beacon_gateway_jsonrpc_calls",
    what: "JSON-RPC calls",
    label: "method",
    known: [...legacyMethods.values()].map((m) => m.name),
    other: "unknown",
  });
  return {
    observe(request: unknown, reply: unknown, seconds: number): void {
      const method = isObject(request) && typeof request.method === "string" ? request.method : undefined;
      const error = isObject(reply) && isObject(reply.error) ? reply.error.code : undefined;
      metrics.observe(method, OUTCOMES.of(error === undefined ? "ok" : String(error)), seconds);
    },
  };
}

/**
 * What a call costs, counted without doing it: 1, plus one per item of an array param, plus one
 * per comma-separated value of a string param (ids may come either way). An object param (a
 * block, say) counts 1: its size is bounded by the body limit.
 */
export function callWork(request: unknown): number {
  if (!isObject(request) || !Array.isArray(request.params)) return 1;
  let work = 1;
  for (const param of request.params as unknown[]) {
    const items = Array.isArray(param) ? param : [param];
    work += items.length;
    for (const item of items) if (typeof item === "string") work += countCommas(item);
  }
  return work;
}

function countCommas(text: string): number {
  let n = 0;
  for (let i = text.indexOf(","); i >= 0; i = text.indexOf(",", i + 1)) n++;
  return n;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * The -32600 reply to a request object that is not a valid call; undefined for a valid one. Its
 * `id` is the request's when that can be read (a string, a number or null), as common JSON-RPC
 * servers answer, and null otherwise.
 */
function invalidRequest(request: unknown): object | undefined {
  const problem = !isObject(request)
    ? Array.isArray(request)
      ? "an empty batch"
      : "not a request object"
    : request.jsonrpc !== "2.0"
      ? 'jsonrpc must be "2.0"'
      : typeof request.method !== "string"
        ? "method must be a string"
        : request.params !== undefined && (typeof request.params !== "object" || request.params === null)
          ? "params must be an array or an object"
          : !["undefined", "string", "number"].includes(typeof request.id) && request.id !== null
            ? "id must be a string, a number or null"
            : undefined;
  if (problem === undefined) return undefined;
  const id = isObject(request) && (typeof request.id === "string" || typeof request.id === "number") ? request.id : null;
  return {jsonrpc: "2.0", id, error: rpcError(-32600, `Invalid Request: ${problem}`)};
}
