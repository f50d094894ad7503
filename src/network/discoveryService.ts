import {isIPv6} from "node:net";
import type {BeaconConfig} from "@lodestar/config";
import {multiaddr} from "@multiformats/multiaddr";
import {Discovery, dialDiscovered} from "./discovery.ts";
import type {NodeIdentity} from "./identity.ts";
import type {BeaconLibp2p} from "./libp2p.ts";
import type {NetworkOptions} from "./options.ts";
import type {PeerManager} from "./peers/peerManager.ts";

export interface DiscoveryDeps {
  config: BeaconConfig;
  libp2p: BeaconLibp2p;
  identity: NodeIdentity;
  privateKey: Uint8Array;
  peers: Pick<PeerManager, "connected">;
  currentEpoch(): number;
}

type AddressOptions = Pick<NetworkOptions, "listenAddress" | "enrAddress" | "tcpPort" | "udpPort" | "discovery" | "bootnodes" | "maxPeers">;

/**
 * The node's addresses (its ENR: where others reach it) and, unless `--no-discovery`, discv5:
 * started once libp2p listens (its ports are known then). Returns discovery, or null.
 */
export async function startDiscovery(deps: DiscoveryDeps, opts: AddressOptions): Promise<Discovery | null> {
  const {libp2p, identity, config} = deps;
  const tcpPort = Number(libp2p.getMultiaddrs()[0]?.getComponents().find((c) => c.name === "tcp")?.value ?? opts.tcpPort);
  // the ENR advertises where others reach us: --enr-address, else a specific listen address
  const enrIp = opts.enrAddress ?? (opts.listenAddress !== "0.0.0.0" && opts.listenAddress !== "::" ? opts.listenAddress : undefined);
  const quicText = libp2p.getMultiaddrs().map((a) => a.getComponents()).find((c) => c.some((x) => x.name === "quic-v1"))?.find((c) => c.name === "udp")?.value;
  const quicPort = quicText === undefined ? undefined : Number(quicText);
  identity.setAddresses(enrIp ? {ip: enrIp, tcp: tcpPort, udp: opts.discovery ? opts.udpPort : undefined, quic: quicPort} : {});
  const discovery = opts.discovery
    ? new Discovery({
        identity,
        privateKey: deps.privateKey,
        bindAddress: opts.listenAddress,
        udpPort: opts.udpPort,
        bootEnrs: opts.bootnodes,
        forkDigest: () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(deps.currentEpoch())),
        // no --enr-address and a wildcard listen address: the address peers see us at, with our ports
        onExternalAddress: ({ip, udp}) => {
          identity.setAddresses(isIPv6(ip) ? {ip6: ip, tcp6: tcpPort, udp6: udp, quic6: quicPort} : {ip, tcp: tcpPort, udp, quic: quicPort});
        },
        // over QUIC when both ends have it, else (or when that fails) over TCP
        onPeer: (peer) => {
          if (deps.peers.connected().length < opts.maxPeers) void dialDiscovered(peer, quicPort !== undefined, (address) => libp2p.dial(multiaddr(address)));
        },
      })
    : null;
  await discovery?.start();
  identity.setListenAddresses(
    libp2p.getMultiaddrs().map((a) => a.toString()),
    discovery?.discoveryAddresses() ?? []
  );
  return discovery;
}
