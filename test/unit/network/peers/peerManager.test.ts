import {afterEach, describe, expect, it} from "@jest/globals";
import {BitArray} from "@chainsafe/ssz";
import {peerIdFromString} from "@libp2p/peer-id";
import {createBeaconConfig} from "@lodestar/config";
import type {fulu} from "@lodestar/types";
import {multiaddr} from "@multiformats/multiaddr";
import {once} from "node:events";
import {devChainConfig} from "../../../../src/config/chainConfig.ts";
import type {BeaconLibp2p} from "../../../../src/network/libp2p.ts";
import {loopbackHost} from "../loopbackHost.ts";
import {PeerManager, type PeerManagerOptions} from "../../../../src/network/peers/peerManager.ts";
import {PeerScores} from "../../../../src/network/peers/peerScore.ts";
import {ReqResp} from "../../../../src/network/reqresp/index.ts";
import {GoodbyeReason, type Status} from "../../../../src/network/status.ts";

/**
 * Real libp2p nodes over TCP loopback, each with the real ReqResp and a PeerManager wired as
 * src/network/index.ts wires them; each node's Status is fixed.
 */
const config = createBeaconConfig(devChainConfig({secondsPerSlot: 6, genesisFork: "fulu", forkEpochs: {}}), new Uint8Array(32).fill(7));
const OUR_DIGEST = config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(0));
const OTHER_DIGEST = Uint8Array.from([0xde, 0xad, 0xbe, 0xef]);
const CURRENT_SLOT = 100;
const EVENT_TIMEOUT_MS = 3_000;

const METADATA: fulu.Metadata = {
  seqNumber: 1n,
  attnets: BitArray.fromBoolArray(Array.from({length: 64}, () => false)),
  syncnets: BitArray.fromBoolArray([false, false, false, false]),
  custodyGroupCount: 4,
};

function statusOf(headSlot: number, forkDigest = OUR_DIGEST): Status {
  return {forkDigest, finalizedRoot: new Uint8Array(32), finalizedEpoch: 0, headRoot: new Uint8Array(32).fill(headSlot), headSlot, earliestAvailableSlot: 0};
}

interface TestNode {
  id: string;
  /** the listen multiaddr, with /p2p/<id> */
  addr: string;
  libp2p: BeaconLibp2p;
  scores: PeerScores;
  peers: PeerManager;
  status: Status;
  goodbyes: {peer: string; reason: bigint}[];
  /** resolves with the first goodbye reason this node receives */
  goodbye: Promise<bigint>;
  /** resolves with the peer and sequence number of the first ping this node receives */
  pinged: Promise<{peer: string; seq: bigint}>;
  stop(): Promise<void>;
}

const started: TestNode[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.stop()));
});

const SCORE_CLOCK_MS = 1_800_000_000_000;

/** A node; with `managed: false` its PeerManager is not started (it answers status requests but never checks peers). */
async function startNode(status: Status, opts: Partial<PeerManagerOptions> & {managed?: boolean} = {}): Promise<TestNode> {
  // scores on a clock that stands still: what a test reads back is what was reported, undecayed
  const scores = new PeerScores(() => SCORE_CLOCK_MS);
  const libp2p = await loopbackHost({isBanned: (id) => scores.isBanned(id.toString())});
  const goodbyes: TestNode["goodbyes"] = [];
  let onGoodbye: (reason: bigint) => void = () => undefined;
  const goodbye = new Promise<bigint>((resolve) => (onGoodbye = resolve));
  let onPinged: (ping: {peer: string; seq: bigint}) => void = () => undefined;
  const pinged = new Promise<{peer: string; seq: bigint}>((resolve) => (onPinged = resolve));
  let node: TestNode | undefined;
  // req/resp serves from handlers given at start, once the peer manager exists (as in src/network/index.ts)
  const reqResp = new ReqResp({libp2p, config, currentEpoch: () => 0});
  const peers = new PeerManager(
    {
      libp2p,
      requests: reqResp,
      scores,
      // the node's status as the test sets it (node.status), once the node exists
      ourStatus: () => node?.status ?? status,
      currentSlot: () => CURRENT_SLOT,
      metadataSeq: () => METADATA.seqNumber,
      checkpointRootAt: async () => null,
    },
    {targetPeers: 5, maxPeers: 5, directPeers: [], ...opts}
  );
  await libp2p.start();
  await reqResp.start({
    handlers: {
      onStatus: (peer, theirs) => peers.onStatusRequest(peer, theirs),
      onGoodbye: (peer, reason) => {
        goodbyes.push({peer, reason});
        onGoodbye(reason);
        peers.onGoodbye(peer, reason);
      },
      onPing: (peer, seq) => {
        onPinged({peer, seq});
        return METADATA.seqNumber;
      },
      onMetadata: () => METADATA,
      onBeaconBlocksByRange: async function* () {},
      onBeaconBlocksByRoot: async function* () {},
    },
    onPeerMisbehaved: (peer, reason, severity) => peers.report(peer, severity, reason),
  });
  if (opts.managed !== false) peers.start();
  const id = libp2p.peerId.toString();
  node = {
    id,
    addr: libp2p.getMultiaddrs()[0].toString(),
    libp2p,
    scores,
    peers,
    status,
    goodbyes,
    goodbye,
    pinged,
    stop: async () => {
      await peers.stop();
      await reqResp.stop();
      await libp2p.stop();
    },
  };
  started.push(node);
  return node;
}

