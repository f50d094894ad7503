import type {IncomingMessage, RequestListener, ServerResponse} from "node:http";
import {parse as parseQuery} from "node:querystring";
import {byteSize, readBody, refuseTooLarge, tooLargeDeclared} from "./readBody.ts";
import {Router} from "./router.ts";
import {createLimitedServer, truncateEcho, type ConnectionLimits} from "./limits.ts";
import {listen, type ListeningServer} from "../../httpListen.ts";
import {getLogger} from "../../log.ts";
import {handlers, type ApiContext} from "../impl/index.ts";
import {routes} from "../routes/index.ts";
import type {Route} from "../routes/types.ts";
import {declinedReason} from "../impl/notImplemented.ts";
import {isChunked, type WireRequest, type WireResponse} from "../wire.ts";
import {eventStreamLimits, writeEventStream} from "./eventStream.ts";
import {idLimits} from "../codecs.ts";
import {createRouteHandler, errorResponse, type RouteHandler} from "./routeHandler.ts";
import {requestObserver} from "./requestHooks.ts";
import type {Registry} from "prom-client";
import {writeChunks} from "./writeChunks.ts";

/** The REST server: node:http with one generic handler per table entry. */

export interface RestServerOptions {
  port: number;
  address: string;
  /** sets `Access-Control-Allow-Origin` (and answers CORS preflights) when given */
  allowOrigin?: string;
  /** largest accepted request body, in bytes or as "20mb" */
  bodyLimit?: number | string;
  /** counts requests and their latency by operationId and status on this registry (--metrics) */
  metricsRegistry?: Registry;
  /** connections, header, request and idle timeouts (defaults: `DEFAULT_CONNECTION_LIMITS`) */
  limits?: Partial<ConnectionLimits>;
}

export interface RequestLimits {
  maxQueryIds?: number;
  maxBodyIds?: number;
  maxEventStreams?: number;
  eventQueueBytes?: number;
}

/** What one request may ask for: limits the route table's codecs and the event streams read at each request, over HTTP and in-process. */
export function applyRequestLimits(limits: RequestLimits): void {
  if (limits.maxQueryIds !== undefined) idLimits.query = limits.maxQueryIds;
  if (limits.maxBodyIds !== undefined) idLimits.body = limits.maxBodyIds;
  if (limits.maxEventStreams !== undefined) eventStreamLimits.maxClients = limits.maxEventStreams;
  if (limits.eventQueueBytes !== undefined) eventStreamLimits.maxQueuedChars = limits.eventQueueBytes;
}

export type RestServer = ListeningServer;

/** Blocks with blobs are the largest bodies. */
const DEFAULT_BODY_LIMIT = "20mb";
const log = getLogger("api");

/** The handler of every route, by operationId: what the server and the in-process transport call. */
export function createApiHandlers(ctx: ApiContext): Record<string, RouteHandler> {
  const all = handlers as unknown as Record<string, (args: unknown, ctx: ApiContext) => Promise<unknown>>;
  return Object.fromEntries(Object.values(routes as Record<string, Route>).map((r) => [r.operationId, createRouteHandler(r, all[r.operationId], ctx)]));
}

/** A client transport that runs the server's own handlers without a socket. */
export function inProcessTransport(ctx: ApiContext): (route: Route, req: WireRequest) => Promise<WireResponse> {
  const byId = createApiHandlers(ctx);
  return (route, req) => byId[route.operationId](req);
}

function send(res: ServerResponse, wire: WireResponse): Promise<void> | void {
  const body = wire.body;
  if (wire.eventStream || body === undefined || isChunked(body)) {
    res.statusCode = wire.status;
    for (const name in wire.headers) res.setHeader(name, wire.headers[name]);
    if (wire.eventStream) return writeEventStream(res, wire.eventStream);
    if (isChunked(body)) return writeChunks(res, body);
    res.end();
    return;
  }
  // a whole body: its head given at once, with its length, which node:http writes as it is given
  // (setHeader, header by header, keeps each in a table first)
  const head: string[] = [];
  for (const name in wire.headers) head.push(name, wire.headers[name]);
  head.push("Content-Length", String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength));
  res.writeHead(wire.status, head).end(body);
}

