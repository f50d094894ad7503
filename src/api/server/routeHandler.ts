import type {ChainForkConfig} from "@lodestar/config";
import {ApiError, badRequest, renderError} from "../errors.ts";
import type {BodyDef, EventSource, ParamDef, Route, WireFormat} from "../routes/types.ts";
import {coalesce, envelopeChunks, envelopeHead, envelopeText} from "../streaming.ts";
import {isShared, jsonTextOf} from "../jsonText.ts";
import {MEDIA_TYPE, type WireRequest, type WireResponse} from "../wire.ts";
import {declinedReason} from "../impl/notImplemented.ts";
import {eventStreamResponse} from "./eventStream.ts";
import {requestFormat, responseFormat} from "./negotiation.ts";
import {isTextBody, parseTextBody} from "./textBody.ts";
import {truncateEcho} from "./limits.ts";
import {parseJsonInSlices} from "./slicedJson.ts";
import {parseKept} from "./keptBodies.ts";
import {then, type MaybePromise} from "../../maybePromise.ts";

/**
 * The one generic handler: negotiate, parse every argument with the route's codecs, call the
 * route's handler, format its result with the route's codecs, and render any error once.
 */

export type RouteHandler = (req: WireRequest) => Promise<WireResponse>;
type AnyHandler = (args: any, ctx: any) => MaybePromise<any>;

function headerValue(req: WireRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(",") : value;
}

function rawParam(req: WireRequest, def: ParamDef<unknown>): string[] | undefined {
  const value = def.in === "path" ? req.params[def.name] : def.in === "query" ? req.query[def.name] : headerValue(req, def.name);
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}

function parseBody(req: WireRequest, def: BodyDef<unknown, unknown>, others: Record<string, unknown>, config: ChainForkConfig): MaybePromise<unknown> {
  const contentType = headerValue(req, "content-type");
  if (def.text && isTextBody(contentType)) return parseTextBody(req.body, contentType, def, others, config);
  const format = requestFormat(contentType, def.ssz !== undefined);
  if (format === null) throw new ApiError(415, `Unsupported Content-Type: ${contentType}`);
  if (!req.body || req.body.length === 0) {
    if (def.optional) return def.fromJson(undefined, others, config);
    throw badRequest("Missing request body");
  }
  const body = req.body;
  if (format === "ssz") return fromBody(() => def.ssz!.deserialize(body, others, config));
  return parseKept(def, body, async () => {
    let json: unknown;
    try {
      // a large body is parsed in slices, letting the node's own work in between
      json = await parseJsonInSlices(body);
    } catch (e) {
      throw badRequest(`Invalid JSON body: ${(e as Error).message}`);
    }
    return fromBody(() => (def.fromJsonInSlices ? def.fromJsonInSlices(json, others, config) : def.fromJson(json, others, config)));
  });
}

/** The value of a body's codec, its errors a 400 that says why. */
async function fromBody(parse: () => unknown): Promise<unknown> {
  try {
    return await parse();
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw badRequest(`Invalid request body: ${(e as Error).message}`);
  }
}

/** A route's arguments as the handler reads them at each request: its parameters, then its body if it takes one. */
interface ArgList {
  params: [string, ParamDef<unknown>][];
  body?: [string, BodyDef<unknown, unknown>];
}

function argListOf(route: Route): ArgList {
  const entries = Object.entries(route.args as Record<string, ParamDef<unknown> | BodyDef<unknown, unknown>>);
  const body = entries.find((entry): entry is [string, BodyDef<unknown, unknown>] => entry[1].in === "body");
  return {params: entries.filter((entry): entry is [string, ParamDef<unknown>] => entry[1].in !== "body"), body};
}

/** Every argument of the route, parameters first (a body may depend on them, e.g. on the fork header). */
function parseArgs(list: ArgList, req: WireRequest, config: ChainForkConfig): MaybePromise<Record<string, unknown>> {
  const args: Record<string, unknown> = {};
  for (const [key, def] of list.params) args[key] = def.codec.parse(rawParam(req, def), def.name);
  if (!list.body) return args;
  const [name, def] = list.body;
  return then(parseBody(req, def, args, config), (body) => {
    args[name] = body;
    return args;
  });
}

const CLOSE_ENVELOPE = Buffer.from("}");

type DataResponse = Extract<Route["response"], {kind: "data"}>;
type MetaFields = [string, {json: string; header: string; toJson(v: unknown): unknown; toHeader(v: unknown): string}][];

function formatResult(route: Route, metaFields: MetaFields, result: {data?: unknown; meta?: Record<string, unknown>} | undefined, format: WireFormat): WireResponse {
  const response = route.response;
  if (response.kind === "empty") return {status: 200, headers: {}};
  if (response.kind === "status") return {status: result!.data as number, headers: {}};
  if (response.kind === "events") return eventStreamResponse(result!.data as EventSource<unknown>, response.event, route.operationId);
  const meta = result!.meta ?? {};
  if (format === "json") return keptAnswerOf(route, result!.data, meta, metaFields, () => formatData(response, metaFields, result!.data, meta, format));
  return formatData(response, metaFields, result!.data, meta, format);
}

