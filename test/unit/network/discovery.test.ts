// suite: alone (discv5 lookups over real UDP sockets, each given 1 s to answer)
import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {Discv5, multiaddrFromSocketAddress} from "@chainsafe/discv5";
import {ENR, SignableENR} from "@chainsafe/enr";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {BitArray} from "@chainsafe/ssz";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {ssz} from "@lodestar/types";
import {createSocket} from "node:dgram";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {Discovery, dialAddresses, dialDiscovered, eth2PeerOf, type DiscoveredPeer} from "../../../src/network/discovery.ts";
import {NodeIdentity} from "../../../src/network/identity.ts";

jest.setTimeout(30_000);

/** Two chains: the same fork schedule, different genesis validators roots, so different fork digests. */
const chainConfig = devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}});
const ours = createBeaconConfig(chainConfig, new Uint8Array(32).fill(1));
const theirs = createBeaconConfig(chainConfig, new Uint8Array(32).fill(2));
const digestOf = (config: BeaconConfig) => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(0));

/** A UDP port free right now: bound by the system, released, reused. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const {port} = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

interface TestNode {
  identity: NodeIdentity;
  discovery: Discovery;
  reported: DiscoveredPeer[];
  tcp: number;
  udp: number;
}

interface NodeOptions {
  /** a record with no address at all, as a node listening on 0.0.0.0 without --enr-address has */
  addressless?: boolean;
  discv5Config?: Record<string, number>;
  onExternalAddress?: (address: {ip: string; udp: number}) => void;
}

const running: Discovery[] = [];
let nextTcp = 41000;

async function startNode(bootEnrs: string[], config: BeaconConfig = ours, opts: NodeOptions = {}): Promise<TestNode> {
  const identity = new NodeIdentity((await generateKeyPair("secp256k1")).raw, {config, currentEpoch: () => 0});
  const udp = await freeUdpPort();
  const tcp = nextTcp++; // advertised only: nothing here dials it
  if (!opts.addressless) identity.setAddresses({ip: "127.0.0.1", tcp, udp});
  const reported: DiscoveredPeer[] = [];
  const discovery = new Discovery({
    identity,
    bindAddress: "127.0.0.1",
    udpPort: udp,
    bootEnrs,
    forkDigest: () => digestOf(config),
    onPeer: (p) => reported.push(p),
    // discv5 11 leaves each finished lookup's timeout timer running (60 s by default): keep them short so jest can exit
    discv5Config: {lookupTimeout: 1000, ...opts.discv5Config},
    onExternalAddress: opts.onExternalAddress,
  });
  await discovery.start();
  running.push(discovery);
  return {identity, discovery, reported, tcp, udp};
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.stop()));
});

const nodeIds = (enrs: string[]) => enrs.map((text) => ENR.decodeTxt(text).nodeId);

