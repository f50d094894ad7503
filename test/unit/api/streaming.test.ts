import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {type CachedBeaconStateElectra, processSlots} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {createServer} from "node:http";
import {connect} from "node:net";
import type {AddressInfo} from "node:net";
import {createApiClient, httpTransport, type ApiClient} from "../../../src/api/client.ts";
import {ValidatorResponseType, writeValidatorResponse} from "../../../src/api/routes/beacon.ts";
import {markShared} from "../../../src/api/jsonText.ts";
import {createApiHandlers, inProcessTransport, startRestServer, type RestServer} from "../../../src/api/server/index.ts";
import {bufferLimits, writeChunks} from "../../../src/api/server/writeChunks.ts";
import {CHUNK_CHARS, coalesce, envelopeChunks, streamedListData, viewJsonChunks} from "../../../src/api/streaming.ts";
import {pieceTexts, type JsonPiece} from "../../../src/api/wire.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let server: RestServer;
let http: ApiClient;
let local: ApiClient;
/** a state whose lists are not all empty (pending queues, changed balances) at slot 5 */
let busy: CachedBeaconStateElectra;

beforeAll(async () => {
  t = createTestContext();
  busy = processSlots(t.state.clone(), 5) as CachedBeaconStateElectra;
  busy.balances.set(3, 31_000_000_000);
  busy.pendingConsolidations.push(ssz.electra.PendingConsolidation.toViewDU({sourceIndex: 1, targetIndex: 2}));
  busy.pendingDeposits.push(ssz.electra.PendingDeposit.toViewDU({...ssz.electra.PendingDeposit.defaultValue(), amount: 5, slot: 4}));
  busy.commit();
  t.chain.addState(busy);
  t.chain.slot = 5;
  server = await startRestServer({port: 0, address: "127.0.0.1"}, t.ctx);
  http = createApiClient(httpTransport(`http://127.0.0.1:${server.port}`));
  local = createApiClient(inProcessTransport(t.ctx));
});
afterAll(() => server.close());

/**
 * A raw HTTP/1.1 GET: the response headers and the body's chunks as framed on the wire (chunked
 * encoding); `complete` when the closing zero-size chunk came.
 */
