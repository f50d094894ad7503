import type {IncomingMessage, ServerResponse} from "node:http";
import {http} from "../../nodeHttp.ts";
import type {SecretKey} from "@chainsafe/blst";
import {fromHex, toHex} from "@lodestar/utils";
import {type ListeningServer, listen} from "../../httpListen.ts";
import {getLogger} from "../../log.ts";
import type {RemoteSignerOptions} from "../../cli/remoteSignerOptions.ts";
import {KeyLoadError} from "../keys/loadKeys.ts";
import {loadKeystoreDir} from "../keys/keystoreDir.ts";
import {REQUEST_MESSAGE_FIELD, WITHOUT_FORK_INFO} from "./signingRequests.ts";

/**
 * `beacon-gateway remote-signer`: a stand-in for a remote signer, for tests (not a product: no
 * slashing protection of its own, no authentication, no key management). It holds the keys of
 * a keystore directory and answers the Web3Signer ETH2 API's key list, signing and upcheck:
 * each sign request is checked for its shape (a known type, the type's message, fork_info where
 * the type has one, a signingRoot) and the signature is made over the signingRoot it carries.
 * Web3Signer computes that root itself from the message; the stand-in does not.
 */

const log = getLogger("remote-signer");
const SIGN_PATH = /^\/api\/v1\/eth2\/sign\/([^/]+)$/;
const ROOT = /^0x[0-9a-fA-F]{64}$/;
const MAX_BODY_BYTES = 1024 * 1024;

class RequestError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Serves the keys of `keys` (by lowercase 0x pubkey) on the given port. */
export async function startStandInSigner(keys: Map<string, SecretKey>, opts: {port: number; address: string}): Promise<ListeningServer> {
  const server = http.createServer((req, res) => {
    handle(keys, req, res).catch((e: unknown) => {
      const status = e instanceof RequestError ? e.status : 500;
      if (status === 500) log.error({error: (e as Error).message, url: req.url}, "Request failed");
      res.writeHead(status, {"Content-Type": "text/plain"}).end((e as Error).message);
    });
  });
  const listening = await listen(server, opts.port, opts.address);
  log.info({port: listening.port, address: opts.address, keys: keys.size}, "Remote signer (stand-in) listening");
  return listening;
}

/** The `remote-signer` command: loads the keystores (refusing to start when any cannot be used), then serves them. */
export async function startStandInSignerProcess(opts: RemoteSignerOptions): Promise<ListeningServer> {
  const {keys: loaded, failures} = await loadKeystoreDir(opts.keystoresDir, {secretsDir: opts.secretsDir, passwordFile: opts.keystorePasswordFile}, new Set());
  if (failures.length > 0) {
    for (const key of loaded) key.lock.release();
    throw new KeyLoadError(failures);
  }
  const keys = new Map(loaded.map((k) => [k.pubkey, k.secretKey]));
  const server = await startStandInSigner(keys, opts);
  return {
    port: server.port,
    async close() {
      await server.close();
      for (const key of loaded) key.lock.release();
    },
  };
}

async function handle(keys: Map<string, SecretKey>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (req.method === "GET" && path === "/upcheck") return void res.writeHead(200, {"Content-Type": "text/plain"}).end("OK");
  if (req.method === "GET" && path === "/api/v1/eth2/publicKeys") {
    return void res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify([...keys.keys()]));
  }
  const sign = req.method === "POST" ? SIGN_PATH.exec(path) : null;
  if (!sign) throw new RequestError(404, `no route ${req.method} ${path}`);
  const secretKey = keys.get(decodeURIComponent(sign[1]).toLowerCase());
  if (!secretKey) throw new RequestError(404, `Public Key not found: ${sign[1].slice(0, 100)}`);
  const signingRoot = checkRequest(await readJson(req));
  const signature = toHex(secretKey.sign(fromHex(signingRoot)).toBytes());
  // JSON when asked for (as the API's clients do), else the bare hex as text/plain
  if ((req.headers.accept ?? "").includes("application/json")) {
    return void res.writeHead(200, {"Content-Type": "application/json"}).end(JSON.stringify({signature}));
  }
  res.writeHead(200, {"Content-Type": "text/plain"}).end(signature);
}

/** The request's signingRoot, once its shape is the API's; a 400 naming what is wrong otherwise. */
function checkRequest(body: unknown): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new RequestError(400, "the body must be a JSON object");
  const request = body as Record<string, unknown>;
  const type = request.type;
  if (typeof type !== "string" || !(type in REQUEST_MESSAGE_FIELD)) throw new RequestError(400, `unknown type ${JSON.stringify(type)}`);
  const field = REQUEST_MESSAGE_FIELD[type];
  if (typeof request[field] !== "object" || request[field] === null) throw new RequestError(400, `a ${type} request carries its ${field}`);
  if (!WITHOUT_FORK_INFO.has(type)) {
    const info = request.fork_info as {fork?: Record<string, unknown>; genesis_validators_root?: unknown} | undefined;
    const fork = info?.fork;
    const versions = typeof fork?.previous_version === "string" && typeof fork.current_version === "string" && typeof fork.epoch === "string";
    if (!versions || typeof info?.genesis_validators_root !== "string") throw new RequestError(400, `a ${type} request carries fork_info {fork, genesis_validators_root}`);
  }
  const signingRoot = request.signingRoot;
  // Web3Signer computes the root when none is sent; the stand-in signs the one it is given
  if (typeof signingRoot !== "string" || !ROOT.test(signingRoot)) throw new RequestError(400, "signingRoot (0x and 32 bytes of hex) is required by this stand-in");
  return signingRoot;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, "request body too large");
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (e) {
    throw new RequestError(400, `the body is not JSON: ${(e as Error).message}`);
  }
}
