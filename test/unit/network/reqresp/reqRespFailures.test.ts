import {afterAll, beforeAll, beforeEach, describe, expect, it} from "@jest/globals";
import type {Libp2p, Stream} from "@libp2p/interface";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {ssz} from "@lodestar/types";
import {ByteSource} from "../../../../src/network/reqresp/byteSource.ts";
import {encodePayload, encodeSuccessChunk, encodeVarint, readResponseChunk} from "../../../../src/network/reqresp/encoding.ts";
import {ReqRespError, ResponseError, RespStatus} from "../../../../src/network/reqresp/errors.ts";
import {protocolId} from "../../../../src/network/reqresp/protocols.ts";
import type {ReqResp} from "../../../../src/network/reqresp/reqResp.ts";
import {answerRaw, blockAt, chainHandlers, createNode, digestAtSlot, reqRespOn, statusOf, type Misbehaviour} from "./wireSetup.ts";

/**
 * A is the requester. B runs ReqResp with a fake clock for its rate limits; C is a raw libp2p node
 * whose handlers break the protocol in the ways each test sets.
 */
let a: Libp2p;
let b: Libp2p;
let c: Libp2p;
let reqA: ReqResp;
let fastA: ReqResp;
let reqB: ReqResp;
let clock = 1_000_000;
const reportsA: Misbehaviour[] = [];
const reportsB: Misbehaviour[] = [];
const nodeB = chainHandlers([blockAt(3), blockAt(4)], statusOf(4), 42);
let blockHandlerFailure: Error | null = null;
const rawBehaviour = new Map<string, (stream: Stream) => Promise<void>>();
const RAW_PROTOCOLS = [
  protocolId("ping", 1),
  protocolId("status", 1),
  protocolId("metadata", 1),
  protocolId("beacon_blocks_by_range", 2),
  protocolId("beacon_blocks_by_root", 1),
];

beforeAll(async () => {
  [a, b, c] = await Promise.all([createNode(), createNode(), createNode()]);
  const byRoot = nodeB.handlers.onBeaconBlocksByRoot;
  nodeB.handlers.onBeaconBlocksByRoot = (peer, roots) => {
    if (blockHandlerFailure) throw blockHandlerFailure;
    return byRoot(peer, roots);
  };
  reqA = reqRespOn(a, chainHandlers([], statusOf(1), 1).handlers, reportsA);
  fastA = reqRespOn(a, chainHandlers([], statusOf(1), 1).handlers, reportsA, {timeouts: {ttfbMs: 150, respMs: 150}});
  reqB = reqRespOn(b, nodeB.handlers, reportsB, {
    now: () => clock,
    rateLimits: {quotas: {ping: {tokens: 2, periodMs: 60_000}, status: {tokens: 1, periodMs: 100}}},
    timeouts: {respMs: 300},
  });
  await Promise.all([reqA.start(), reqB.start()]);
  await c.handle(RAW_PROTOCOLS, (stream) => rawBehaviour.get(stream.protocol)?.(stream));
  await Promise.all([a.dial(b.getMultiaddrs()[0]), a.dial(c.getMultiaddrs()[0])]);
});

afterAll(async () => {
  await Promise.all([reqA.stop(), reqB.stop()]);
  await Promise.all([a.stop(), b.stop(), c.stop()]);
});

beforeEach(() => {
  clock += 3_600_000; // every bucket full again
  reportsA.length = 0;
  reportsB.length = 0;
  rawBehaviour.clear();
  blockHandlerFailure = null;
});

const B = (): string => b.peerId.toString();
const C = (): string => c.peerId.toString();

async function expectCode(promise: Promise<unknown>, code: string, message?: string | RegExp): Promise<ReqRespError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e
  );
  expect(error).toBeInstanceOf(ReqRespError);
  expect((error as ReqRespError).code).toBe(code);
  if (message) expect((error as ReqRespError).message).toMatch(message);
  return error as ReqRespError;
}