function rawGet(port: number, path: string): Promise<{head: string; chunks: string[]; complete: boolean}> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`));
    const parts: Buffer[] = [];
    socket.on("data", (d) => parts.push(d));
    socket.on("error", reject);
    socket.on("end", () => {
      const raw = Buffer.concat(parts).toString("latin1");
      const split = raw.indexOf("\r\n\r\n");
      const chunks: string[] = [];
      let rest = raw.slice(split + 4);
      let complete = false;
      for (;;) {
        const lineEnd = rest.indexOf("\r\n");
        const size = lineEnd < 0 ? NaN : parseInt(rest.slice(0, lineEnd), 16);
        complete = size === 0;
        if (!(size > 0) || rest.length < lineEnd + 2 + size) break;
        chunks.push(Buffer.from(rest.slice(lineEnd + 2, lineEnd + 2 + size), "latin1").toString("utf8"));
        rest = rest.slice(lineEnd + 2 + size + 2);
      }
      resolve({head: raw.slice(0, split), chunks, complete});
    });
  });
}

describe("JSON in pieces is the same JSON", () => {
  it("a state's tree view, written field by field and element by element, is exactly JSON.stringify of its value", () => {
    const pieces = [...viewJsonChunks(busy)];
    const whole = JSON.stringify(ssz.fulu.BeaconState.toJson(busy.toValue() as never));
    expect(pieces.length).toBeGreaterThan(64);
    expect(pieces.join("")).toBe(whole);
    expect(JSON.parse(pieces.join(""))).toEqual(JSON.parse(whole));
  });

  it("a lazy list is exactly JSON.stringify of its values, and can be written twice", () => {
    const codec = streamedListData(ValidatorResponseType);
    const values = [0, 1].map((index) => ({index, balance: 5, status: "active_ongoing", validator: busy.validators.getReadonly(index).toValue()}));
    expect([...codec.toJsonChunks!(values, {})!].join("")).toBe(JSON.stringify(codec.toJson(values, {})));
    expect([...codec.toJsonChunks!([], {})!].join("")).toBe("[]");
  });

  it("a kept list (shared, of shared items) is served as its bytes, the same text, made once", () => {
    const codec = streamedListData(ValidatorResponseType, undefined, writeValidatorResponse);
    const values = markShared([0, 1, 2].map((index) => markShared({index, balance: 5, status: "active_ongoing", validator: busy.validators.getReadonly(index).toValue()})));
    expect(codec.toJsonChunks!(values, {})).toBeUndefined();
    const bytes = codec.toJsonBytes!(values, {})!;
    expect(Buffer.concat(bytes).toString()).toBe(JSON.stringify(codec.toJson(values, {})));
    expect(codec.toJsonBytes!(values, {})![0]).toBe(bytes[0]);
  });

  it("the envelope keeps the metadata first and `data` last, as JSON.stringify does", () => {
    expect([...envelopeChunks({version: "fulu", finalized: false}, ["[1", ",2]"])].join("")).toBe(JSON.stringify({version: "fulu", finalized: false, data: [1, 2]}));
    expect([...envelopeChunks({}, ["{}"])].join("")).toBe('{"data":{}}');
  });

  it("pieces are grouped into chunks of about CHUNK_CHARS", () => {
    const chunks = [...coalesce(viewJsonChunks(busy))];
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.length).toBeGreaterThanOrEqual(CHUNK_CHARS);
    expect(chunks.join("")).toBe([...viewJsonChunks(busy)].join(""));
  });
});

/** The head part of a raw answer: its headers by lowercase name. */
function headers(head: string): Map<string, string> {
  return new Map(head.split("\r\n").slice(1).map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
}

describe("Content-Length on ordinary answers, chunks only past the buffer limit", () => {
  const defaultLimit = bufferLimits.maxBufferedBytes;
  afterAll(() => {
    bufferLimits.maxBufferedBytes = defaultLimit;
  });

  it("the limit is 1 MiB", () => {
    expect(defaultLimit).toBe(1024 * 1024);
  });

  it("one validator (a listed answer the node produces in pieces) comes whole, with Content-Length, not chunked", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/eth/v1/beacon/states/head/validators?id=1`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect(res.headers.get("content-length")).toBe(String(body.length));
    expect(JSON.parse(body.toString("utf8")).data.map((v: {index: string}) => v.index)).toEqual(["1"]);
  });

  it("an answer of exactly the limit is whole; one byte more is chunked", async () => {
    const answerBytes = Number((await fetch(`http://127.0.0.1:${server.port}/eth/v1/beacon/states/head/validators`)).headers.get("content-length"));
    bufferLimits.maxBufferedBytes = answerBytes;
    const atLimit = await rawGet(server.port, "/eth/v1/beacon/states/head/validators");
    expect(headers(atLimit.head).get("content-length")).toBe(String(answerBytes));
    bufferLimits.maxBufferedBytes = answerBytes - 1;
    const overLimit = await rawGet(server.port, "/eth/v1/beacon/states/head/validators");
    expect(headers(overLimit.head).get("transfer-encoding")).toBe("chunked");
    expect(Buffer.byteLength(overLimit.chunks.join(""))).toBe(answerBytes);
    bufferLimits.maxBufferedBytes = defaultLimit;
  });
});

