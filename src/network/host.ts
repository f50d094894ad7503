import type {BeaconConfig} from "@lodestar/config";
import type {IBeaconChain} from "../chain/interface.ts";
import {PortUnavailable} from "../ports.ts";
import {createGossipDataTransform, createMsgIdFn, fastMsgIdFn} from "./gossip/encoding.ts";
import {gossipsubOptions} from "./gossip/scoringParams.ts";
import {type BeaconLibp2p, createBeaconLibp2p} from "./libp2p.ts";
import type {NetworkOptions} from "./options.ts";
import {PeerScores} from "./peers/peerScore.ts";

/** The libp2p host and the peer scores its connection gater reads (banned peers are refused). */
export interface Host {
  libp2p: BeaconLibp2p;
  scores: PeerScores;
  /** what the gossip topic scores are computed from now: every scheduled fork boundary, so topics keep their scores across forks */
  topicScoreInput(): {currentSlot: number; activeValidatorCount: number; boundaries: BeaconConfig["forkBoundariesAscendingEpochOrder"]};
}

type HostChain = Pick<IBeaconChain, "config" | "currentSlot" | "getHeadState">;

/** Builds the libp2p host (not started: `startHost`). */
export async function createHost(chain: HostChain, privateKey: Uint8Array, opts: Pick<NetworkOptions, "listenAddress" | "tcpPort" | "quic" | "quicPort" | "maxPeers">): Promise<Host> {
  const config = chain.config;
  const scores = new PeerScores();
  const topicScoreInput = (): ReturnType<Host["topicScoreInput"]> => ({
    currentSlot: chain.currentSlot(),
    activeValidatorCount: chain.getHeadState().epochCtx.currentShuffling.activeIndices.length,
    boundaries: config.forkBoundariesAscendingEpochOrder.filter((b) => Number.isFinite(b.epoch)),
  });
  const libp2p = await createBeaconLibp2p({
    privateKey,
    listenAddress: opts.listenAddress,
    tcpPort: opts.tcpPort,
    quicPort: opts.quic ? opts.quicPort : null,
    maxConnections: opts.maxPeers + 5,
    gossip: {
      ...gossipsubOptions(config, topicScoreInput()),
      msgIdFn: createMsgIdFn(config),
      fastMsgIdFn,
      dataTransform: createGossipDataTransform(config),
      asyncValidation: true,
      directPeers: [],
    },
    isBanned: (peerId) => scores.isBanned(peerId.toString()),
  });
  return {libp2p, scores, topicScoreInput};
}

/**
 * Starts the host's listeners. A port taken since the node checked its ports (src/ports.ts)
 * says which option moves it, as the check does, not libp2p's list of failed addresses.
 */
export async function startHost(libp2p: BeaconLibp2p, opts: Pick<NetworkOptions, "listenAddress" | "tcpPort" | "quicPort">): Promise<void> {
  try {
    await libp2p.start();
  } catch (e) {
    const message = (e as Error).message;
    if (!/EADDRINUSE/.test(message)) throw e;
    const [option, port] = /\/udp\/\d+\/quic/.test(message) ? ["--quic-port", opts.quicPort] : ["--tcp-port", opts.tcpPort];
    throw new PortUnavailable(`libp2p cannot listen on port ${port} (${opts.listenAddress}): it is in use by another process; stop that, or give another port with ${option}`);
  }
}
