import type {IncomingMessage, ServerResponse} from "node:http";
import {listen, type ListeningServer} from "../src/httpListen.ts";
import {createLimitedServer, type ConnectionLimits} from "../src/api/server/limits.ts";
import {readBody} from "../src/api/server/readBody.ts";
import {drainOrClose} from "../src/api/server/writeChunks.ts";
import {getLogger} from "../src/log.ts";
import {type CompatOptions, type RpcReply, createJsonRpc} from "./server.ts";

/** The JSON-RPC interface's HTTP server: POST with a JSON body, on any path, as the removed interface took it. */

export interface CompatServerOptions extends CompatOptions {
  port: number;
  address: string;
  /** connections, header, request and idle timeouts (defaults: `DEFAULT_CONNECTION_LIMITS`) */
  limits?: Partial<ConnectionLimits>;
}

export type CompatServer = ListeningServer;

/** Largest request body accepted (a block with blobs in a batch). */
const BODY_LIMIT = 20 * 1024 * 1024;
const log = getLogger("rpc");

function isJson(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

async function serve(rpc: (body: Uint8Array) => Promise<RpcReply>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(405, {allow: "POST", "content-type": "text/plain"}).end("JSON-RPC takes POST requests\n");
    return;
  }
  // a JSON content type also keeps browsers from posting here without a CORS preflight
  if (!isJson(req)) {
    res.writeHead(415, {"content-type": "text/plain"}).end("JSON-RPC takes Content-Type: application/json\n");
    return;
  }
  // a body over the limit is answered 413 there, and the rest of it is not read
  const body = await readBody(req, res, BODY_LIMIT);
  if (body === null) return;
  const reply = await rpc(body ?? new Uint8Array());
  if (reply === undefined) return void res.writeHead(204).end();
  res.writeHead(200, {"content-type": "application/json; charset=utf-8"});
  if (typeof reply === "string") return void res.end(reply);
  // a batch, or a single call's streamed result: the pieces go out as they are made, as fast as the client reads them
  for await (const piece of reply) {
    if (res.destroyed) return;
    if (!res.write(piece)) await drainOrClose(res);
  }
  res.end();
}

/** Starts the JSON-RPC server; `port` 0 picks a free port (the one bound is returned). */
export async function startCompatServer(opts: CompatServerOptions): Promise<CompatServer> {
  const rpc = createJsonRpc(opts);
  const server = createLimitedServer((req, res) => {
    serve(rpc, req, res).catch((err) => {
      log.error({err}, "JSON-RPC request failed");
      // a reply broken off mid-stream is cut, not ended: ended, it would read as complete
      if (res.headersSent) return void res.destroy();
      res.writeHead(500, {"content-type": "text/plain"}).end();
    });
  }, opts.limits);
  const listening = await listen(server, opts.port, opts.address, {what: "the JSON-RPC server", option: "--rpc-port"});
  log.info({address: opts.address, port: listening.port, encoding: opts.encoding, upstream: opts.upstream ?? "in-process"}, "JSON-RPC listening");
  return listening;
}
