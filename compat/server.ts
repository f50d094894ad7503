import jayson from "jayson/promise/index.js";
import {createServer, type IncomingMessage, type ServerResponse} from "node:http";
import {ApiClientError, bodyText, readResponse, type Transport} from "../src/api/client.ts";
import type {Route} from "../src/api/routes/types.ts";
import type {WireRequest, WireResponse} from "../src/api/wire.ts";
import {listen, type ListeningServer} from "../src/api/server/listen.ts";
import {getLogger} from "../src/log.ts";
import {InvalidParamsError, buildRequest, exactIntegers, toLegacyNumbers, valueField, type Encoding} from "./adapters.ts";
import {legacyMethods, type LegacyMethod} from "./methods.ts";

/**
 * The legacy JSON-RPC 2.0 interface (jayson) in front of the REST handlers: each method of the
 * table (methods.ts) is forwarded, as a REST request, over a Transport — the node's handlers
 * in-process, or `httpTransport(upstream)` for any beacon node's REST API — and the REST
 * answer's `data` is the result. No beacon logic lives here.
 */

export interface CompatOptions {
  transport: Transport;
  /** "legacy": integers as JSON numbers (the removed interface); "rest": the REST `data` unchanged */
  encoding: Encoding;
  /** the upstream's REST URL when forwarding over HTTP (named in errors); absent in-process */
  upstream?: string;
}

export interface CompatServerOptions extends CompatOptions {
  port: number;
  address: string;
}

export type CompatServer = ListeningServer;

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
/** Largest request body accepted (a block with blobs in a batch). */
const BODY_LIMIT = 20 * 1024 * 1024;

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
  return rpcError(SERVER_ERROR, err.message, data);
}

/** The result of a REST answer: its `data` (or the legacy `result` key of it), in the chosen encoding. */
function resultOf(method: LegacyMethod, res: WireResponse, encoding: Encoding): unknown {
  const route: Route = method.route;
  const text = bodyText(res.body);
  // throws ApiClientError for a REST error; decodes the data with the route's codec otherwise
  const decoded = readResponse(route, {...res, body: text}) as {data: unknown} | undefined;
  const response = route.response;
  if (response.kind === "empty") return true;
  if (response.kind !== "data") return decoded!.data;
  const body = JSON.parse(text) as Record<string, unknown>;
  let json = response.unwrapped ? body : body.data;
  let value = decoded!.data;
  if (method.result !== undefined) {
    value = valueField(value, method.result);
    json = (json as Record<string, unknown>)[method.result];
  }
  return encoding === "legacy" ? toLegacyNumbers(json, value) : json;
}

/** Calls one legacy method: its REST request over the transport, and the result (or a JSON-RPC error thrown). */
export async function callLegacyMethod(method: LegacyMethod, params: unknown, opts: CompatOptions): Promise<unknown> {
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
    res = await opts.transport(method.route, req);
  } catch (e) {
    const where = opts.upstream ? ` at ${opts.upstream}` : "";
    throw rpcError(SERVER_ERROR, `cannot reach the beacon node${where}: ${(e as Error).message}`);
  }
  try {
    return resultOf(method, res, opts.encoding);
  } catch (e) {
    if (e instanceof ApiClientError) throw restError(method, e, opts.upstream);
    log.warn({method: method.name, err: e}, "unreadable REST answer");
    throw rpcError(INTERNAL_ERROR, `${method.name}: the REST answer of ${method.route.operationId} could not be read: ${(e as Error).message}`);
  }
}

/** The JSON-RPC server: answers the text of a request (one call or a batch) with the text of its reply; undefined for notifications only. */
export function createJsonRpc(opts: CompatOptions): (requestText: string) => Promise<string | undefined> {
  const handlers: Record<string, (params: unknown) => Promise<unknown>> = {};
  for (const method of legacyMethods.values()) {
    handlers[method.name] = async (params) => {
      const started = Date.now();
      try {
        return await callLegacyMethod(method, params, opts);
      } catch (e) {
        if (isRpcError(e)) throw e;
        log.error({method: method.name, err: e}, "JSON-RPC call failed");
        throw rpcError(INTERNAL_ERROR, `${method.name}: ${(e as Error).message}`);
      } finally {
        log.debug({method: method.name, ms: Date.now() - started}, "JSON-RPC call");
      }
    };
  }
  const server = new jayson.Server(handlers);
  return async (requestText) => {
    let request: unknown;
    try {
      request = JSON.parse(requestText, exactIntegers);
    } catch (e) {
      return JSON.stringify({jsonrpc: "2.0", id: null, error: rpcError(-32700, "Parse error", (e as Error).message)});
    }
    const reply = await new Promise<unknown>((resolve) => server.call(request as never, (error: unknown, success: unknown) => resolve(error ?? success)));
    return reply === undefined ? undefined : JSON.stringify(reply);
  };
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function isJson(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

/** The HTTP side: POST with a JSON body, on any path, as the removed interface took it. */
async function serve(rpc: (text: string) => Promise<string | undefined>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(405, {allow: "POST", "content-type": "text/plain"}).end("JSON-RPC takes POST requests\n");
    return;
  }
  // a JSON content type also keeps browsers from posting here without a CORS preflight
  if (!isJson(req)) {
    res.writeHead(415, {"content-type": "text/plain"}).end("JSON-RPC takes Content-Type: application/json\n");
    return;
  }
  const text = await readBody(req);
  if (text === null) {
    res.writeHead(413, {"content-type": "text/plain", connection: "close"}).end(`request body over ${BODY_LIMIT} bytes\n`);
    return;
  }
  const reply = await rpc(text);
  if (reply === undefined) res.writeHead(204).end();
  else res.writeHead(200, {"content-type": "application/json; charset=utf-8"}).end(reply);
}

/** Starts the JSON-RPC server; `port` 0 picks a free port (the one bound is returned). */
export async function startCompatServer(opts: CompatServerOptions): Promise<CompatServer> {
  const rpc = createJsonRpc(opts);
  const server = createServer((req, res) => {
    serve(rpc, req, res).catch((err) => {
      log.error({err}, "JSON-RPC request failed");
      if (!res.headersSent) res.writeHead(500, {"content-type": "text/plain"});
      res.end();
    });
  });
  const listening = await listen(server, opts.port, opts.address);
  log.info({address: opts.address, port: listening.port, encoding: opts.encoding, upstream: opts.upstream ?? "in-process"}, "JSON-RPC listening");
  return listening;
}
