import type {Connection, PeerId} from "@libp2p/interface";
import {multiaddr, type Multiaddr} from "@multiformats/multiaddr";
import {peerIdFromString} from "@libp2p/peer-id";
import type {Metadata} from "../reqresp/types.ts";
import {EventEmitter} from "node:events";
import {getLogger} from "../../log.ts";
import type {BeaconLibp2p} from "../libp2p.ts";
import {GoodbyeReason, goodbyeReasonName, irrelevantReason, type Status} from "../status.ts";
import {GOSSIP_SCORE_THRESHOLDS} from "../gossip/scoringParams.ts";
import {DISCONNECT_THRESHOLD, type PeerAction, type PeerScores, type ScoreState} from "./peerScore.ts";

const log = getLogger("network");

/** How often each peer is pinged, its status refreshed, and the peer set checked. */
const PING_INTERVAL_MS = 15_000;
const STATUS_INTERVAL_MS = 5 * 60_000;
const HEARTBEAT_MS = 5_000;
/** how long a goodbye may take before the connection is closed anyway */
const GOODBYE_TIMEOUT_MS = 1_000;
/** disconnected peers remembered for the API's peer list */
const MAX_REMEMBERED_PEERS = 200;
/**
 * How much gossipsub's negative score counts toward ours, as in Lighthouse and Lodestar: a peer at
 * gossipsub's graylist threshold comes out just above the disconnect threshold. Messages that
 * are not snappy or exceed the size limits are penalized by gossipsub alone (they never reach
 * the node's validation), so without this a peer sending only those would stay connected.
 */
const GOSSIP_NEGATIVE_SCORE_WEIGHT = (DISCONNECT_THRESHOLD + 1) / GOSSIP_SCORE_THRESHOLDS.graylistThreshold;

export type PeerState = "connecting" | "connected" | "disconnecting" | "disconnected";

export interface PeerInfo {
  peerId: string;
  direction: "inbound" | "outbound";
  state: PeerState;
  address: string;
  status: Status | null;
  metadata: Metadata | null;
  agentVersion: string | null;
  connectedAtMs: number;
  lastPingMs: number;
  lastStatusMs: number;
}

/** The calls the peer manager makes on peers (the req/resp layer). */
export interface PeerRequests {
  status(peer: string, ours: Status): Promise<Status>;
  goodbye(peer: string, reason: bigint): Promise<void>;
  ping(peer: string, ourSeq: bigint): Promise<bigint>;
  metadata(peer: string): Promise<Metadata>;
}

export interface PeerManagerEvents {
  /** a peer passed the status handshake (or refreshed its status) */
  status: [peer: string, status: Status];
  disconnected: [peer: string];
}

export interface PeerManagerOptions {
  targetPeers: number;
  maxPeers: number;
  /** multiaddrs always dialed and kept */
  directPeers: string[];
}

export interface PeerManagerDeps {
  libp2p: BeaconLibp2p;
  requests: PeerRequests;
  scores: PeerScores;
  /** our Status now */
  ourStatus(): Status;
  currentSlot(): number;
  /** our metadata sequence number */
  metadataSeq(): bigint;
  /** the root of our finalized chain's checkpoint at `epoch`, or null when unknown */
  checkpointRootAt(epoch: number): Promise<Uint8Array | null>;
  /** asks discovery for more peers (or given at `start`, when discovery is built after the peer manager) */
  discoverPeers?(count: number): void;
  /** gossipsub's score of the peer (it keeps a negative one a while after the peer disconnects) */
  gossipScore?(peer: string): number;
  now?: () => number;
}

/**
 * Keeps the node's peer set: a status handshake with every new peer (a peer of another
 * chain is told goodbye), pings and metadata, periodic status, direct peers always dialed,
 * the target and maximum peer counts, and disconnection and bans for misbehaving peers.
 */
export class PeerManager extends EventEmitter<PeerManagerEvents> {
  private readonly peers = new Map<string, PeerInfo>();
  private readonly deps: PeerManagerDeps;
  private readonly opts: PeerManagerOptions;
  private readonly direct: Multiaddr[];
  private readonly directIds: Set<string>;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private discoverPeers: ((count: number) => void) | null = null;
  private readonly onConnect = (e: CustomEvent<Connection>) => this.onConnectionOpen(e.detail);
  private readonly onDisconnect = (e: CustomEvent<PeerId>) => this.onPeerDisconnected(e.detail.toString());

  constructor(deps: PeerManagerDeps, opts: PeerManagerOptions) {
    super();
    this.deps = deps;
    this.opts = opts;
    this.now = deps.now ?? Date.now;
    this.direct = opts.directPeers.map((a) => multiaddr(a));
    this.directIds = new Set(this.direct.map((a) => a.getComponents().find((c) => c.name === "p2p")?.value).filter((id): id is string => !!id));
  }

