import {afterAll, describe, expect, it, jest} from "@jest/globals";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {peerIdFromString} from "@libp2p/peer-id";
import {createBeaconConfig} from "@lodestar/config";
import {multiaddr} from "@multiformats/multiaddr";
import {createSocket} from "node:dgram";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {Discovery, dialDiscovered, type DiscoveredPeer} from "../../../src/network/discovery.ts";
import {NodeIdentity} from "../../../src/network/identity.ts";
import {createBeaconLibp2p, loadQuic, type BeaconLibp2p} from "../../../src/network/libp2p.ts";

jest.setTimeout(30_000);

/**
 * Two nodes on loopback, each a libp2p host (TCP and QUIC) with discv5: B finds A through A's
 * ENR, which advertises A's `quic` port beside `tcp`, and dials it over QUIC; a node without
 * QUIC dials the same record over TCP.
 */

const config = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), new Uint8Array(32).fill(1));
const digest = () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(0));
const hosts: BeaconLibp2p[] = [];
const discoveries: Discovery[] = [];

async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const {port} = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

const portOf = (host: BeaconLibp2p, name: "tcp" | "udp") => Number(host.getMultiaddrs().flatMap((a) => a.getComponents()).find((c) => c.name === name)!.value);

async function node(bootEnrs: string[], quic: boolean, onPeer: (peer: DiscoveredPeer) => void = () => {}) {
  const key = (await generateKeyPair("secp256k1")).raw;
  const host = await createBeaconLibp2p({privateKey: key, listenAddress: "127.0.0.1", tcpPort: 0, quicPort: quic ? 0 : null, maxConnections: 10, gossip: {}, isBanned: () => false});
  await host.start();
  hosts.push(host);
  const identity = new NodeIdentity(key, {config, currentEpoch: () => 0});
  const udp = await freeUdpPort();
  identity.setAddresses({ip: "127.0.0.1", tcp: portOf(host, "tcp"), udp, quic: quic ? portOf(host, "udp") : undefined});
  const discovery = new Discovery({identity, bindAddress: "127.0.0.1", udpPort: udp, bootEnrs, forkDigest: digest, onPeer, discv5Config: {lookupTimeout: 1000}});
  await discovery.start();
  discoveries.push(discovery);
  return {host, identity, discovery};
}

afterAll(async () => {
  for (const d of discoveries) await d.stop();
  for (const h of hosts) await h.stop();
});

describe("dialing discovered peers", () => {
  it("over QUIC when the peer's ENR has quic and this node has QUIC; over TCP when this node has none", async () => {
    expect(await loadQuic()).not.toBeNull();
    const a = await node([], true);
    expect(a.identity.addresses().quic).toBeGreaterThan(0);
    const found: DiscoveredPeer[] = [];
    const b = await node([a.identity.enr()], true, (p) => found.push(p));
    await b.discovery.findPeers(4);
    const peer = found.find((p) => p.peerId === a.identity.peerId)!;
    expect(peer.multiaddrQUIC).toBe(`/ip4/127.0.0.1/udp/${a.identity.addresses().quic}/quic-v1/p2p/${a.identity.peerId}`);

    expect(await dialDiscovered(peer, true, (address) => b.host.dial(multiaddr(address)))).toBe(peer.multiaddrQUIC);
    const [overQuic] = b.host.getConnections(peerIdFromString(a.identity.peerId));
    expect(overQuic.remoteAddr.toString()).toContain("/quic-v1");
    expect(await b.host.services.ping.ping(peerIdFromString(a.identity.peerId))).toBeGreaterThanOrEqual(0);

    // a node without QUIC (--no-quic, or no binding) dials the same record over TCP
    const c = await node([], false);
    expect(await dialDiscovered(peer, false, (address) => c.host.dial(multiaddr(address)))).toBe(peer.multiaddrTCP);
    const [overTcp] = c.host.getConnections(peerIdFromString(a.identity.peerId));
    expect(overTcp.remoteAddr.toString()).toMatch(/\/tcp\/\d+\/p2p\//);
  });
});
