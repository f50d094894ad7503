import express, {type ErrorRequestHandler, type Request, type RequestHandler, type Response} from "express";
import {byteSize, readBody} from "./readBody.ts";
import {createLimitedServer, truncateEcho, type ConnectionLimits} from "./limits.ts";
import {listen, type ListeningServer} from "./listen.ts";
import {getLogger} from "../../log.ts";
import {handlers, type ApiContext} from "../impl/index.ts";
import {routes} from "../routes/index.ts";
import type {Route} from "../routes/types.ts";
import {declinedReason} from "../impl/notImplemented.ts";
import {isChunked, type WireRequest, type WireResponse} from "../wire.ts";
import {writeEventStream} from "./eventStream.ts";
import {createRouteHandler, errorResponse, type RouteHandler} from "./routeHandler.ts";
import {logRequests, trackRequests} from "./requestHooks.ts";
import type {Registry} from "prom-client";
import {RequestMetrics} from "../../metrics/requests.ts";
import {statusLabel} from "../../metrics/labels.ts";
import {writeChunks} from "./writeChunks.ts";

/** The REST server: an express app with one generic handler per table entry. */

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

export type RestServer = ListeningServer;

/** Blocks with blobs are the largest bodies. */
const DEFAULT_BODY_LIMIT = "20mb";
const log = getLogger("api");

/** The handler of every route, by operationId: what the express app and the in-process transport call. */
export function createApiHandlers(ctx: ApiContext): Record<string, RouteHandler> {
  const all = handlers as unknown as Record<string, (args: unknown, ctx: ApiContext) => Promise<unknown>>;
  return Object.fromEntries(Object.values(routes as Record<string, Route>).map((r) => [r.operationId, createRouteHandler(r, all[r.operationId], ctx)]));
}

/** A client transport that runs the server's own handlers without a socket. */
export function inProcessTransport(ctx: ApiContext): (route: Route, req: WireRequest) => Promise<WireResponse> {
  const byId = createApiHandlers(ctx);
  return (route, req) => byId[route.operationId](req);
}

function toWireRequest(req: Request): WireRequest {
  return {
    params: req.params as Record<string, string>,
    query: req.query as Record<string, string | string[]>,
    headers: req.headers,
    // a plain Uint8Array view, as the in-process transport passes (SSZ values then hold no Buffers)
    body: Buffer.isBuffer(req.body) ? new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.byteLength) : undefined,
  };
}

function send(res: Response, wire: WireResponse): Promise<void> | void {
  res.status(wire.status);
  for (const [name, value] of Object.entries(wire.headers)) res.setHeader(name, value);
  if (wire.eventStream) return writeEventStream(res, wire.eventStream);
  if (isChunked(wire.body)) return writeChunks(res, wire.body);
  res.end(wire.body);
}

function cors(origin: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Expose-Headers", "*");
    if (req.method !== "OPTIONS") return next();
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "Content-Type, Accept, Eth-Consensus-Version");
    res.status(204).end();
  };
}

/** Errors raised before a route handler runs (body too large, unreadable body), in the spec's error shape. */
const bodyErrors: ErrorRequestHandler = (err, _req, res, _next) => {
  const status = typeof err?.status === "number" && err.status >= 400 && err.status < 500 ? err.status : 500;
  if (status === 500) log.error({err}, "Error reading request");
  // the rest of a body too large (or unreadable) is not read: the connection closes after the answer
  if (status === 413 || status === 400) res.setHeader("Connection", "close");
  send(res, errorResponse(status, {code: status, message: status === 500 ? "Internal server error" : String(err.message)}));
};

/** Requests by the operationId of the route that answered ("unmatched" for none) and status, timed until the response ends. */
function observeRequests(registry: Registry): RequestHandler {
  const all = Object.values(routes as Record<string, Route>);
  const metrics = new RequestMetrics(registry, {
    prefix: "beacon_gateway_rest_requests",
    what: "REST requests",
    label: "operationId",
    known: all.map((r) => r.operationId),
    other: "unmatched",
  });
  return (_req, res, next) => {
    const started = performance.now();
    res.once("close", () => metrics.observe(res.locals.operationId as string | undefined, statusLabel(res.statusCode), (performance.now() - started) / 1000));
    next();
  };
}

export function createApp(opts: Pick<RestServerOptions, "allowOrigin" | "bodyLimit" | "metricsRegistry">, ctx: ApiContext): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  app.use(trackRequests(), logRequests());
  if (opts.metricsRegistry) app.use(observeRequests(opts.metricsRegistry));
  if (opts.allowOrigin) app.use(cors(opts.allowOrigin));
  const byId = createApiHandlers(ctx);
  const all = Object.values(routes as Record<string, Route>);
  const isDeclined = (route: Route): boolean => declinedReason((handlers as Record<string, unknown>)[route.operationId]) !== undefined;
  const mount = (route: Route): void => {
    const handle = byId[route.operationId];
    const expressPath = route.path.replace(/\{(\w+)\}/g, ":$1");
    const method = route.method === "GET" ? "get" : "post";
    app[method](expressPath, async (req, res) => {
      res.locals.operationId = route.operationId;
      const wire = await handle(toWireRequest(req));
      await send(res, wire);
    });
  };
  // declined routes answer 501 before the body is read (a large or broken body cannot make it a 413 or 400)
  all.filter(isDeclined).forEach(mount);
  app.use(readBody(byteSize(opts.bodyLimit ?? DEFAULT_BODY_LIMIT)));
  all.filter((route) => !isDeclined(route)).forEach(mount);
  app.use((req, res) => send(res, errorResponse(404, {code: 404, message: `Route not found: ${req.method} ${truncateEcho(req.path)}`})));
  app.use(bodyErrors);
  return app;
}

/** Starts the REST server; `port` 0 picks a free port (the one bound is returned). */
export async function startRestServer(opts: RestServerOptions, ctx: ApiContext): Promise<RestServer> {
  const server = await listen(createLimitedServer(createApp(opts, ctx), opts.limits), opts.port, opts.address);
  log.info({address: opts.address, port: server.port}, "REST API listening");
  return server;
}