/** Sends raw request bytes to B and reads the first response chunk. */
async function rawRequestToB(protocol: string, bytes: Uint8Array): Promise<unknown> {
  const stream = await a.dialProtocol(b.peerId, protocol);
  const source = new ByteSource(stream);
  stream.send(bytes);
  await stream.close();
  return readResponseChunk(source, false, () => ({min: 0, max: 1 << 20}));
}

describe("req/resp failures", () => {
  it("a handler that throws answers ServerError with the first line of its message", async () => {
    blockHandlerFailure = new Error("database on fire\n    at stack frame");
    const error = await expectCode(reqA.beaconBlocksByRoot(B(), [new Uint8Array(32)]), "SERVER_ERROR");
    expect(error.status).toBe(RespStatus.SERVER_ERROR);
    expect(error.peerMessage).toBe("database on fire");
    blockHandlerFailure = new ResponseError(RespStatus.RESOURCE_UNAVAILABLE, "pruned");
    const pruned = await expectCode(reqA.beaconBlocksByRoot(B(), [new Uint8Array(32)]), "RESOURCE_UNAVAILABLE");
    expect(pruned.peerMessage).toBe("pruned");
  });

  it("a malformed request gets InvalidRequest, and the peer is reported", async () => {
    const garbage = await rawRequestToB(protocolId("status", 1), Uint8Array.of(0x54, 1, 2, 3));
    expect(garbage).toMatchObject({kind: "error", status: RespStatus.INVALID_REQUEST});
    const trailing = await rawRequestToB(protocolId("ping", 1), Buffer.concat([encodePayload(new Uint8Array(8)), Uint8Array.of(0)]));
    expect(trailing).toEqual({kind: "error", status: RespStatus.INVALID_REQUEST, message: "bytes after the request"});
    const stepZero = ssz.phase0.BeaconBlocksByRangeRequest.serialize({startSlot: 0, count: 1, step: 0});
    expect(await rawRequestToB(protocolId("beacon_blocks_by_range", 2), encodePayload(stepZero))).toEqual({
      kind: "error",
      status: RespStatus.INVALID_REQUEST,
      message: "step is 0",
    });
    expect(reportsB).toHaveLength(3);
    expect(reportsB.every((r) => r.peer === a.peerId.toString() && r.severity === "mid")).toBe(true);
  });

  it("over its rate limit a peer gets ResourceUnavailable and is reported; the quota refills with the clock", async () => {
    expect(await reqA.ping(B(), BigInt(1))).toBe(BigInt(42));
    expect(await reqA.ping(B(), BigInt(1))).toBe(BigInt(42));
    const error = await expectCode(reqA.ping(B(), BigInt(1)), "RESOURCE_UNAVAILABLE");
    expect(error.peerMessage).toBe("rate limited");
    expect(reportsB).toEqual([{peer: a.peerId.toString(), reason: "over the ping rate limit", severity: "mid"}]);
    clock += 30_000; // one token back
    expect(await reqA.ping(B(), BigInt(1))).toBe(BigInt(42));
  });

  it("a request the bucket covers soon is held back, not refused (the spec's rate limiting)", async () => {
    // status: 1 token per 100 ms; the second waits ~100 ms (the clock is frozen, so the wait is exact)
    await reqA.status(B(), statusOf(1));
    const start = performance.now();
    await reqA.status(B(), statusOf(1));
    expect(performance.now() - start).toBeGreaterThanOrEqual(90);
    expect(reportsB).toEqual([]);
  });

  it("a request that does not arrive within RESP_TIMEOUT is dropped without an answer", async () => {
    const stream = await a.dialProtocol(b.peerId, protocolId("ping", 1));
    const source = new ByteSource(stream);
    stream.send(Uint8Array.of(8)); // a length prefix, then nothing
    const start = performance.now();
    const outcome = await readResponseChunk(source, false, () => ({min: 0, max: 8})).catch((e: ReqRespError) => e.code);
    expect(outcome === null || outcome === "STREAM_ERROR").toBe(true);
    expect(performance.now() - start).toBeGreaterThanOrEqual(250);
  });

  it("a peer that keeps the stream open after the last chunk asked for still gives its answer", async () => {
    rawBehaviour.set(protocolId("ping", 1), async (stream) => void stream.send(encodeSuccessChunk(ssz.phase0.Ping.serialize(BigInt(9)))));
    expect(await fastA.ping(C(), BigInt(1))).toBe(BigInt(9));
  });

  it("a peer that never answers: TTFB timeout; one that stalls mid-chunk: response timeout", async () => {
    rawBehaviour.set(protocolId("ping", 1), async () => {});
    await expectCode(fastA.ping(C(), BigInt(1)), "TTFB_TIMEOUT");
    rawBehaviour.set(protocolId("status", 1), async (stream) => void stream.send(Uint8Array.of(0, 0x54)));
    await expectCode(fastA.status(C(), statusOf(1)), "RESP_TIMEOUT", "response chunk 0");
  });

  it("garbage and oversized lengths are invalid responses, the peer is reported, and the node carries on", async () => {
    rawBehaviour.set(protocolId("metadata", 1), (stream) => answerRaw(stream, Uint8Array.of(0, ...new Array(11).fill(0xff))));
    await expectCode(reqA.metadata(C()), "INVALID_RESPONSE", "longer than 10 bytes");
    rawBehaviour.set(protocolId("ping", 1), (stream) => answerRaw(stream, Buffer.concat([Uint8Array.of(0), encodeVarint(9), new Uint8Array(20)])));
    await expectCode(reqA.ping(C(), BigInt(1)), "INVALID_RESPONSE", "length prefix 9 outside the type's bounds [8, 8]");
    rawBehaviour.set(protocolId("ping", 1), (stream) => answerRaw(stream, new Uint8Array()));
    await expectCode(reqA.ping(C(), BigInt(1)), "INVALID_RESPONSE", "no response chunk");
    const pong = encodeSuccessChunk(ssz.phase0.Ping.serialize(BigInt(5)));
    rawBehaviour.set(protocolId("ping", 1), (stream) => answerRaw(stream, Buffer.concat([pong, pong])));
    await expectCode(reqA.ping(C(), BigInt(1)), "INVALID_RESPONSE", "more than the 1 chunks");
    expect(reportsA.map((r) => [r.peer, r.severity])).toEqual(Array.from({length: 4}, () => [C(), "high"]));
    expect(await reqA.ping(B(), BigInt(1))).toBe(BigInt(42));
  });

  it("block responses must keep to the request: count, order, range and context bytes", async () => {
    const chunkAt = (slot: number, digest = digestAtSlot(slot)): Uint8Array => encodeSuccessChunk(blockAt(slot).bytes, digest);
    const range = protocolId("beacon_blocks_by_range", 2);
    rawBehaviour.set(range, (stream) => answerRaw(stream, Buffer.concat([chunkAt(1), chunkAt(2), chunkAt(3)])));
    await expectCode(reqA.beaconBlocksByRange(C(), {startSlot: 1, count: 2, step: 1}), "INVALID_RESPONSE", "more than the 2 chunks");
    rawBehaviour.set(range, (stream) => answerRaw(stream, Buffer.concat([chunkAt(2), chunkAt(1)])));
    await expectCode(reqA.beaconBlocksByRange(C(), {startSlot: 0, count: 4, step: 1}), "INVALID_RESPONSE", "does not ascend");
    rawBehaviour.set(range, (stream) => answerRaw(stream, chunkAt(9)));
    await expectCode(reqA.beaconBlocksByRange(C(), {startSlot: 0, count: 4, step: 1}), "INVALID_RESPONSE", "not in the requested range");
    rawBehaviour.set(range, (stream) => answerRaw(stream, chunkAt(1, Uint8Array.of(1, 2, 3, 4))));
    await expectCode(reqA.beaconBlocksByRange(C(), {startSlot: 0, count: 4, step: 1}), "INVALID_RESPONSE", "unknown fork digest 01020304");
    // an altair digest on phase0 bytes: decoded as an altair block, which these bytes are not
    rawBehaviour.set(range, (stream) => answerRaw(stream, chunkAt(1, digestAtSlot(9))));
    await expectCode(reqA.beaconBlocksByRange(C(), {startSlot: 0, count: 4, step: 1}), "INVALID_RESPONSE");
    expect(reportsA).toHaveLength(5);
  });

  it("v1 block responses (no context bytes) may only carry phase0 blocks", async () => {
    const root = protocolId("beacon_blocks_by_root", 1);
    rawBehaviour.set(root, (stream) => answerRaw(stream, encodeSuccessChunk(blockAt(3).bytes)));
    const got = await reqA.beaconBlocksByRoot(C(), [blockAt(3).root]);
    expect(got.map((block) => block.message.slot)).toEqual([3]);
    rawBehaviour.set(root, (stream) => answerRaw(stream, encodeSuccessChunk(blockAt(3, 1).bytes)));
    await expectCode(reqA.beaconBlocksByRoot(C(), [blockAt(3).root]), "INVALID_RESPONSE", "was not requested");
    // a phase0-shaped block at an altair slot
    const late = ssz.phase0.SignedBeaconBlock.defaultValue();
    late.message.slot = 9;
    rawBehaviour.set(root, (stream) => answerRaw(stream, encodeSuccessChunk(ssz.phase0.SignedBeaconBlock.serialize(late))));
    const lateRoot = ssz.phase0.BeaconBlock.hashTreeRoot(late.message);
    await expectCode(reqA.beaconBlocksByRoot(C(), [lateRoot]), "INVALID_RESPONSE", "past phase0");
  });

  it("a peer without the protocol, an unknown peer, an aborted request", async () => {
    await expectCode(reqA.blobSidecarsByRange(C(), {startSlot: 0, count: 1}), "UNSUPPORTED_PROTOCOL");
    const stranger = peerIdFromPrivateKey(await generateKeyPair("secp256k1")).toString();
    await expectCode(reqA.ping(stranger, BigInt(1)), "DIAL_ERROR");
    rawBehaviour.set(protocolId("ping", 1), async () => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expectCode(reqA.ping(C(), BigInt(1), controller.signal), "ABORTED");
  });

  it("a known peer whose connection closed is not dialled again by a request (a cut link stays cut): DIAL_ERROR", async () => {
    const d = await createNode();
    const reqD = reqRespOn(d, chainHandlers([], statusOf(2), 7).handlers, []);
    await reqD.start();
    try {
      await a.dial(d.getMultiaddrs()[0]);
      expect(await reqA.ping(d.peerId.toString(), BigInt(1))).toBe(BigInt(7));
      // A knows D's address (its peer store keeps it), but the connection is gone
      await a.hangUp(d.peerId);
      expect((await a.peerStore.get(d.peerId)).addresses.length).toBeGreaterThan(0);
      await expectCode(reqA.ping(d.peerId.toString(), BigInt(1)), "DIAL_ERROR", "not connected");
      expect(a.getConnections(d.peerId)).toEqual([]);
    } finally {
      await reqD.stop();
      await d.stop();
    }
  });

  it("refuses to send requests the spec does not allow", async () => {
    await expectCode(reqA.beaconBlocksByRange(B(), {startSlot: 0, count: 129, step: 1}), "BAD_REQUEST_ARGUMENT", "exceeds the 128");
    await expectCode(reqA.beaconBlocksByRoot(B(), Array.from({length: 129}, () => new Uint8Array(32))), "BAD_REQUEST_ARGUMENT");
  });
});