describe("Discovery over real discv5 sockets on 127.0.0.1", () => {
  it("C, booted from A, finds B through A and reports B's TCP address; a node of another fork digest is never reported", async () => {
    const a = await startNode([]);
    const b = await startNode([a.identity.enr()]);
    const d = await startNode([a.identity.enr()], theirs);
    // B and D talk to A, which puts them in its table
    await b.discovery.findPeers(16);
    await d.discovery.findPeers(16);
    expect(b.reported.map((p) => p.peerId)).toEqual([a.identity.peerId]);
    // D knows A but A is on another fork digest than D
    expect(nodeIds(d.discovery.knownEnrs())).toContain(a.identity.nodeId);
    expect(d.reported).toEqual([]);
    expect(nodeIds(a.discovery.knownEnrs()).sort()).toEqual([b.identity.nodeId, d.identity.nodeId].sort());

    const c = await startNode([a.identity.enr()]);
    // each search runs random lookups: B and D are found through A once a lookup asks A for their distance
    for (let i = 0; i < 20; i++) {
      await c.discovery.findPeers(16);
      const seenD = nodeIds(c.discovery.knownEnrs()).includes(d.identity.nodeId);
      if (seenD && c.reported.some((p) => p.peerId === b.identity.peerId)) break;
    }
    expect(nodeIds(c.discovery.knownEnrs())).toContain(d.identity.nodeId);
    const fromB = c.reported.find((p) => p.peerId === b.identity.peerId);
    expect(fromB).toEqual({peerId: b.identity.peerId, multiaddrTCP: `/ip4/127.0.0.1/tcp/${b.tcp}/p2p/${b.identity.peerId}`, multiaddrQUIC: null, enr: b.identity.enr()});
    expect(c.reported.map((p) => p.peerId)).not.toContain(d.identity.peerId);
    expect(new Set(c.reported.map((p) => p.peerId))).toEqual(new Set([a.identity.peerId, b.identity.peerId]));
  });

  it("discv5 serves the identity's record: a change of subnets is what the node answers next", async () => {
    const a = await startNode([]);
    const key = await generateKeyPair("secp256k1");
    const probeEnr = SignableENR.createV4(key.raw);
    const port = await freeUdpPort();
    probeEnr.ip = "127.0.0.1";
    probeEnr.udp = port;
    // a bare discv5 node, outside the code under test
    const probe = Discv5.create({enr: probeEnr, privateKey: key as never, bindAddrs: {ip4: multiaddrFromSocketAddress({ip: {type: 4, octets: Uint8Array.of(127, 0, 0, 1)}, port})}});
    await probe.start();
    try {
      const [before] = await probe.sendFindNode(ENR.decodeTxt(a.identity.enr()), [0]);
      expect(before.encodeTxt()).toBe(a.identity.enr());
      a.identity.setSubnets({attnets: BitArray.fromBoolArray(Array.from({length: 64}, (_, i) => i === 7 || i === 8))});
      const [after] = await probe.sendFindNode(ENR.decodeTxt(a.identity.enr()), [0]);
      expect(after.seq).toBe(before.seq + 1n);
      expect(after.kvs.get("attnets")).toEqual(ssz.phase0.AttestationSubnets.serialize(a.identity.metadata().attnets));
      expect(after.encodeTxt()).toBe(a.identity.enr());
    } finally {
      await probe.stop();
    }
  });

  it("with no IP in its record, takes the address its peers' PONGs agree on", async () => {
    const b = await startNode([]);
    const c = await startNode([]);
    let onLearnt!: (address: {ip: string; udp: number}) => void;
    const learnt = new Promise<{ip: string; udp: number}>((resolve) => (onLearnt = resolve));
    // two votes instead of discv5's 10, and discv5's own pings every 100 ms instead of every 5 minutes
    const discv5Config = {pingInterval: 100, addrVotesToUpdateEnr: 2};
    const a = await startNode([b.identity.enr(), c.identity.enr()], ours, {addressless: true, discv5Config, onExternalAddress: (x) => onLearnt(x)});
    expect(a.identity.addresses()).toEqual({});
    await a.discovery.findPeers(16); // sessions with B and C, which A then pings
    // the PONGs' vote is the event waited for (jest's timeout bounds it)
    expect(await learnt).toEqual({ip: "127.0.0.1", udp: a.udp});
    expect(ENR.decodeTxt(a.identity.enr())).toMatchObject({ip: "127.0.0.1", udp: a.udp});
  });

  it("lists its bound address; a search stops with the node, even while a boot node does not answer", async () => {
    const silent = SignableENR.createV4((await generateKeyPair("secp256k1")).raw);
    silent.ip = "127.0.0.1";
    silent.udp = await freeUdpPort(); // nobody listens there
    const n = await startNode([silent.encodeTxt()]);
    expect(n.discovery.discoveryAddresses()).toEqual([`/ip4/127.0.0.1/udp/${n.identity.addresses().udp}/p2p/${n.identity.peerId}`]);
    const search = n.discovery.findPeers(1);
    await n.discovery.stop();
    await expect(search).resolves.toBe(0);
    expect(await n.discovery.findPeers(1)).toBe(0);
  });

  it("refuses port 0, what is not an IP address to bind to, and a key that is not the identity's", async () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(9), {config: ours, currentEpoch: () => 0});
    const base = {identity, bootEnrs: [], forkDigest: () => digestOf(ours), onPeer: () => {}};
    expect(() => new Discovery({...base, bindAddress: "127.0.0.1", udpPort: 0})).toThrow("the discovery UDP port must be from 1 to 65535: 0");
    expect(() => new Discovery({...base, bindAddress: "localhost", udpPort: 9000})).toThrow("must be an IPv4 or IPv6 address: localhost");
    expect(() => new Discovery({...base, bindAddress: "127.0.0.1", udpPort: 9000, privateKey: new Uint8Array(32).fill(10)})).toThrow("the discovery key must be the identity's");
  });
});