function notFound(method: string, path: string): WireResponse {
  return errorResponse(404, {code: 404, message: `Route not found: ${method} ${truncateEcho(path)}`});
}

/**
 * The request listener: routes each request through the table's router to its generic handler.
 * Plain node:http, no framework: the table already says everything a framework would be told.
 */
export function createApp(opts: Pick<RestServerOptions, "allowOrigin" | "bodyLimit" | "metricsRegistry">, ctx: ApiContext): RequestListener {
  const all = Object.values(routes as Record<string, Route>);
  const byId = createApiHandlers(ctx);
  const router = new Router<{route: Route; handle: RouteHandler; declined: boolean; takesBody: boolean}>();
  for (const route of all) {
    const entry = {
      route,
      handle: byId[route.operationId],
      declined: declinedReason((handlers as Record<string, unknown>)[route.operationId]) !== undefined,
      takesBody: Object.values(route.args as Record<string, {in: string}>).some((arg) => arg.in === "body"),
    };
    router.add(route.method, route.path, entry);
    if (route.method === "GET") router.add("HEAD", route.path, entry);
  }
  const observe = requestObserver(opts.metricsRegistry, all.map((r) => r.operationId));
  const bodyLimit = byteSize(opts.bodyLimit ?? DEFAULT_BODY_LIMIT);
  const allowOrigin = opts.allowOrigin;

  async function answer(req: IncomingMessage, res: ServerResponse, setOperationId: (id: string) => void): Promise<void> {
    const url = req.url ?? "/";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const method = req.method ?? "GET";
    if (allowOrigin !== undefined) {
      res.setHeader("Access-Control-Allow-Origin", allowOrigin);
      res.setHeader("Access-Control-Expose-Headers", "*");
      if (method === "OPTIONS") {
        res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        res.setHeader("Access-Control-Allow-Headers", "Content-Type, Accept, Eth-Consensus-Version");
        res.writeHead(204).end();
        return;
      }
    }
    const match = router.match(method, path);
    if (!match) return send(res, notFound(method, path));
    if (match.route === undefined) {
      if ("badParam" in match) return send(res, errorResponse(400, {code: 400, message: `Invalid path parameter ${match.badParam}: not percent-encoded text`}));
      if (method !== "OPTIONS") return send(res, notFound(method, path));
      res.setHeader("Allow", match.methods.join(", "));
      res.writeHead(204).end();
      return;
    }
    const {route, handle, declined, takesBody} = match.route;
    setOperationId(route.operationId);
    // declined routes answer 501 before the body is read (a large or broken body cannot make it a 413 or 400)
    let body: Uint8Array | undefined;
    if (!declined) {
      if (takesBody) {
        const read = await readBody(req, res, bodyLimit);
        if (read === null) return;
        body = read;
      } else if (tooLargeDeclared(req, bodyLimit)) {
        return refuseTooLarge(req, res, bodyLimit);
      }
    }
    const query = queryAt === -1 ? {} : (parseQuery(url.slice(queryAt + 1)) as WireRequest["query"]);
    return send(res, await handle({params: match.params, query, headers: req.headers, body}));
  }

  return (req, res) => {
    let operationId: string | undefined;
    observe(req, res, () => operationId);
    answer(req, res, (id) => (operationId = id)).catch((err) => {
      log.error({err}, "Error answering a request");
      if (res.headersSent) res.destroy();
      else send(res, errorResponse(500, {code: 500, message: "Internal server error"}));
    });
  };
}

/** Starts the REST server; `port` 0 picks a free port (the one bound is returned). */
export async function startRestServer(opts: RestServerOptions, ctx: ApiContext): Promise<RestServer> {
  const server = await listen(createLimitedServer(createApp(opts, ctx), opts.limits), opts.port, opts.address, {what: "the REST API", option: "--rest-port"});
  log.info({address: opts.address, port: server.port}, "REST API listening");
  return server;
}