  /** Starts managing peers; `discoverPeers` asks discovery for more when there are too few. */
  start(discoverPeers?: (count: number) => void): void {
    this.discoverPeers = discoverPeers ?? this.deps.discoverPeers?.bind(this.deps) ?? null;
    this.deps.libp2p.addEventListener("connection:open", this.onConnect);
    this.deps.libp2p.addEventListener("peer:disconnect", this.onDisconnect);
    // peers that connected while the rest of the network was starting
    for (const connection of this.deps.libp2p.getConnections()) this.onConnectionOpen(connection);
    this.timer = setInterval(() => void this.heartbeat(), HEARTBEAT_MS);
    this.timer.unref();
    void this.heartbeat();
  }

  /** Says goodbye to every peer (client shutdown) and stops. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.deps.libp2p.removeEventListener("connection:open", this.onConnect);
    this.deps.libp2p.removeEventListener("peer:disconnect", this.onDisconnect);
    await Promise.all(this.connected().map((p) => this.disconnect(p.peerId, GoodbyeReason.CLIENT_SHUTDOWN)));
  }

  /** Every peer known this session, connected or not. */
  all(): PeerInfo[] {
    return [...this.peers.values()];
  }

  get(peer: string): PeerInfo | undefined {
    return this.peers.get(peer);
  }

  connected(): PeerInfo[] {
    return this.all().filter((p) => p.state === "connected");
  }

  /** Connected peers whose status we have, i.e. peers of our chain. */
  syncPeers(): Array<PeerInfo & {status: Status}> {
    return this.connected().filter((p): p is PeerInfo & {status: Status} => p.status !== null);
  }

  /** Records what a peer did; disconnects or bans it when its score falls too low. */
  report(peer: string, action: PeerAction, reason: string): void {
    this.deps.scores.apply(peer, action);
    log.debug({peer, action, reason, score: this.deps.scores.score(peer)}, "peer penalized");
    this.enforceScore(peer);
  }

  /** Disconnects a peer whose score, gossipsub's included, is too low, and bans it when it is lower still. */
  private enforceScore(peer: string): ScoreState {
    const {scores} = this.deps;
    const state = scores.state(peer, (this.deps.gossipScore?.(peer) ?? 0) * GOSSIP_NEGATIVE_SCORE_WEIGHT);
    // banned even when it is already on its way out (a disconnect in progress does not ban)
    if (state === "ban" && !scores.isBanned(peer)) scores.ban(peer);
    if (state === "ban") void this.disconnect(peer, GoodbyeReason.BANNED);
    else if (state === "disconnect") void this.disconnect(peer, GoodbyeReason.SCORE_TOO_LOW);
    return state;
  }

  /** A status request from a peer: record theirs (checking it), answer ours. */
  async onStatusRequest(peer: string, theirs: Status): Promise<Status> {
    const ours = this.deps.ourStatus();
    void this.acceptStatus(peer, theirs, ours);
    return ours;
  }

  onGoodbye(peer: string, reason: bigint): void {
    log.debug({peer, reason: goodbyeReasonName(reason)}, "peer said goodbye");
    const info = this.peers.get(peer);
    if (info) info.state = "disconnecting";
    void this.deps.libp2p.hangUp(peerIdFromString(peer)).catch(() => undefined);
  }

  /** Sends goodbye (briefly waiting for it) and closes the connection. */
  async disconnect(peer: string, reason: bigint): Promise<void> {
    const info = this.peers.get(peer);
    if (info?.state === "disconnecting" || info?.state === "disconnected") return;
    if (info) info.state = "disconnecting";
    if (reason === GoodbyeReason.BANNED || reason === GoodbyeReason.IRRELEVANT_NETWORK) this.deps.scores.ban(peer);
    log.debug({peer, reason: goodbyeReasonName(reason)}, "disconnecting peer");
    await Promise.race([this.deps.requests.goodbye(peer, reason).catch(() => undefined), new Promise((r) => setTimeout(r, GOODBYE_TIMEOUT_MS).unref())]);
    await this.deps.libp2p.hangUp(peerIdFromString(peer)).catch(() => undefined);
  }

  private onConnectionOpen(connection: Connection): void {
    const peer = connection.remotePeer.toString();
    const existing = this.peers.get(peer);
    if (existing?.state === "connected") return;
    if (this.deps.scores.isBanned(peer)) {
      void connection.close().catch(() => undefined);
      return;
    }
    const info: PeerInfo = {
      peerId: peer,
      direction: connection.direction,
      state: "connected",
      address: connection.remoteAddr.toString(),
      status: null,
      metadata: existing?.metadata ?? null,
      agentVersion: null,
      connectedAtMs: this.now(),
      lastPingMs: this.now(),
      lastStatusMs: 0,
    };
    this.peers.delete(peer);
    this.peers.set(peer, info);
    this.forgetOldPeers();
    // too many peers: an inbound one beyond the maximum is turned away (direct peers always stay)
    if (connection.direction === "inbound" && this.connected().length > this.opts.maxPeers && !this.directIds.has(peer)) {
      void this.disconnect(peer, GoodbyeReason.TOO_MANY_PEERS);
      return;
    }
    log.debug({peer, direction: connection.direction, address: info.address}, "peer connected");
    void this.requestStatus(peer);
  }

