import type {ForkName} from "@lodestar/params";
import type {ExecutionPayload} from "@lodestar/types";
import {getLogger} from "../log.ts";
import {
  type BlobAndProofs,
  type BuiltPayload,
  EMPTY_BLOBS_BUNDLE,
  EngineUnavailableError,
  type ExecutionEngine,
  type NewPayloadContext,
  type ParentPayload,
  type PayloadAttributes,
  type PayloadStatus,
  type PayloadValidity,
} from "./engine.ts";
import {
  EngineJsonError,
  data,
  parseBlobsBundle,
  parseData,
  parseExecutionRequests,
  parseObject,
  parsePayload,
  parseQuantity,
  serializeExecutionRequests,
  serializePayload,
  serializePayloadAttributes,
} from "./engineJson.ts";
import {CONSENSUS_CAPABILITIES, engineMethodsOf, engineTimeoutMs} from "./engineMethods.ts";
import {createJwt} from "./jwt.ts";

const log = getLogger("execution");

/** The engine answered with a JSON-RPC error (it is up, it refused the call). */
export class EngineRpcError extends Error {
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: engine error ${code}: ${message}`);
    this.code = code;
  }
}

export interface HttpEngineOptions {
  /** the engine's authenticated endpoint, e.g. http://127.0.0.1:8551 */
  url: string;
  jwtSecret: Uint8Array;
  /** while the engine is unreachable, how often it is asked again (engine_exchangeCapabilities) */
  probeIntervalMs?: number;
  /** tests inject these */
  fetch?: typeof fetch;
  nowSeconds?: () => number;
}

export type {BlobAndProofs} from "./engine.ts";

/** engine_newPayloadV3 → 3 */
const versionOf = (method: string): number => Number(method.slice(method.lastIndexOf("V") + 1));

const STATUSES: readonly PayloadValidity[] = ["VALID", "INVALID", "SYNCING", "ACCEPTED", "INVALID_BLOCK_HASH"];
const ZERO_HASH = new Uint8Array(32);

/**
 * An execution client over the Engine API (JSON-RPC over HTTP, JWT-authenticated). It keeps
 * track of whether the engine answers: after a call fails for want of an answer it is offline
 * (`isOffline()`, the API's `el_offline`), logged once, and probed until it answers again.
 */
export class HttpExecutionEngine implements ExecutionEngine {
  private readonly url: string;
  private readonly secret: Uint8Array;
  private readonly probeIntervalMs: number;
  private readonly fetch: typeof fetch;
  private readonly nowSeconds: () => number;
  private nextId = 1;
  private offline = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** the safe and finalized hashes of the last forkchoiceUpdated, repeated when a payload is built */
  private safeBlockHash: Uint8Array = ZERO_HASH;
  private finalizedBlockHash: Uint8Array = ZERO_HASH;
  /** what the engine said it supports (engine_exchangeCapabilities), null before it answered */
  capabilities: Set<string> | null = null;

  constructor(opts: HttpEngineOptions) {
    this.url = opts.url;
    this.secret = opts.jwtSecret;
    this.probeIntervalMs = opts.probeIntervalMs ?? 5_000;
    this.fetch = opts.fetch ?? fetch;
    this.nowSeconds = opts.nowSeconds ?? (() => Date.now() / 1000);
  }

  isOffline(): boolean {
    return this.offline;
  }

  /** Exchanges capabilities (logging what the engine lacks); an unreachable engine is reported and probed, not fatal. */
  async start(): Promise<void> {
    await this.exchangeCapabilities().catch(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  async exchangeCapabilities(): Promise<string[]> {
    const result = await this.call("engine_exchangeCapabilities", [CONSENSUS_CAPABILITIES], 1);
    if (!Array.isArray(result) || !result.every((m) => typeof m === "string")) throw new EngineJsonError("engine_exchangeCapabilities: not a list of method names");
    const first = this.capabilities === null;
    this.capabilities = new Set(result);
    const missing = CONSENSUS_CAPABILITIES.filter((m) => !this.capabilities!.has(m));
    if (first && missing.length === 0) log.info({url: this.url}, "execution engine connected");
    else if (first) log.warn({url: this.url, missing}, "execution engine connected, but it lacks methods this node may call");
    return result;
  }

  async notifyNewPayload(fork: string, payload: ExecutionPayload, context?: NewPayloadContext): Promise<PayloadStatus> {
    const methods = engineMethodsOf(fork as ForkName);
    const params: unknown[] = [serializePayload(payload)];
    if (versionOf(methods.newPayload) >= 3) {
      if (!context) throw new Error(`${methods.newPayload} needs the block's versioned hashes and parent root`);
      params.push(context.versionedHashes.map(data), data(context.parentBeaconBlockRoot));
      if (versionOf(methods.newPayload) >= 4) params.push(serializeExecutionRequests(context.executionRequests ?? {deposits: [], withdrawals: [], consolidations: []}));
    }
    return parsePayloadStatus(await this.call(methods.newPayload, params, 1), methods.newPayload);
  }

  async notifyForkchoiceUpdate(headBlockHash: Uint8Array, safeBlockHash: Uint8Array, finalizedBlockHash: Uint8Array, fork?: string): Promise<PayloadStatus> {
    this.safeBlockHash = safeBlockHash;
    this.finalizedBlockHash = finalizedBlockHash;
    const method = engineMethodsOf((fork ?? "fulu") as ForkName).forkchoiceUpdated;
    const state = {headBlockHash: data(headBlockHash), safeBlockHash: data(safeBlockHash), finalizedBlockHash: data(finalizedBlockHash)};
    const result = parseObject(await this.call(method, [state, null], 1), method);
    return parsePayloadStatus(result.payloadStatus, method);
  }

  async buildPayload(fork: string, parent: ParentPayload, attributes: PayloadAttributes): Promise<BuiltPayload> {
    const forkName = fork as ForkName;
    const methods = engineMethodsOf(forkName);
    const state = {headBlockHash: data(parent.blockHash), safeBlockHash: data(this.safeBlockHash), finalizedBlockHash: data(this.finalizedBlockHash)};
    const updated = parseObject(await this.call(methods.forkchoiceUpdated, [state, serializePayloadAttributes(forkName, attributes)], 0), methods.forkchoiceUpdated);
    const status = parsePayloadStatus(updated.payloadStatus, methods.forkchoiceUpdated);
    if (typeof updated.payloadId !== "string") {
      throw new Error(`the execution engine started no payload on ${data(parent.blockHash)} (status ${status.status}${status.validationError ? `: ${status.validationError}` : ""})`);
    }
    const payloadId = data(parseData(updated.payloadId, "payloadId", 8));
    const result = await this.call(methods.getPayload, [payloadId], 0);
    const none = {deposits: [], withdrawals: [], consolidations: []};
    // engine_getPayloadV1 answers the payload itself; later versions wrap it with its value
    if (methods.getPayload === "engine_getPayloadV1") {
      return {payload: parsePayload(forkName, result), blobsBundle: EMPTY_BLOBS_BUNDLE, executionRequests: none, blockValue: 0n};
    }
    const r = parseObject(result, methods.getPayload);
    return {
      payload: parsePayload(forkName, r.executionPayload),
      blobsBundle: versionOf(methods.getPayload) >= 3 ? parseBlobsBundle(r.blobsBundle) : EMPTY_BLOBS_BUNDLE,
      executionRequests: versionOf(methods.getPayload) >= 4 ? parseExecutionRequests(r.executionRequests) : none,
      blockValue: parseQuantity(r.blockValue, "blockValue"),
    };
  }

  /**
   * engine_getBlobs of the fork: the blobs (and proofs) the engine's pool holds for these versioned
   * hashes, null where one is missing (V1), or null for all when any is missing (V2).
   */
  async getBlobs(fork: string, versionedHashes: Uint8Array[]): Promise<Array<BlobAndProofs | null> | null> {
    const method = engineMethodsOf(fork as ForkName).getBlobs;
    if (method === null) throw new Error(`fork ${fork} has no blobs`);
    const result = await this.call(method, [versionedHashes.map(data)], 1);
    if (result === null) return null;
    if (!Array.isArray(result) || result.length !== versionedHashes.length) throw new EngineJsonError(`${method}: not one entry per versioned hash`);
    return result.map((item, i) => {
      if (item === null) return null;
      const o = parseObject(item, `${method}[${i}]`);
      const proofs = method === "engine_getBlobsV1" ? [o.proof] : o.proofs;
      if (!Array.isArray(proofs)) throw new EngineJsonError(`${method}[${i}]: no proofs`);
      return {blob: parseData(o.blob, `${method}[${i}].blob`), proofs: proofs.map((p, j) => parseData(p, `${method}[${i}].proofs[${j}]`, 48))};
    });
  }

  /**
   * One JSON-RPC call with the method's timeout, repeated up to `retries` times when no answer
   * came in time. A connection that failed at once (the engine closed an idle keep-alive socket
   * as it was reused, or is down) is tried once more in any case: nothing was waited for.
   */
  private async call(method: string, params: unknown[], retries: number): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.post(method, params);
        this.markOnline();
        return result;
      } catch (e) {
        if (!(e instanceof EngineUnavailableError)) {
          // it answered: up, even if it refused the call
          this.markOnline();
          throw e;
        }
        if (attempt >= (e.timedOut ? retries : Math.max(retries, 1))) {
          this.markOffline(e.message);
          throw e;
        }
      }
    }
  }

  private async post(method: string, params: unknown[]): Promise<unknown> {
    const timeoutMs = engineTimeoutMs(method);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    const id = this.nextId++;
    let body: unknown;
    try {
      const res = await this.fetch(this.url, {
        method: "POST",
        headers: {"content-type": "application/json", authorization: `Bearer ${createJwt(this.secret, this.nowSeconds())}`},
        body: JSON.stringify({jsonrpc: "2.0", id, method, params}),
        signal: abort.signal,
      });
      if (res.status === 401 || res.status === 403) {
        throw new EngineUnavailableError(`${method}: the engine refused the JWT (HTTP ${res.status}): is --jwt-secret the engine's secret, and are both clocks right?`);
      }
      const text = await res.text();
      try {
        body = JSON.parse(text);
      } catch {
        throw new EngineUnavailableError(`${method}: HTTP ${res.status}, not a JSON-RPC answer`);
      }
    } catch (e) {
      if (e instanceof EngineUnavailableError) throw e;
      if (abort.signal.aborted) throw new EngineUnavailableError(`${method}: no answer within ${timeoutMs} ms`, true);
      throw new EngineUnavailableError(`${method}: ${(e as Error & {cause?: Error}).cause?.message ?? (e as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    const reply = parseObject(body, method);
    if (reply.error !== undefined && reply.error !== null) {
      const err = parseObject(reply.error, `${method} error`);
      throw new EngineRpcError(method, Number(err.code), String(err.message));
    }
    if (!("result" in reply)) throw new EngineJsonError(`${method}: the answer has neither result nor error`);
    return reply.result;
  }

  private markOffline(reason: string): void {
    if (!this.offline) {
      this.offline = true;
      log.warn({url: this.url, reason}, "execution engine unreachable: blocks cannot be verified or produced until it answers again");
    }
    this.scheduleProbe();
  }

  private markOnline(): void {
    if (!this.offline) return;
    this.offline = false;
    log.info({url: this.url}, "execution engine is back online");
  }

  private scheduleProbe(): void {
    if (this.stopped || this.probeTimer) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      // a failed probe marks it offline again, which schedules the next one
      void this.exchangeCapabilities().catch(() => undefined);
    }, this.probeIntervalMs);
    this.probeTimer.unref?.();
  }
}

export function parsePayloadStatus(value: unknown, method: string): PayloadStatus {
  const o = parseObject(value, `${method} payloadStatus`);
  const status = o.status as PayloadValidity;
  if (!STATUSES.includes(status)) throw new EngineJsonError(`${method}: unknown payload status ${JSON.stringify(o.status)}`);
  const latestValidHash = o.latestValidHash === null || o.latestValidHash === undefined ? null : parseData(o.latestValidHash, "latestValidHash", 32);
  return {status, latestValidHash, validationError: typeof o.validationError === "string" ? o.validationError : null};
}
