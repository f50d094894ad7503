import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {ssz, type ExecutionPayload} from "@lodestar/types";
import {EngineUnavailableError} from "../../../src/execution/engine.ts";
import {EngineRpcError, HttpExecutionEngine} from "../../../src/execution/httpEngine.ts";
import {verifyJwt} from "../../../src/execution/jwt.ts";

/**
 * The Engine API client against a scripted transport: which method and params each fork sends
 * (engine-api paris.md, shanghai.md, cancun.md, prague.md, osaka.md), the JWT on each request,
 * the spec's timeouts (fake timers) and retries, and el_offline's going and coming.
 */

const SECRET = new Uint8Array(32).fill(7);
const NOW = 1_800_000_000;

interface Sent {
  method: string;
  params: unknown[];
  authorization: string;
}

/** an answer that never comes (the call ends only when the client aborts it) */
const HANG = Symbol("hang");
type Answer = (call: Sent) => unknown;

/** A fetch that records each call and answers `answer(call)` as the JSON-RPC result; "hang" never answers, "refuse" fails to connect. */
function scriptedFetch(answer: Answer | "hang" | "refuse") {
  const sent: Sent[] = [];
  const fetchStub = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(init.body as string);
    const call = {method: body.method, params: body.params, authorization: (init.headers as Record<string, string>).authorization};
    sent.push(call);
    if (answer === "refuse") throw new TypeError("fetch failed", {cause: new Error("connect ECONNREFUSED 127.0.0.1:8551")});
    const result = answer === "hang" ? HANG : answer(call);
    if (result === HANG) {
      return new Promise((_resolve, reject) => init.signal!.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }
    const reply = result instanceof EngineRpcError ? {jsonrpc: "2.0", id: body.id, error: {code: result.code, message: "refused"}} : {jsonrpc: "2.0", id: body.id, result};
    return new Response(JSON.stringify(reply), {status: 200});
  }) as unknown as typeof fetch;
  return {sent, fetchStub};
}

function engineWith(answer: Answer | "hang" | "refuse", probeIntervalMs = 5_000) {
  const {sent, fetchStub} = scriptedFetch(answer);
  const engine = new HttpExecutionEngine({url: "http://127.0.0.1:8551", jwtSecret: SECRET, fetch: fetchStub, nowSeconds: () => NOW, probeIntervalMs});
  return {engine, sent};
}

const VALID = (hash: string) => ({status: "VALID", latestValidHash: hash, validationError: null});
const hex = (b: Uint8Array) => "0x" + Buffer.from(b).toString("hex");

function payloadOf(fork: "bellatrix" | "capella" | "deneb" | "electra" | "fulu"): ExecutionPayload {
  const payload = ssz[fork].ExecutionPayload.defaultValue() as ExecutionPayload;
  payload.blockHash = new Uint8Array(32).fill(0xbb);
  payload.blockNumber = 258;
  payload.baseFeePerGas = 7n;
  return payload;
}

