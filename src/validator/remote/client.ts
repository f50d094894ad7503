import type {Agent, OutgoingHttpHeaders} from "node:http";
import {http} from "../../nodeHttp.ts";
import * as https from "node:https";
import {fromHex} from "@lodestar/utils";
import type {TopicLogger} from "../../log.ts";
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
 *
 * Requests go through node:http with kept-alive connections: a slot's hundred signatures cost
 * a third of the CPU they take through fetch (measured with the stand-in on one machine).
 */

export const DEFAULT_REMOTE_SIGNER_TIMEOUT_MS = 5000;
const PUBKEY = /^0x[0-9a-fA-F]{96}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{192}$/;
/** how much of a refusal's body goes into the error */
const MAX_MESSAGE_CHARS = 300;
/** a signer that answered within this long is taken to be up, without asking /upcheck */
const FRESH_ANSWER_MS = 2000;
/** the largest answer read (a key list of ten thousand keys is about a megabyte) */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export class RemoteSignerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RemoteSignerError";
  }
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

class NoAnswer extends Error {}

export class RemoteSignerClient {
  readonly url: string;
  private readonly timeoutMs: number;
  private readonly agent: Agent;
  /** when the signer last answered (performance.now()); -Infinity after it failed to */
  private lastAnswerAt = -Infinity;
  private upcheck: Promise<void> | null = null;
  private readonly log: TopicLogger | undefined;
  /** whether the last exchange had no answer: the change either way is logged once */
  private down = false;

  /** `log`: where the signer going down and answering again are said, once each time */
  constructor(url: string, timeoutMs = DEFAULT_REMOTE_SIGNER_TIMEOUT_MS, log?: TopicLogger) {
    this.url = url.replace(/\/+$/, "");
    this.timeoutMs = timeoutMs;
    this.log = log;
    const options = {keepAlive: true, maxSockets: 64};
    this.agent = this.url.startsWith("https:") ? new https.Agent(options) : new http.Agent(options);
  }

  /** Resolves if the signer answered lately or answers its upcheck now; throws a RemoteSignerError otherwise. */
  checkUp(): Promise<void> {
    if (performance.now() - this.lastAnswerAt < FRESH_ANSWER_MS) return Promise.resolve();
    // any answer will do: the signer is up (one without /upcheck answers 404)
    this.upcheck ??= this.call("GET", "/upcheck")
      .then(() => undefined)
      .finally(() => (this.upcheck = null));
    return this.upcheck;
  }

  /** The public keys the signer holds, lowercase 0x hex. */
  async publicKeys(): Promise<string[]> {
    const answer = await this.success("GET", "/api/v1/eth2/publicKeys");
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch (err) {
      throw new RemoteSignerError(`remote signer ${this.url}: its key list is not JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(body) || !body.every((k) => typeof k === "string" && PUBKEY.test(k))) {
      throw new RemoteSignerError(`remote signer ${this.url}: its key list is not an array of 0x public keys`);
    }
    return body.map((k: string) => k.toLowerCase());
  }

  /** The signature the signer returns for `body` with the key `pubkeyHex` (not checked here). */
  async sign(pubkeyHex: string, body: SigningRequestBody): Promise<Uint8Array> {
    const answer = await this.success("POST", `/api/v1/eth2/sign/${pubkeyHex}`, JSON.stringify(body));
    // the API answers {"signature": "0x…"} as JSON, or the bare hex as text/plain
    const text = answer.text.trim();
    let signature: unknown = text;
    if (answer.contentType.includes("json")) {
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

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  /** The signer's answer when its status is a success; a RemoteSignerError naming the status and message otherwise. */
  private async success(method: string, path: string, body?: string): Promise<Answer> {
    const answer = await this.call(method, path, body);
    if (answer.status < 200 || answer.status > 299) {
      const text = answer.text.slice(0, MAX_MESSAGE_CHARS);
      throw new RemoteSignerError(`remote signer ${this.url} answered ${answer.status}${text ? `: ${text}` : ""}`);
    }
    return answer;
  }

  /** The signer's answer, whatever its status; a RemoteSignerError when there is none in time. */
  private async call(method: string, path: string, body?: string): Promise<Answer> {
    try {
      const answer = await this.exchange(method, path, body);
      this.lastAnswerAt = performance.now();
      if (this.down) this.log?.info({url: this.url}, "Remote signer answers again");
      this.down = false;
      return answer;
    } catch (err) {
      this.lastAnswerAt = -Infinity;
      const e = err as NodeJS.ErrnoException;
      const reason = e instanceof NoAnswer ? e.message : `unreachable (${e.message || e.code})`;
      if (!this.down) this.log?.error({url: this.url, reason}, "Remote signer not answering: the duties of its keys are skipped until it answers");
      this.down = true;
      throw new RemoteSignerError(`remote signer ${this.url}: ${reason}`);
    }
  }

  private exchange(method: string, path: string, body?: string): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const headers: OutgoingHttpHeaders = {Accept: "application/json"};
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const transport = this.url.startsWith("https:") ? https : http;
      const req = transport.request(this.url + path, {method, headers, agent: this.agent}, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new NoAnswer(`an answer over ${MAX_ANSWER_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on("end", () => {
          clearTimeout(timer);
          resolve({status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8")});
        });
        res.on("error", reject);
      });
      // the whole exchange, from now to the answer's last byte
      const timer = setTimeout(() => req.destroy(new NoAnswer(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }
}