const timeout = () => ({signal: AbortSignal.timeout(EVENT_TIMEOUT_MS)});

/** Resolves with the status `node` accepted from `peer` (at once if it has it already). */
async function statusFrom(node: TestNode, peer: TestNode): Promise<Status> {
  const known = node.peers.get(peer.id)?.status;
  if (known) return known;
  for (;;) {
    const [from, status] = (await once(node.peers, "status", timeout())) as [string, Status];
    if (from === peer.id) return status;
  }
}

/** Resolves when `node` has seen `peer` disconnect (at once if it has already). */
async function disconnected(node: TestNode, peer: TestNode): Promise<void> {
  if (node.peers.get(peer.id)?.state === "disconnected") return;
  for (;;) {
    const [from] = (await once(node.peers, "disconnected", timeout())) as [string];
    if (from === peer.id) return;
  }
}

function dial(from: TestNode, to: TestNode) {
  return from.libp2p.dial(multiaddr(to.addr), {signal: AbortSignal.timeout(EVENT_TIMEOUT_MS)});
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  const signal = AbortSignal.timeout(EVENT_TIMEOUT_MS);
  return Promise.race([promise, new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error(`timed out waiting for ${what}`))))]);
}

describe("PeerManager with real libp2p nodes", () => {
  it("two nodes of the same fork digest exchange statuses; each sees the other, with the connection's direction", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(20));
    await dial(a, b);

    const [bSeenByA, aSeenByB] = await Promise.all([statusFrom(a, b), statusFrom(b, a)]);
    expect(bSeenByA).toEqual(b.status);
    expect(aSeenByB).toEqual(a.status);
    expect(a.peers.connected().map((p) => p.peerId)).toEqual([b.id]);
    expect(b.peers.connected().map((p) => p.peerId)).toEqual([a.id]);
    expect(a.peers.syncPeers().map((p) => p.peerId)).toEqual([b.id]);
    expect(a.peers.all()).toEqual([expect.objectContaining({peerId: b.id, direction: "outbound", state: "connected", address: expect.stringContaining("/ip4/127.0.0.1/tcp/")})]);
    expect(b.peers.all()).toEqual([expect.objectContaining({peerId: a.id, direction: "inbound", state: "connected"})]);
    expect(a.goodbyes).toEqual([]);
    expect(b.goodbyes).toEqual([]);
  });

  it("refreshStatuses asks its peers for their status again at once: a peer's moved head is seen without waiting for the status interval", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(20));
    await dial(a, b);
    expect((await statusFrom(a, b)).headSlot).toBe(20);
    b.status = statusOf(35);
    a.peers.refreshStatuses();
    // the first exchange's statuses may still be on their way: wait for b's new one (without the refresh, it comes in 5 minutes)
    const signal = timeout();
    for (;;) {
      const [from, status] = (await once(a.peers, "status", signal)) as [string, Status];
      if (from === b.id && status.headSlot === 35) break;
    }
    expect(a.peers.get(b.id)?.status?.headSlot).toBe(35);
  });

  it("pings a peer as soon as it joins (not a ping interval later) and fetches its metadata", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(20), {managed: false});
    await dial(a, b);
    await statusFrom(a, b);
    expect(await withTimeout(b.pinged, "a ping")).toEqual({peer: a.id, seq: METADATA.seqNumber});
    const deadline = Date.now() + EVENT_TIMEOUT_MS;
    while (!a.peers.get(b.id)?.metadata && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(a.peers.get(b.id)?.metadata).toEqual(expect.objectContaining({seqNumber: METADATA.seqNumber, attnets: METADATA.attnets}));
  });

  it("tells a node of another fork digest goodbye (IRRELEVANT_NETWORK), disconnects and bans it; the gater refuses it after", async () => {
    const a = await startNode(statusOf(10));
    // the stranger checks nobody, so that only a's gater can refuse the redial below
    const stranger = await startNode(statusOf(10, OTHER_DIGEST), {managed: false});
    await dial(stranger, a);

    expect(await withTimeout(stranger.goodbye, "a goodbye")).toBe(GoodbyeReason.IRRELEVANT_NETWORK);
    await disconnected(a, stranger);
    expect(a.scores.isBanned(stranger.id)).toBe(true);
    expect(a.peers.connected()).toEqual([]);
    expect(a.peers.get(stranger.id)).toMatchObject({state: "disconnected", status: null});
    expect(a.libp2p.getConnections(peerIdFromString(stranger.id))).toEqual([]);

    // neither way round does a new connection get through a's connection gater
    await expect(dial(a, stranger)).rejects.toThrow();
    // the stranger's side completes its handshake before a refuses it, then sees the connection aborted
    const closed = once(stranger.libp2p, "connection:close", timeout());
    closed.catch(() => undefined);
    const redial = await dial(stranger, a).catch(() => null);
    if (redial) {
      const [event] = (await closed) as [CustomEvent<{id: string}>];
      expect(event.detail.id).toBe(redial.id);
    }
    expect(a.libp2p.getConnections(peerIdFromString(stranger.id))).toEqual([]);
    expect(a.peers.get(stranger.id)?.state).toBe("disconnected");
  });

  it("report(peer, 'fatal') says goodbye (BANNED), disconnects and bans the peer", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(10));
    await dial(a, b);
    await Promise.all([statusFrom(a, b), statusFrom(b, a)]);

    a.peers.report(b.id, "fatal", "sent garbage");

    expect(await withTimeout(b.goodbye, "a goodbye")).toBe(GoodbyeReason.BANNED);
    await Promise.all([disconnected(a, b), disconnected(b, a)]);
    expect(a.scores.isBanned(b.id)).toBe(true);
    expect(a.scores.score(b.id)).toBe(-100);
    expect(a.peers.connected()).toEqual([]);
    expect(a.peers.syncPeers()).toEqual([]);
    await expect(dial(a, b)).rejects.toThrow();
  });

  it("a 'high' report is only a penalty: the peer stays connected", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(10));
    await dial(a, b);
    await statusFrom(a, b);
    a.peers.report(b.id, "high", "one bad block");
    expect(a.scores.score(b.id)).toBe(-10);
    expect(a.peers.get(b.id)?.state).toBe("connected");
    expect(b.goodbyes).toEqual([]);
  });

  it("dials its direct peers when it starts", async () => {
    const b = await startNode(statusOf(20));
    expect(b.addr).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${b.id}$`));
    const a = await startNode(statusOf(10), {directPeers: [b.addr]});

    expect(await statusFrom(a, b)).toEqual(b.status);
    expect(a.peers.get(b.id)?.direction).toBe("outbound");
    expect(await statusFrom(b, a)).toEqual(a.status);
    expect(b.peers.get(a.id)?.direction).toBe("inbound");
  });

  it("turns away an inbound peer beyond maxPeers with goodbye TOO_MANY_PEERS", async () => {
    const a = await startNode(statusOf(10), {maxPeers: 1, targetPeers: 1});
    const b = await startNode(statusOf(10));
    const c = await startNode(statusOf(10));
    await dial(b, a);
    await statusFrom(a, b);

    await dial(c, a);
    expect(await withTimeout(c.goodbye, "a goodbye")).toBe(GoodbyeReason.TOO_MANY_PEERS);
    await disconnected(a, c);
    expect(a.peers.connected().map((p) => p.peerId)).toEqual([b.id]);
    expect(a.scores.isBanned(c.id)).toBe(false);
    expect(b.goodbyes).toEqual([]);
  });

  it("hangs up on a peer that says goodbye", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(10));
    await dial(a, b);
    await Promise.all([statusFrom(a, b), statusFrom(b, a)]);
    await b.peers.disconnect(a.id, GoodbyeReason.FAULT_OR_ERROR);
    expect(await withTimeout(a.goodbye, "a goodbye")).toBe(GoodbyeReason.FAULT_OR_ERROR);
    await Promise.all([disconnected(a, b), disconnected(b, a)]);
    expect(a.scores.isBanned(b.id)).toBe(false);
  });

  it("says goodbye (CLIENT_SHUTDOWN) to its peers when it stops", async () => {
    const a = await startNode(statusOf(10));
    const b = await startNode(statusOf(10));
    await dial(a, b);
    await Promise.all([statusFrom(a, b), statusFrom(b, a)]);
    await a.peers.stop();
    expect(await withTimeout(b.goodbye, "a goodbye")).toBe(GoodbyeReason.CLIENT_SHUTDOWN);
    await disconnected(b, a);
  });
});
