import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {multiaddr} from "@multiformats/multiaddr";
import {echoHandler, readToEnd} from "./echoStream.ts";
import {loadQuic, type BeaconLibp2p} from "../../../src/network/libp2p.ts";
import {loopbackHost} from "./loopbackHost.ts";

/**
 * Two of the node's libp2p hosts over QUIC alone (quic-v1 on loopback UDP): the connection is
 * QUIC's own (TLS 1.3 and its streams, no noise or yamux), and identify, ping and a protocol
 * stream run over it. @chainsafe/libp2p-quic's binding exists for this machine (linux-x64).
 */

const PROTOCOL = "/test/echo/1";
const hosts: BeaconLibp2p[] = [];

async function host(quicPort: number | null): Promise<BeaconLibp2p> {
  const h = await loopbackHost({quicPort});
  await h.start();
  hosts.push(h);
  return h;
}

const quicAddress = (h: BeaconLibp2p) => h.getMultiaddrs().find((a) => a.toString().includes("/quic-v1"));

describe("libp2p over QUIC", () => {
  let a: BeaconLibp2p;
  let b: BeaconLibp2p;
  beforeAll(async () => {
    expect(await loadQuic()).not.toBeNull();
    a = await host(0);
    b = await host(0);
    await a.handle(PROTOCOL, echoHandler);
  });
  afterAll(async () => {
    for (const h of hosts) await h.stop();
  });

  it("listens on a UDP port with quic-v1 beside TCP", () => {
    const addresses = a.getMultiaddrs().map(String);
    expect(addresses.some((s) => /^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\//.test(s))).toBe(true);
    expect(addresses.some((s) => /^\/ip4\/127\.0\.0\.1\/udp\/[1-9]\d*\/quic-v1\/p2p\//.test(s))).toBe(true);
  });

  it("connects over QUIC only, and runs identify, ping and a protocol stream on it", async () => {
    const connection = await b.dial(multiaddr(quicAddress(a)!.toString()));
    expect(connection.remoteAddr.toString()).toContain("/quic-v1");
    expect(await b.services.ping.ping(a.peerId)).toBeGreaterThanOrEqual(0);
    const stream = await b.dialProtocol(a.peerId, PROTOCOL);
    stream.send(Uint8Array.of(7, 8, 9));
    await stream.close();
    expect(await readToEnd(stream)).toEqual([7, 8, 9]);
    // identify ran over the QUIC connection: b knows a's protocols
    const peer = await b.peerStore.get(a.peerId);
    expect(peer.protocols).toContain(PROTOCOL);
  });

  it("reads an answer whose data and end both arrived before the reader started", async () => {
    const stream = await b.dialProtocol(a.peerId, PROTOCOL);
    stream.send(Uint8Array.of(1, 2));
    await stream.close();
    if (stream.remoteWriteStatus !== "closed") await new Promise((resolve) => stream.addEventListener("remoteCloseWrite", resolve, {once: true}));
    expect(stream.readBufferLength).toBe(2);
    expect(await readToEnd(stream)).toEqual([1, 2]);
  });

  it("stays on TCP alone when QUIC is turned off", async () => {
    const tcpOnly = await host(null);
    expect(tcpOnly.getMultiaddrs().map(String).some((s) => s.includes("quic"))).toBe(false);
  });
});
