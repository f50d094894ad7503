import type {IncomingMessage, ServerResponse} from "node:http";
import {join} from "node:path";
import {parse as parseQuery} from "node:querystring";
import {createLimitedServer, truncateEcho} from "../../api/server/limits.ts";
import {listen} from "../../httpListen.ts";
import {readBody} from "../../api/server/readBody.ts";
import {Router} from "../../api/server/router.ts";
import {errorMessage} from "../context.ts";
import {KEYMANAGER_ROUTES, type KeymanagerContext, type KeymanagerRequest, type KeymanagerResponse, KeymanagerError} from "./routes.ts";
import {authorize, loadOrCreateToken} from "./token.ts";

/**
 * The keymanager API (keymanager-apis, keymanager-oapi.yaml) over node:http: its own small
 * server and route table, every request authenticated with the bearer token first (401
 * without one, 403 with another). CORS headers only with `allowOrigin`.
 */

export interface KeymanagerOptions {
  port: number;
  address: string;
  /** the token file; default `<data dir>/api-token.txt`, created at the first start */
  tokenFile?: string;
  /** sets `Access-Control-Allow-Origin` (and answers CORS preflights) when given */
  allowOrigin?: string;
}

export interface KeymanagerServer {
  port: number;
  /** the token file in use */
  tokenFile: string;
  close(): Promise<void>;
}

/** An import of many keystores with their interchange is the largest body. */
const BODY_LIMIT = 32 * 1024 * 1024;

export const TOKEN_FILE = "api-token.txt";

function send(res: ServerResponse, answer: KeymanagerResponse): void {
  if (answer.body === undefined) {
    res.writeHead(answer.status).end();
    return;
  }
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(text)}).end(text);
}

const error = (status: number, message: string): KeymanagerResponse => ({status, body: {message: truncateEcho(message)}});

export async function startKeymanagerServer(opts: KeymanagerOptions, ctx: KeymanagerContext): Promise<KeymanagerServer> {
  const tokenFile = opts.tokenFile ?? join(ctx.dataDir, TOKEN_FILE);
  const token = loadOrCreateToken(tokenFile, opts.tokenFile !== undefined);
  const router = new Router<(typeof KEYMANAGER_ROUTES)[number]>();
  for (const route of KEYMANAGER_ROUTES) router.add(route.method, route.path, route);

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const method = req.method ?? "GET";
    if (opts.allowOrigin !== undefined) {
      res.setHeader("Access-Control-Allow-Origin", opts.allowOrigin);
      if (method === "OPTIONS") {
        res.setHeader("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
        res.setHeader("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization");
        res.writeHead(204).end();
        return;
      }
    }
    const denied = authorize(req.headers.authorization, token);
    if (denied === 401) return send(res, error(401, "Missing bearer token (Authorization: Bearer <token of the keymanager token file>)"));
    if (denied === 403) return send(res, error(403, "Invalid bearer token"));
    const match = router.match(method, path);
    if (!match) return send(res, error(404, `Route not found: ${method} ${path}`));
    if (match.route === undefined) {
      if ("badParam" in match) return send(res, error(400, `Invalid path parameter ${match.badParam}`));
      res.setHeader("Allow", match.methods.join(", "));
      return send(res, error(405, `${method} is not allowed on ${path}`));
    }
    const body = await readBody(req, res, BODY_LIMIT);
    if (body === null) return;
    let json: unknown;
    if (body !== undefined && body.length > 0) {
      try {
        json = JSON.parse(Buffer.from(body).toString("utf8"));
      } catch (e) {
        return send(res, error(400, `Invalid JSON body: ${(e as Error).message}`));
      }
    }
    const request: KeymanagerRequest = {params: match.params, query: queryAt === -1 ? {} : parseQuery(url.slice(queryAt + 1)), body: json};
    try {
      send(res, await match.route.handle(request, ctx));
    } catch (e) {
      if (e instanceof KeymanagerError) return send(res, error(e.status, e.message));
      throw e;
    }
  }

  const server = createLimitedServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      ctx.log.error({error: errorMessage(err)}, "Error answering a keymanager request");
      if (res.headersSent) res.destroy();
      else send(res, error(500, "Internal server error"));
    });
  });
  const listening = await listen(server, opts.port, opts.address, {what: "the keymanager API", option: "--keymanager-port"});
  ctx.log.info({address: opts.address, port: listening.port, tokenFile}, "Keymanager API listening");
  return {port: listening.port, tokenFile, close: () => listening.close()};
}
