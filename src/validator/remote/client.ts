import {fromHex} from "@lodestar/utils";
import type {SigningRequestBody} from "./signingRequests.ts";

/**
 * A client of one remote signer's Web3Signer ETH2 API: the keys it holds
 * (`GET /api/v1/eth2/publicKeys`) and signatures (`POST /api/v1/eth2/sign/{pubkey}`). Every
 * failure is a RemoteSignerError naming the signer and what went wrong (unreachable, timed out,
 * refused with its status and message, an answer that is no signature); the signature it
 * returns is checked by the caller against the key and root (signer.ts).
 */

export const DEFAULT_REMOTE_SIGNER_TIMEOUT_MS = 5000;
const PUBKEY = /^0x[0-9a-fA-F]{96}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{192}$/;
/** how much of a refusal's body goes into the error */
const MAX_MESSAGE_CHARS = 300;

export class RemoteSignerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RemoteSignerError";
  }
}

/** The cause of a failed fetch, in a few words (`connect ECONNREFUSED 127.0.0.1:9000`). */
function fetchFailure(err: unknown, timeoutMs: number): string {
  const e = err as Error & {cause?: {code?: string; message?: string}};
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  return `unreachable (${e.cause?.message ?? e.cause?.code ?? e.message})`;
}

export class RemoteSignerClient {
  readonly url: string;
  private readonly timeoutMs: number;

  constructor(url: string, timeoutMs = DEFAULT_REMOTE_SIGNER_TIMEOUT_MS) {
    this.url = url.replace(/\/+$/, "");
    this.timeoutMs = timeoutMs;
  }

  /** The public keys the signer holds, lowercase 0x hex. */
  async publicKeys(): Promise<string[]> {
    const res = await this.request("/api/v1/eth2/publicKeys", {method: "GET", headers: {Accept: "application/json"}});
    const body = await this.json(res);
    if (!Array.isArray(body) || !body.every((k) => typeof k === "string" && PUBKEY.test(k))) {
      throw new RemoteSignerError(`remote signer ${this.url}: its key list is not an array of 0x public keys`);
    }
    return body.map((k: string) => k.toLowerCase());
  }

  /** The signature the signer returns for `body` with the key `pubkeyHex` (not checked here). */
  async sign(pubkeyHex: string, body: SigningRequestBody): Promise<Uint8Array> {
    const res = await this.request(`/api/v1/eth2/sign/${pubkeyHex}`, {
      method: "POST",
      headers: {Accept: "application/json", "Content-Type": "application/json"},
      body: JSON.stringify(body),
    });
    // the API answers {"signature": "0x…"} as JSON, or the bare hex as text/plain
    const text = (await res.text()).trim();
    let signature: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        signature = (JSON.parse(text) as {signature?: unknown}).signature;
      } catch {
        signature = undefined;
      }
    }
    if (typeof signature !== "string" || !SIGNATURE.test(signature)) {
      throw new RemoteSignerError(`remote signer ${this.url}: its answer to a ${body.type} request is no signature: ${JSON.stringify(text.slice(0, 100))}`);
    }
    return fromHex(signature);
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.url + path, {...init, signal: AbortSignal.timeout(this.timeoutMs)});
    } catch (err) {
      throw new RemoteSignerError(`remote signer ${this.url}: ${fetchFailure(err, this.timeoutMs)}`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      throw new RemoteSignerError(`remote signer ${this.url} answered ${res.status}${text ? `: ${text.slice(0, MAX_MESSAGE_CHARS)}` : ""}`);
    }
    return res;
  }

  private async json(res: Response): Promise<unknown> {
    try {
      return await res.json();
    } catch (err) {
      throw new RemoteSignerError(`remote signer ${this.url}: its answer is not JSON (${(err as Error).message})`);
    }
  }
}
