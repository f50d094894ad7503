import type {IncomingMessage, ServerResponse} from "node:http";
import {http} from "../nodeHttp.ts";
import {getLogger} from "../log.ts";
import {listen} from "../httpListen.ts";
import {verifyJwt} from "./jwt.ts";
import {MockEngineRpc, RpcError} from "./mockEngineRpc.ts";

const log = getLogger("mock-engine");
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface EngineServerOptions {
  port: number;
  address?: string;
  jwtSecret: Uint8Array;
  rpc: MockEngineRpc;
  nowSeconds?: () => number;
}

export interface RunningEngineServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the mock engine's Engine API as JSON-RPC over HTTP, each request authenticated by its
 * JWT (engine-api authentication.md): a missing or bad token gets HTTP 401 and no answer.
 */
export async function startEngineServer(opts: EngineServerOptions): Promise<RunningEngineServer> {
  const nowSeconds = opts.nowSeconds ?? (() => Date.now() / 1000);
  const server = http.createServer((req, res) => {
    void handle(req, res).catch((e: Error) => {
      log.error({err: e.message}, "engine request failed");
      if (!res.headersSent) reply(res, 500, {jsonrpc: "2.0", id: null, error: {code: -32603, message: "Internal error"}});
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return reply(res, 405, {jsonrpc: "2.0", id: null, error: {code: -32600, message: "Invalid request: POST JSON-RPC"}});
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const refusal = token === undefined ? "no bearer token" : verifyJwt(token, opts.jwtSecret, nowSeconds());
    if (refusal !== null) {
      log.warn({reason: refusal}, "refused an unauthenticated request");
      return reply(res, 401, {jsonrpc: "2.0", id: null, error: {code: -32600, message: `Unauthorized: ${refusal}`}});
    }
    const text = await readBody(req);
    if (text === null) return reply(res, 413, {jsonrpc: "2.0", id: null, error: {code: -32600, message: "Invalid request: body too large"}});
    let call: {id?: unknown; method?: unknown; params?: unknown};
    try {
      call = JSON.parse(text);
    } catch {
      return reply(res, 200, {jsonrpc: "2.0", id: null, error: {code: -32700, message: "Parse error"}});
    }
    const id = call?.id ?? null;
    if (typeof call !== "object" || call === null || typeof call.method !== "string") {
      return reply(res, 200, {jsonrpc: "2.0", id, error: {code: -32600, message: "Invalid request"}});
    }
    const params = Array.isArray(call.params) ? call.params : [];
    try {
      const result = await opts.rpc.handle(call.method, params);
      reply(res, 200, {jsonrpc: "2.0", id, result});
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      log.debug({method: call.method, code: e.code, err: e.message}, "engine call refused");
      reply(res, 200, {jsonrpc: "2.0", id, error: {code: e.code, message: e.message}});
    }
  }

  // the node calls once a slot or more: keep its connections open across slots (and longer than its client's idle time)
  server.keepAliveTimeout = 65_000;
  const listening = await listen(server, opts.port, opts.address ?? "127.0.0.1", {what: "the Engine API", option: "--port"});
  log.info({port: listening.port, address: opts.address ?? "127.0.0.1"}, "mock engine listening");
  return listening;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {"content-type": "application/json", "content-length": Buffer.byteLength(text)});
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