describe("eth2PeerOf", () => {
  const digest = digestOf(ours);
  const eth2 = (forkDigest: Uint8Array) => ssz.phase0.ENRForkID.serialize({forkDigest, nextForkVersion: new Uint8Array(4), nextForkEpoch: 0});
  const key = new Uint8Array(32).fill(11);
  const record = (kvs: Record<string, Uint8Array>, addresses: {ip?: string; tcp?: number; ip6?: string; tcp6?: number; quic?: number; quic6?: number}) => {
    const enr = SignableENR.createV4(key, kvs);
    Object.assign(enr, addresses);
    return ENR.decodeTxt(enr.encodeTxt());
  };

  it("a record on our fork digest with ip and tcp: its libp2p address", () => {
    const enr = record({eth2: eth2(digest)}, {ip: "10.1.2.3", tcp: 9000});
    const peerId = enr.peerId.toString();
    expect(eth2PeerOf(enr, digest)).toEqual({peerId, multiaddrTCP: `/ip4/10.1.2.3/tcp/9000/p2p/${peerId}`, multiaddrQUIC: null, enr: enr.encodeTxt()});
    const six = record({eth2: eth2(digest)}, {ip6: "2001:db8::1", tcp6: 9001});
    expect(eth2PeerOf(six, digest)?.multiaddrTCP).toBe(`/ip6/2001:db8::1/tcp/9001/p2p/${peerId}`);
    // EIP-778: without tcp6, tcp serves IPv6 too
    const sixOnTcp = record({eth2: eth2(digest)}, {ip6: "2001:db8::1", tcp: 9002});
    expect(eth2PeerOf(sixOnTcp, digest)?.multiaddrTCP).toBe(`/ip6/2001:db8::1/tcp/9002/p2p/${peerId}`);
  });

  it("nothing for another fork digest, a malformed or missing eth2 entry, or no TCP or QUIC address", () => {
    expect(eth2PeerOf(record({eth2: eth2(Uint8Array.of(1, 2, 3, 4))}, {ip: "10.1.2.3", tcp: 9000}), digest)).toBeNull();
    expect(eth2PeerOf(record({eth2: digest}, {ip: "10.1.2.3", tcp: 9000}), digest)).toBeNull();
    expect(eth2PeerOf(record({}, {ip: "10.1.2.3", tcp: 9000}), digest)).toBeNull();
    expect(eth2PeerOf(record({eth2: eth2(digest)}, {ip: "10.1.2.3"}), digest)).toBeNull();
    // an ip of 2 bytes, a port of 0 or of 3 bytes: malformed
    expect(eth2PeerOf(record({eth2: eth2(digest), ip: Uint8Array.of(1, 2)}, {tcp: 9000}), digest)).toBeNull();
    expect(eth2PeerOf(record({eth2: eth2(digest), tcp: Uint8Array.of(0)}, {ip: "10.1.2.3"}), digest)).toBeNull();
    expect(eth2PeerOf(record({eth2: eth2(digest), tcp: Uint8Array.of(1, 0, 0)}, {ip: "10.1.2.3"}), digest)).toBeNull();
  });

  it("a record with a quic port: its QUIC address (a UDP port), with or without TCP", () => {
    const enr = record({eth2: eth2(digest)}, {ip: "10.1.2.3", tcp: 9000, quic: 9001});
    const peerId = enr.peerId.toString();
    const peer = eth2PeerOf(enr, digest)!;
    expect(peer).toEqual({peerId, multiaddrTCP: `/ip4/10.1.2.3/tcp/9000/p2p/${peerId}`, multiaddrQUIC: `/ip4/10.1.2.3/udp/9001/quic-v1/p2p/${peerId}`, enr: enr.encodeTxt()});
    expect(eth2PeerOf(record({eth2: eth2(digest)}, {ip: "10.1.2.3", quic: 9001}), digest)).toMatchObject({multiaddrTCP: null, multiaddrQUIC: `/ip4/10.1.2.3/udp/9001/quic-v1/p2p/${peerId}`});
    expect(eth2PeerOf(record({eth2: eth2(digest)}, {ip6: "2001:db8::1", quic6: 9003}), digest)?.multiaddrQUIC).toBe(`/ip6/2001:db8::1/udp/9003/quic-v1/p2p/${peerId}`);
    // quic serves IPv6 too without quic6, as tcp does
    expect(eth2PeerOf(record({eth2: eth2(digest)}, {ip6: "2001:db8::1", quic: 9004}), digest)?.multiaddrQUIC).toBe(`/ip6/2001:db8::1/udp/9004/quic-v1/p2p/${peerId}`);
    expect(eth2PeerOf(record({eth2: eth2(digest), quic: Uint8Array.of(0)}, {ip: "10.1.2.3"}), digest)).toBeNull();
  });

  it("dials QUIC first when both ends have it, then TCP; TCP alone when this node has no QUIC", async () => {
    const peerId = "16Uiu2HAm";
    const both = {peerId, multiaddrTCP: "/ip4/10.1.2.3/tcp/9000", multiaddrQUIC: "/ip4/10.1.2.3/udp/9001/quic-v1", enr: "enr:"};
    expect(dialAddresses(both, true)).toEqual([both.multiaddrQUIC, both.multiaddrTCP]);
    expect(dialAddresses(both, false)).toEqual([both.multiaddrTCP]);
    expect(dialAddresses({...both, multiaddrQUIC: null}, true)).toEqual([both.multiaddrTCP]);
    expect(dialAddresses({...both, multiaddrTCP: null}, false)).toEqual([]);
    // a QUIC dial that fails falls back to TCP
    const tried: string[] = [];
    const dial = async (address: string) => {
      tried.push(address);
      if (address.includes("quic")) throw new Error("handshake timed out");
    };
    expect(await dialDiscovered(both, true, dial)).toBe(both.multiaddrTCP);
    expect(tried).toEqual([both.multiaddrQUIC, both.multiaddrTCP]);
    expect(await dialDiscovered({...both, multiaddrTCP: null}, true, dial)).toBeNull();
  });

  it("with wanted subnets: only records advertising one of them", () => {
    const attnets = ssz.phase0.AttestationSubnets.serialize(BitArray.fromBoolArray(Array.from({length: 64}, (_, i) => i === 9)));
    const enr = record({eth2: eth2(digest), attnets, syncnets: Uint8Array.of(0b0100)}, {ip: "10.1.2.3", tcp: 9000});
    expect(eth2PeerOf(enr, digest, {attnets: [9]})).not.toBeNull();
    expect(eth2PeerOf(enr, digest, {attnets: [8, 10]})).toBeNull();
    expect(eth2PeerOf(enr, digest, {syncnets: [2]})).not.toBeNull();
    expect(eth2PeerOf(enr, digest, {attnets: [1], syncnets: [1]})).toBeNull();
  });
});