  private onPeerDisconnected(peer: string): void {
    const info = this.peers.get(peer);
    if (!info || info.state === "disconnected") return;
    info.state = "disconnected";
    log.debug({peer}, "peer disconnected");
    this.emit("disconnected", peer);
  }

  /** Asks every peer of our chain for its status again now, rather than at its next interval. */
  refreshStatuses(): void {
    for (const peer of this.syncPeers()) void this.requestStatus(peer.peerId);
  }

  private async requestStatus(peer: string): Promise<void> {
    try {
      const ours = this.deps.ourStatus();
      const theirs = await this.deps.requests.status(peer, ours);
      await this.acceptStatus(peer, theirs, ours);
    } catch (e) {
      if (this.peers.get(peer)?.state !== "connected") return;
      log.debug({peer, err: (e as Error).message}, "status request failed");
      this.report(peer, "mid", "status request failed");
      if (this.peers.get(peer)?.status === null) await this.disconnect(peer, GoodbyeReason.UNABLE_TO_VERIFY_NETWORK);
    }
  }

  private async acceptStatus(peer: string, theirs: Status, ours: Status): Promise<void> {
    const info = this.peers.get(peer);
    if (!info || info.state !== "connected") return;
    const reason = await irrelevantReason(ours, theirs, this.deps.currentSlot(), this.deps.checkpointRootAt);
    if (reason) {
      log.debug({peer, reason}, "peer is on another chain");
      await this.disconnect(peer, GoodbyeReason.IRRELEVANT_NETWORK);
      return;
    }
    const first = info.status === null;
    info.status = theirs;
    info.lastStatusMs = this.now();
    if (first) {
      const agent = await this.deps.libp2p.peerStore.get(peerIdFromString(peer)).catch(() => null);
      info.agentVersion = agent?.metadata.get("AgentVersion") ? new TextDecoder().decode(agent.metadata.get("AgentVersion")) : null;
      log.info({peer, address: info.address, headSlot: theirs.headSlot, finalizedEpoch: theirs.finalizedEpoch, peers: this.syncPeers().length}, "peer joined");
      // a ping at once, not a ping interval later: it tells the peer our metadata sequence number, so
      // it asks for our subnets (Lodestar prunes peers whose subnets it does not know), and gets us theirs
      void this.pingPeer(info);
    }
    this.emit("status", peer, theirs);
  }

  private async heartbeat(): Promise<void> {
    const now = this.now();
    // disconnected peers too: gossipsub's score of a peer may keep falling after we dropped it
    for (const peer of this.all()) {
      if (this.enforceScore(peer.peerId) !== "healthy" || peer.state !== "connected") continue;
      if (now - peer.lastPingMs >= PING_INTERVAL_MS) void this.pingPeer(peer);
      if (peer.status !== null && now - peer.lastStatusMs >= STATUS_INTERVAL_MS) void this.requestStatus(peer.peerId);
    }
    await this.dialDirectPeers();
    const missing = this.opts.targetPeers - this.connected().length;
    if (missing > 0) this.discoverPeers?.(missing);
    this.deps.scores.prune();
  }

  private async pingPeer(peer: PeerInfo): Promise<void> {
    peer.lastPingMs = this.now();
    try {
      const seq = await this.deps.requests.ping(peer.peerId, this.deps.metadataSeq());
      if (peer.metadata === null || seq > peer.metadata.seqNumber) peer.metadata = await this.deps.requests.metadata(peer.peerId);
    } catch (e) {
      if (peer.state === "connected") this.report(peer.peerId, "low", `ping or metadata failed: ${(e as Error).message}`);
    }
  }

  private async dialDirectPeers(): Promise<void> {
    const connected = new Set(this.connected().map((p) => p.peerId));
    await Promise.all(
      this.direct.map(async (addr) => {
        const id = addr.getComponents().find((c) => c.name === "p2p")?.value;
        if (id && connected.has(id)) return;
        try {
          await this.deps.libp2p.dial(addr, {signal: AbortSignal.timeout(5_000)});
        } catch (e) {
          log.debug({address: addr.toString(), err: (e as Error).message}, "direct peer not reachable");
        }
      })
    );
  }

  private forgetOldPeers(): void {
    if (this.peers.size <= MAX_REMEMBERED_PEERS) return;
    for (const [id, info] of this.peers) {
      if (this.peers.size <= MAX_REMEMBERED_PEERS) break;
      if (info.state === "disconnected") this.peers.delete(id);
    }
  }
}