describe("streamed answers over HTTP", () => {
  let defaultLimit: number;
  /** these answers are small: a low buffer limit makes the server stream them */
  beforeAll(() => {
    defaultLimit = bufferLimits.maxBufferedBytes;
    bufferLimits.maxBufferedBytes = 1024;
  });
  afterAll(() => {
    bufferLimits.maxBufferedBytes = defaultLimit;
  });

  it("getStateValidators arrives in several chunks that join to the unstreamed JSON", async () => {
    const {head, chunks, complete} = await rawGet(server.port, "/eth/v1/beacon/states/head/validators");
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(complete).toBe(true);
    expect(head.toLowerCase()).toContain("transfer-encoding: chunked");
    expect(head.toLowerCase()).not.toContain("content-length");
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const {data, meta} = await local.request("getStateValidators", {stateId: "head"});
    const unstreamed = JSON.stringify({execution_optimistic: meta.executionOptimistic, finalized: meta.finalized, data: data.map((v) => ValidatorResponseType.toJson(v))});
    expect(chunks.join("")).toBe(unstreamed);
  });

  it("getStateV2 (JSON) arrives in chunks that join to exactly the unstreamed JSON of the state", async () => {
    const {chunks} = await rawGet(server.port, "/eth/v2/debug/beacon/states/5");
    expect(chunks.length).toBeGreaterThan(2);
    const unstreamed = JSON.stringify({version: "fulu", execution_optimistic: false, finalized: false, data: ssz.fulu.BeaconState.toJson(busy.toValue() as never)});
    expect(chunks.join("")).toBe(unstreamed);
  });

  it("the in-process handlers give the same bytes as HTTP", async () => {
    const handlers = createApiHandlers(t.ctx);
    for (const [operationId, path, params] of [
      ["getStateValidators", "/eth/v1/beacon/states/head/validators", {state_id: "head"}],
      ["getStateV2", "/eth/v2/debug/beacon/states/5", {state_id: "5"}],
      ["getStateValidatorBalances", "/eth/v1/beacon/states/head/validator_balances", {state_id: "head"}],
    ] as const) {
      const wire = await handlers[operationId]({params, query: {}, headers: {}});
      const {chunks} = await rawGet(server.port, path);
      expect([...pieceTexts(wire.body as Iterable<JsonPiece>)].join("")).toBe(chunks.join(""));
    }
  });

  it("the in-process client reads what the HTTP client reads (JSON and SSZ)", async () => {
    expect(await local.request("getStateV2", {stateId: 5})).toEqual(await http.request("getStateV2", {stateId: 5}));
    const sszOverHttp = await http.request("getStateV2", {stateId: 5}, {format: "ssz"});
    expect(await local.request("getStateV2", {stateId: 5}, {format: "ssz"})).toEqual(sszOverHttp);
    expect(ssz.fulu.BeaconState.hashTreeRoot(sszOverHttp.data as never)).toEqual(busy.hashTreeRoot());
    expect(await local.request("getStateValidators", {stateId: "head", id: [1, 2]})).toEqual(await http.request("getStateValidators", {stateId: "head", id: [1, 2]}));
  });
});

describe("writeChunks", () => {
  /** A server answering every request with writeChunks of `pieces()`. */
  async function serve(pieces: () => Iterable<JsonPiece>, run: (port: number) => Promise<void>): Promise<void> {
    const srv = createServer((_req, res) => {
      res.setHeader("Content-Type", "application/json");
      void writeChunks(res, pieces());
    });
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    try {
      await run((srv.address() as AddressInfo).port);
    } finally {
      srv.close();
    }
  }
  const failing = function* () {
    yield '{"data":[' + "1,".repeat(CHUNK_CHARS);
    throw new Error("state read failed");
  };

  it("pieces given as text and as bytes are sent as one body of their bytes, with its Content-Length", async () => {
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    await serve(() => ['{"graffiti":"é✓",', text('"data":[1,'), "2", text("]"), "}"], async (port) => {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get("content-length")).toBe(String(body.length));
      expect(body.toString()).toBe(JSON.stringify({graffiti: "é✓", data: [1, 2]}));
    });
  });

  it("a piece that fails while the answer is still being gathered gives a 500 in the spec's error shape", async () => {
    await serve(failing, async (port) => {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({code: 500, message: "Internal server error"});
    });
  });

  it("drops the connection (no complete answer) when producing a piece fails after the status was sent", async () => {
    const defaultLimit = bufferLimits.maxBufferedBytes;
    bufferLimits.maxBufferedBytes = 1024;
    try {
      await serve(failing, async (port) => {
        // the connection is dropped: whatever of the status and the first piece got out, the answer never completes
        const {chunks, complete} = await rawGet(port, "/");
        expect(complete).toBe(false);
        expect(chunks.length).toBeLessThanOrEqual(1);
      });
    } finally {
      bufferLimits.maxBufferedBytes = defaultLimit;
    }
  });
});
