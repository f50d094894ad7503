import {noise} from "@chainsafe/libp2p-noise";
import {gossipsub, type GossipSub as GossipSubPublic, type GossipsubOpts, type TopicValidatorResult} from "@libp2p/gossipsub";
import type {PeerScoreParams} from "@libp2p/gossipsub/score";
import {identify} from "@libp2p/identify";
import type {ConnectionGater, Libp2p, PeerId} from "@libp2p/interface";
import {mplex} from "@libp2p/mplex";
import {ping} from "@libp2p/ping";
import {tcp} from "@libp2p/tcp";
import {yamux} from "@libp2p/yamux";
import {privateKeyFromRaw} from "@libp2p/crypto/keys";
import {multiaddr} from "@multiformats/multiaddr";
import {createLibp2p} from "libp2p";
import {VERSION} from "../version.ts";
import {getLogger} from "../log.ts";
import {sendYamuxWindowUpdatesAtHalf} from "./yamuxWindow.ts";
import {consumeWholeBuffersAtOnce} from "./sendQueueConsume.ts";
import {gatherNoiseWritesPerTurn} from "./noiseWrites.ts";

const log = getLogger("network");

/**
 * The libp2p host of the consensus p2p spec: TCP (and QUIC where it loads), noise, yamux (current peers) and mplex
 * (older peers such as Lodestar 1.x speak only mplex), identify, ping and gossipsub 1.1 with
 * the spec's StrictNoSign policy. The peer id comes from the node's secp256k1 key.
 */

/**
 * New mplex streams (and frames for unknown streams) a peer may open per second before
 * @libp2p/mplex closes the connection. Its default, 5, counts every stream, not only those
 * beyond an inbound limit as its documentation says: a Lodestar 1.x peer opens identify,
 * gossipsub, ping, status, metadata and block requests within its first second and lost the
 * connection. Req/resp rate limits and per-protocol stream limits still bound each peer.
 */
export const MPLEX_NEW_STREAMS_PER_SECOND = 128;

/** The parts of gossipsub's class the node uses beyond its public interface (asynchronous validation, the mesh, scores). */
export interface GossipSub extends GossipSubPublic {
  reportMessageValidationResult(msgId: string, propagationSource: string, acceptance: TopicValidatorResult): void;
  getMeshPeers(topic: string): string[];
  getScore(peerId: string): number;
  /** the peer scores, whose topic parameters the node updates each epoch (scoringParams.ts) */
  readonly score: {params: Pick<PeerScoreParams, "topics">};
}

export type BeaconLibp2p = Libp2p<{identify: ReturnType<ReturnType<typeof identify>>; ping: ReturnType<ReturnType<typeof ping>>; gossipsub: GossipSub}>;

export interface Libp2pOptions {
  /** the node's secp256k1 key, 32 raw bytes */
  privateKey: Uint8Array;
  listenAddress: string;
  /** 0: any free port */
  tcpPort: number;
  /** UDP port of QUIC (0: any free port); null: TCP only */
  quicPort: number | null;
  maxConnections: number;
  /** gossipsub options (message id, scoring, parameters), from the gossip module */
  gossip: Partial<GossipsubOpts>;
  /** refuses connections from and to banned peers */
  isBanned(peerId: PeerId): boolean;
}

type QuicModule = typeof import("@chainsafe/libp2p-quic");
let quicModule: Promise<QuicModule | null> | null = null;

/**
 * The QUIC transport, if its native binding loads here: @chainsafe/libp2p-quic ships one per
 * platform as an optional dependency, and the registry this project installs from has only
 * linux-x64's. Elsewhere the node runs on TCP alone and says so once.
 */
export function loadQuic(): Promise<QuicModule | null> {
  quicModule ??= import("@chainsafe/libp2p-quic").then(
    (m) => m,
    (e: Error) => {
      log.info({err: e.message}, "QUIC is not available on this platform: TCP only");
      return null;
    }
  );
  return quicModule;
}

export async function createBeaconLibp2p(opts: Libp2pOptions): Promise<BeaconLibp2p> {
  const quicTransport = opts.quicPort === null ? null : await loadQuic();
  const listen = [multiaddr(`/ip4/${opts.listenAddress}/tcp/${opts.tcpPort}`).toString()];
  if (quicTransport && opts.quicPort !== null) listen.push(multiaddr(`/ip4/${opts.listenAddress}/udp/${opts.quicPort}/quic-v1`).toString());
  const gater: ConnectionGater = {
    denyDialPeer: (peerId) => opts.isBanned(peerId),
    denyInboundEncryptedConnection: (peerId) => opts.isBanned(peerId),
    denyOutboundEncryptedConnection: (peerId) => opts.isBanned(peerId),
    // loopback and private addresses are where devnets live
    denyDialMultiaddr: () => false,
  };
  sendYamuxWindowUpdatesAtHalf();
  consumeWholeBuffersAtOnce();
  gatherNoiseWritesPerTurn();
  const node = await createLibp2p({
    privateKey: privateKeyFromRaw(opts.privateKey),
    addresses: {listen},
    // QUIC brings its own encryption (TLS 1.3) and stream multiplexing
    transports: quicTransport ? [tcp(), quicTransport.quic()] : [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux(), mplex({disconnectThreshold: MPLEX_NEW_STREAMS_PER_SECOND})],
    connectionGater: gater,
    connectionManager: {maxConnections: opts.maxConnections},
    nodeInfo: {userAgent: `beacon-gateway/${VERSION}`},
    services: {
      identify: identify(),
      ping: ping(),
      gossipsub: gossipsub({globalSignaturePolicy: "StrictNoSign", ...opts.gossip}) as unknown as (components: unknown) => GossipSub,
    },
    start: false,
  });
  return node as unknown as BeaconLibp2p;
}