/** Written from the specs' method sections: the versions each fork's payloads go through. */
const SPEC_METHODS = {
  bellatrix: {newPayload: "engine_newPayloadV1", params: 1, forkchoiceUpdated: "engine_forkchoiceUpdatedV1", getPayload: "engine_getPayloadV1"},
  capella: {newPayload: "engine_newPayloadV2", params: 1, forkchoiceUpdated: "engine_forkchoiceUpdatedV2", getPayload: "engine_getPayloadV2"},
  deneb: {newPayload: "engine_newPayloadV3", params: 3, forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV3"},
  electra: {newPayload: "engine_newPayloadV4", params: 4, forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV4"},
  fulu: {newPayload: "engine_newPayloadV4", params: 4, forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV5"},
} as const;

afterEach(() => {
  jest.useRealTimers();
});

describe("HttpExecutionEngine", () => {
  it.each(Object.entries(SPEC_METHODS))("%s: newPayload, forkchoiceUpdated and getPayload versions and params", async (fork, spec) => {
    const payload = payloadOf(fork as "fulu");
    const {engine, sent} = engineWith((call) => {
      if (call.method.startsWith("engine_newPayload")) return VALID(hex(payload.blockHash));
      if (call.method.startsWith("engine_forkchoiceUpdated")) return {payloadStatus: VALID(hex(payload.parentHash)), payloadId: "0x0000000000000001"};
      const executionPayload = sent[0].params[0];
      if (call.method === "engine_getPayloadV1") return executionPayload;
      return {executionPayload, blockValue: "0x2a", blobsBundle: {commitments: [], proofs: [], blobs: []}, shouldOverrideBuilder: false, executionRequests: []};
    });
    const context = {versionedHashes: [new Uint8Array(32).fill(1)], parentBeaconBlockRoot: new Uint8Array(32).fill(2), executionRequests: {deposits: [], withdrawals: [], consolidations: []}};
    expect(await engine.notifyNewPayload(fork, payload, context)).toEqual({status: "VALID", latestValidHash: payload.blockHash, validationError: null});
    expect(sent[0].method).toBe(spec.newPayload);
    expect(sent[0].params).toHaveLength(spec.params);
    const json = sent[0].params[0] as Record<string, unknown>;
    expect(json.blockNumber).toBe("0x102");
    expect(json.baseFeePerGas).toBe("0x7");
    expect(json.gasUsed).toBe("0x0");
    expect("withdrawals" in json).toBe(fork !== "bellatrix");
    expect("blobGasUsed" in json).toBe(spec.params > 1);
    if (spec.params > 1) expect(sent[0].params.slice(1, 3)).toEqual([["0x" + "01".repeat(32)], "0x" + "02".repeat(32)]);
    if (spec.params === 4) expect(sent[0].params[3]).toEqual([]);

    const attrs = {timestamp: 99, prevRandao: new Uint8Array(32), suggestedFeeRecipient: new Uint8Array(20).fill(0xfe), withdrawals: [], parentBeaconBlockRoot: new Uint8Array(32)};
    const built = await engine.buildPayload(fork, {blockHash: payload.parentHash, blockNumber: 257, gasLimit: 1}, attrs);
    expect(sent[1].method).toBe(spec.forkchoiceUpdated);
    const sentAttrs = sent[1].params[1] as Record<string, unknown>;
    expect(sentAttrs.suggestedFeeRecipient).toBe("0x" + "fe".repeat(20));
    expect("withdrawals" in sentAttrs).toBe(fork !== "bellatrix");
    expect("parentBeaconBlockRoot" in sentAttrs).toBe(spec.params > 1);
    expect(sent[2]).toMatchObject({method: spec.getPayload, params: ["0x0000000000000001"]});
    expect(built.payload.blockNumber).toBe(258);
    expect(built.blockValue).toBe(fork === "bellatrix" ? 0n : 42n);
  });

  it("authenticates every request with a fresh HS256 token the engine can verify", async () => {
    const {engine, sent} = engineWith(() => ["engine_newPayloadV4"]);
    await engine.exchangeCapabilities();
    const token = sent[0].authorization.replace(/^Bearer /, "");
    expect(verifyJwt(token, SECRET, NOW)).toBeNull();
    expect(sent[0].params[0]).toEqual(expect.arrayContaining(["engine_newPayloadV4", "engine_forkchoiceUpdatedV3", "engine_getPayloadV5", "engine_getBlobsV2"]));
  });

  it("passes on SYNCING, ACCEPTED, INVALID (with latestValidHash) and INVALID_BLOCK_HASH, and refuses unknown statuses", async () => {
    const lvh = "0x" + "aa".repeat(32);
    for (const answer of [
      {status: "SYNCING", latestValidHash: null, validationError: null},
      {status: "ACCEPTED", latestValidHash: null, validationError: null},
      {status: "INVALID", latestValidHash: lvh, validationError: "bad state root"},
      {status: "INVALID_BLOCK_HASH", latestValidHash: null, validationError: null},
    ]) {
      const {engine} = engineWith(() => answer);
      const status = await engine.notifyNewPayload("capella", payloadOf("capella"));
      expect(status.status).toBe(answer.status);
      expect(status.latestValidHash === null ? null : hex(status.latestValidHash)).toBe(answer.latestValidHash);
    }
    const {engine} = engineWith(() => ({status: "MAYBE", latestValidHash: null}));
    await expect(engine.notifyNewPayload("capella", payloadOf("capella"))).rejects.toThrow(/unknown payload status/);
  });

  it("waits 8 s for newPayload, retries once, then reports the engine offline; getPayload waits 1 s and is not retried", async () => {
    jest.useFakeTimers();
    const {engine, sent} = engineWith("hang");
    const outcome = engine.notifyNewPayload("capella", payloadOf("capella")).catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(7_999);
    expect(sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(2);
    expect(engine.isOffline()).toBe(false);
    await jest.advanceTimersByTimeAsync(8_000);
    const error = await outcome;
    expect(error).toBeInstanceOf(EngineUnavailableError);
    expect((error as Error).message).toMatch(/no answer within 8000 ms/);
    expect(engine.isOffline()).toBe(true);

    const {engine: builder, sent: builderSent} = engineWith((call) =>
      call.method.startsWith("engine_forkchoiceUpdated") ? {payloadStatus: VALID("0x" + "00".repeat(32)), payloadId: "0x0000000000000001"} : HANG
    );
    const attrs = {timestamp: 1, prevRandao: new Uint8Array(32), suggestedFeeRecipient: new Uint8Array(20), withdrawals: []};
    const built = builder.buildPayload("capella", {blockHash: new Uint8Array(32), blockNumber: 1, gasLimit: 1}, attrs).catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(999);
    expect(builderSent).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(await built).toBeInstanceOf(EngineUnavailableError);
    expect(builderSent.map((c) => c.method)).toEqual(["engine_forkchoiceUpdatedV2", "engine_getPayloadV2"]);
  });

  it("probes an unreachable engine and is online again once it answers", async () => {
    jest.useFakeTimers();
    let up = false;
    const {sent, fetchStub} = scriptedFetch(() => ["engine_newPayloadV4"]);
    const flaky = ((url: string, init: RequestInit) => (up ? fetchStub(url, init) : Promise.reject(new TypeError("fetch failed")))) as typeof fetch;
    const engine = new HttpExecutionEngine({url: "http://x", jwtSecret: SECRET, fetch: flaky, nowSeconds: () => NOW, probeIntervalMs: 2_000});
    await engine.start();
    expect(engine.isOffline()).toBe(true);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(engine.isOffline()).toBe(true);
    up = true;
    await jest.advanceTimersByTimeAsync(2_000);
    expect(engine.isOffline()).toBe(false);
    expect(sent.map((c) => c.method)).toEqual(["engine_exchangeCapabilities"]);
    engine.stop();
  });

  it("treats a JSON-RPC error as an answer (online) and a refused JWT as unreachable", async () => {
    const {engine} = engineWith(() => new EngineRpcError("engine_newPayloadV2", -32602, "Invalid params"));
    await expect(engine.notifyNewPayload("capella", payloadOf("capella"))).rejects.toBeInstanceOf(EngineRpcError);
    expect(engine.isOffline()).toBe(false);
    const unauthorized = new HttpExecutionEngine({url: "http://x", jwtSecret: SECRET, fetch: (async () => new Response("", {status: 401})) as typeof fetch});
    await expect(unauthorized.exchangeCapabilities()).rejects.toThrow(/refused the JWT/);
    expect(unauthorized.isOffline()).toBe(true);
    unauthorized.stop();
  });

  it("tries a failed connection once more even on the block-production path, but not a timed-out call", async () => {
    let failures = 1;
    const {sent, fetchStub} = scriptedFetch((call) =>
      call.method.startsWith("engine_forkchoiceUpdated") ? {payloadStatus: VALID("0x" + "00".repeat(32)), payloadId: "0x0000000000000001"} : {executionPayload: {}, blockValue: "0x0"}
    );
    const resetOnce = ((url: string, init: RequestInit) =>
      failures-- > 0 ? Promise.reject(new TypeError("fetch failed", {cause: new Error("read ECONNRESET")})) : fetchStub(url, init)) as typeof fetch;
    const engine = new HttpExecutionEngine({url: "http://x", jwtSecret: SECRET, fetch: resetOnce, nowSeconds: () => NOW});
    const attrs = {timestamp: 1, prevRandao: new Uint8Array(32), suggestedFeeRecipient: new Uint8Array(20), withdrawals: []};
    // the reset forkchoiceUpdated is sent again; the empty payload then fails to decode, which is not retried
    await expect(engine.buildPayload("capella", {blockHash: new Uint8Array(32), blockNumber: 1, gasLimit: 1}, attrs)).rejects.toThrow(/executionPayload/);
    expect(sent.map((c) => c.method)).toEqual(["engine_forkchoiceUpdatedV2", "engine_getPayloadV2"]);
    expect(engine.isOffline()).toBe(false);
  });

  it("takes HTTP 403 as a refused JWT too: unreachable", async () => {
    const unauthorized = new HttpExecutionEngine({url: "http://x", jwtSecret: SECRET, fetch: (async () => new Response("", {status: 403})) as typeof fetch});
    await expect(unauthorized.exchangeCapabilities()).rejects.toThrow(/refused the JWT/);
    expect(unauthorized.isOffline()).toBe(true);
    unauthorized.stop();
  });

  it("asks getBlobs with the fork's version and decodes V1 (one proof, null where missing) and V2 (cell proofs)", async () => {
    const blob = "0x" + "00".repeat(64);
    const proof = "0x" + "cc".repeat(48);
    const {engine, sent} = engineWith((call) => (call.method === "engine_getBlobsV1" ? [{blob, proof}, null] : [{blob, proofs: [proof, proof]}]));
    const v1 = await engine.getBlobs("deneb", [new Uint8Array(32), new Uint8Array(32).fill(1)]);
    expect(v1?.map((b) => b && b.proofs.length)).toEqual([1, null]);
    const v2 = await engine.getBlobs("fulu", [new Uint8Array(32)]);
    expect(v2?.[0]?.proofs).toHaveLength(2);
    expect(sent.map((c) => c.method)).toEqual(["engine_getBlobsV1", "engine_getBlobsV2"]);
    await expect(engine.getBlobs("capella", [])).rejects.toThrow(/no blobs/);
  });
});
