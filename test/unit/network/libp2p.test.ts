import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {noise} from "@chainsafe/libp2p-noise";
import {generateKeyPair} from "@libp2p/crypto/keys";
import type {Libp2p} from "@libp2p/interface";
import {identify} from "@libp2p/identify";
import {mplex} from "@libp2p/mplex";
import {ping} from "@libp2p/ping";
import {tcp} from "@libp2p/tcp";
import {createLibp2p} from "libp2p";
import type {BeaconLibp2p} from "../../../src/network/libp2p.ts";
import {loopbackHost} from "./loopbackHost.ts";
import {echoHandler, readToEnd} from "./echoStream.ts";

/**
 * The node's libp2p host against a peer that speaks only mplex (as Lodestar 1.x does), over
 * real loopback sockets: a peer that opens many streams at once, as a beacon node does right
 * after connecting (identify, gossipsub, ping, status, metadata, block requests), keeps its
 * connection. @libp2p/mplex's default closed it after the fifth stream within a second.
 */

const PROTOCOL = "/test/echo/1";
const BURST = 24;

let host: BeaconLibp2p;
let peer: Libp2p;

beforeAll(async () => {
  host = await loopbackHost();
  await host.start();
  await host.handle(
    PROTOCOL,
    echoHandler,
    {maxInboundStreams: BURST * 2}
  );
  peer = await createLibp2p({
    privateKey: await generateKeyPair("secp256k1"),
    addresses: {listen: ["/ip4/127.0.0.1/tcp/0"]},
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [mplex()],
    services: {identify: identify(), ping: ping()},
  });
});

afterAll(async () => {
  await peer?.stop();
  await host?.stop();
});

async function echo(payload: number): Promise<number> {
  const stream = await peer.dialProtocol(host.peerId, PROTOCOL, {maxOutboundStreams: BURST * 2});
  stream.send(Uint8Array.of(payload));
  await stream.close();
  return (await readToEnd(stream))[0];
}

describe("libp2p host over mplex", () => {
  it("keeps a connection whose peer opens many streams within a second", async () => {
    const connection = await peer.dial(host.getMultiaddrs()[0]);
    expect(connection.multiplexer).toBe("/mplex/6.7.0");
    // one round trip first: libp2p refuses more than 10 streams opened before the host has set the connection up
    expect(await echo(255)).toBe(255);
    const payloads = Array.from({length: BURST}, (_, i) => i);
    const echoed = await Promise.all(payloads.map((p) => echo(p)));
    expect(echoed).toEqual(payloads);
    expect(connection.status).toBe("open");
    expect(peer.getConnections(host.peerId).filter((c) => c.status === "open")).toHaveLength(1);
  });
});
