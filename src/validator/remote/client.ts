import {fromHex} from "@lodestar/utils";
import type {SigningRequestBody} from "./signingRequests.ts";

/**
 * A client of one remote signer's Web3Signer ETH2 API: the keys it holds
 * (`GET /api/v1/eth2/publicKeys`) and signatures (`POST /api/v1/eth2/sign/{pubkey}`). Every
 * failure is a RemoteSignerError naming the signer and what went wrong (unreachable, timed out,
 * refused with its status and message, an answer that is no signature); the signature it
 * returns is checked by the caller against the key and root (signer.ts).
 *
 * Before slashing protection records a block or an attestation, `checkUp` makes sure the signer
 * answered lately (or answers `GET /upcheck` now): a signer known to be down fails the duty
 * before anything is recorded for it.
 */

export const DEFAULT_REMOTE_SIGNER_TIMEOUT_MS = 5000;
const PUBKEY = /^0x[0-9a-fA-F]{96}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{192}$/;
/** how much of a refusal's body goes into the error */
const MAX_MESSAGE_CHARS = 300;
/** a signer that answered within this long is taken to be up, without asking /upcheck */
const FRESH_ANSWER_MS = 2000;

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
  /** when the signer last answered (performance.now()); -Infinity after it failed to */
  private lastAnswerAt = -Infinity;
  private upcheck: Promise<void> | null = null;

  constructor(url: string, timeoutMs = DEFAULT_REMOTE_SIGNER_TIMEOUT_MS) {
    this.url = url.replace(/\/+$/, "");
    this.timeoutMs = timeoutMs;
  }

  /** Resolves if the signer answered lately or answers its upcheck now; throws a RemoteSignerError otherwise. */
  checkUp(): Promise<void> {
    if (performance.now() - this.lastAnswerAt < FRESH_ANSWER_MS) return Promise.resolve();
    // any answer will do: the signer is up (one without /upcheck answers 404)
    this.upcheck ??= this.fetch("/upcheck", {method: "GET"})
      .then((res) => void res.body?.cancel())
      .finally(() => (this.upcheck = null));
    return this.upcheck;
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

  /** The signer's answer, whatever its status; a RemoteSignerError when there is none. */
  private async fetch(path: string, init: RequestInit): Promise<Response> {
    try {
      const res = await fetch(this.url + path, {...init, signal: AbortSignal.timeout(this.timeoutMs)});
      this.lastAnswerAt = performance.now();
      return res;
    } catch (err) {
      this.lastAnswerAt = -Infinity;
      throw new RemoteSignerError(`remote signer ${this.url}: ${fetchFailure(err, this.timeoutMs)}`);
    }
  }

  /** The signer's answer, when its status is a success. */
  private async request(path: string, init: RequestInit): Promise<Response> {
    const res = await this.fetch(path, init);
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