function formatData(response: DataResponse, metaFields: MetaFields, data: unknown, meta: Record<string, unknown>, format: WireFormat): WireResponse {
  const headers: Record<string, string> = {"Content-Type": MEDIA_TYPE[format]};
  const json: Record<string, unknown> = {};
  for (const [key, field] of metaFields) {
    headers[field.header] = field.toHeader(meta[key]);
    json[field.json] = field.toJson(meta[key]);
  }
  if (format === "ssz") return {status: 200, headers, body: response.data.ssz!.serialize(data, meta)};
  if (response.unwrapped) return {status: 200, headers, body: JSON.stringify(response.data.toJson(data, meta))};
  const chunks = response.data.toJsonChunks?.(data, meta);
  if (chunks) return {status: 200, headers, body: coalesce(envelopeChunks(json, chunks))};
  const bytes = response.data.toJsonBytes?.(data, meta);
  if (bytes) return {status: 200, headers, body: Buffer.concat([Buffer.from(envelopeHead(json)), ...bytes, CLOSE_ENVELOPE])};
  const text = jsonTextOf(response.data, data, () => response.data.toJsonText?.(data, meta) ?? JSON.stringify(response.data.toJson(data, meta)));
  // undefined data has no `data` key (what JSON.stringify of the envelope gives)
  if (text === undefined) return {status: 200, headers, body: JSON.stringify(json)};
  return {status: 200, headers, body: envelopeText(json, text)};
}

/** Whole JSON answers around shared values (see jsonText.ts), by route and value, with the metadata they were made with. */
const keptAnswers = new WeakMap<object, WeakMap<object, {meta: Record<string, unknown>; answer: WireResponse}>>();

/**
 * The answer `compute` gives, or the one it gave before for the same shared value while each of
 * its metadata fields is the same (the same value, or the same object): duties asked again with
 * the same dependent root and flags get the same headers and bytes, with no envelope made again.
 */
function keptAnswerOf(route: Route, data: unknown, meta: Record<string, unknown>, metaFields: MetaFields, compute: () => WireResponse): WireResponse {
  if (!isShared(data)) return compute();
  let byValue = keptAnswers.get(route);
  if (!byValue) keptAnswers.set(route, (byValue = new WeakMap()));
  const kept = byValue.get(data as object);
  if (kept && metaFields.every(([key]) => kept.meta[key] === meta[key])) return kept.answer;
  const answer = compute();
  // a streamed body is read once: only a whole one can be sent again
  if (typeof answer.body === "string" || answer.body instanceof Uint8Array) {
    Object.freeze(answer.headers);
    byValue.set(data as object, {meta, answer});
  }
  return answer;
}

/** An error answer; its message and failure messages are cut to `MAX_ECHOED_CHARS`, as they may echo input. */
export function errorResponse(status: number, body: {code: number; message: string; failures?: {index: number; message: string}[]}): WireResponse {
  const bounded = {
    ...body,
    message: truncateEcho(body.message),
    ...(body.failures ? {failures: body.failures.map((f) => ({...f, message: truncateEcho(f.message)}))} : {}),
  };
  return {status, headers: {"Content-Type": MEDIA_TYPE.json}, body: JSON.stringify(bounded)};
}

/** The handler of one route, bound to its implementation and the context. */
export function createRouteHandler<Ctx extends {chain: {config: ChainForkConfig}}>(route: Route, handler: AnyHandler, ctx: Ctx): RouteHandler {
  const declined = declinedReason(handler);
  if (declined !== undefined) return async () => errorResponse(501, {code: 501, message: declined});
  const response = route.response;
  const sszResponse = response.kind === "data" && response.data.ssz !== undefined;
  const argList = argListOf(route);
  const metaFields = (response.kind === "data" ? Object.entries(response.meta) : []) as MetaFields;
  return async (req) => {
    try {
      // only responses with a body are negotiated; empty answers suit any Accept
      const format = response.kind === "data" ? responseFormat(headerValue(req, "accept"), sszResponse) : "json";
      if (format === null) throw new ApiError(406, "Accepted media type not supported");
      // awaited only when not at hand (see maybePromise.ts)
      const args = parseArgs(argList, req, ctx.chain.config);
      const result = handler(args instanceof Promise ? await args : args, ctx);
      return formatResult(route, metaFields, result instanceof Promise ? await result : result, format);
    } catch (err) {
      const {status, body} = renderError(err, route.operationId);
      return errorResponse(status, body);
    }
  };
}
