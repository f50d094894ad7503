import {afterAll, beforeAll, describe, expect, it, jest} from "@jest/globals";
import {SignableENR} from "@chainsafe/enr";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {createBeaconConfig} from "@lodestar/config";
import {createSocket, type Socket} from "node:dgram";
import {PassThrough} from "node:stream";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {initLogging, logManager, parseLogDirective} from "../../../src/log.ts";
import {Discovery, SILENT_RETRY_FIRST_MS, SILENT_RETRY_MAX_MS} from "../../../src/network/discovery.ts";
import {NodeIdentity} from "../../../src/network/identity.ts";

jest.setTimeout(30_000);

/**
 * Bootnodes that never answer (a UDP socket on 127.0.0.1 that counts what it receives and
 * replies nothing: a public network's bootnodes seen from a machine without internet). The node
 * says so once, and asks again at doubling intervals up to a maximum, on the injected clock;
 * when a node answers it says so and searches at the usual pace again.
 */

const config = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), new Uint8Array(32).fill(1));
const digest = () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(0));

interface Line {
  level: number;
  msg: string;
}
const lines: Line[] = [];
const initial = logManager().current();
let sink: Socket;
let received = 0;
const running: Discovery[] = [];

async function udpPort(socket: Socket): Promise<number> {
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return socket.address().port;
}

async function node(bootEnrs: string[], now: () => number): Promise<{discovery: Discovery; identity: NodeIdentity}> {
  const identity = new NodeIdentity((await generateKeyPair("secp256k1")).raw, {config, currentEpoch: () => 0});
  const probe = createSocket("udp4");
  const udp = await udpPort(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  identity.setAddresses({ip: "127.0.0.1", tcp: 30303, udp});
  const discovery = new Discovery({
    identity,
    bindAddress: "127.0.0.1",
    udpPort: udp,
    bootEnrs,
    forkDigest: digest,
    onPeer: () => {},
    now,
    // a silent node costs one request timeout per lookup; discv5 11 keeps each lookup's timer alive for lookupTimeout
    discv5Config: {requestTimeout: 200, requestRetries: 0, lookupTimeout: 1000},
  });
  await discovery.start();
  running.push(discovery);
  return {discovery, identity};
}

beforeAll(async () => {
  const out = new PassThrough();
  out.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n").map((l) => JSON.parse(l) as Line)));
  initLogging({directive: parseLogDirective("INFO"), format: "json", destination: out});
  sink = createSocket("udp4");
  sink.on("message", () => received++);
  await udpPort(sink);
});

afterAll(async () => {
  await Promise.all(running.map((d) => d.stop()));
  await new Promise<void>((resolve) => sink.close(() => resolve()));
  initLogging({directive: initial, format: "text"});
});

/** Lets datagrams in flight arrive before counting. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe("discovery when no bootnode answers", () => {
  it("says so once, then asks again at doubling intervals up to the maximum; says so once more when a node answers", async () => {
    const silent = SignableENR.createV4((await generateKeyPair("secp256k1")).raw);
    silent.ip = "127.0.0.1";
    silent.udp = sink.address().port;
    let t = 1_000_000;
    const a = await node([silent.encodeTxt()], () => t);

    expect(await a.discovery.findPeers(8)).toBe(0);
    await settle();
    expect(received).toBeGreaterThan(0); // it did ask the bootnode
    const warnings = () => lines.filter((l) => l.level >= 40);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0].msg).toContain("none of the 1 bootnodes answered");

    // each wait: nothing is sent before it has passed, a search right after
    const waits: number[] = [];
    for (let wait = SILENT_RETRY_FIRST_MS; waits.length < 7; wait = Math.min(wait * 2, SILENT_RETRY_MAX_MS)) {
      waits.push(wait);
      const before = received;
      t += wait - 1;
      expect(await a.discovery.findPeers(8)).toBe(0);
      await settle();
      expect(received).toBe(before);
      t += 1;
      expect(await a.discovery.findPeers(8)).toBe(0);
      await settle();
      expect(received).toBeGreaterThan(before);
    }
    expect(waits).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    // eight silent searches, one line about them
    expect(warnings()).toHaveLength(1);
    expect(lines.filter((l) => l.msg.includes("answer"))).toHaveLength(1);

    // a node that boots from A puts itself in A's table: A searches again at once, without waiting out its backoff, and is answered
    const b = await node([a.identity.enr()], () => t);
    await b.discovery.findPeers(8);
    await a.discovery.findPeers(8);
    expect(lines.filter((l) => l.msg === "discovery: nodes answer again")).toHaveLength(1);
    // and the next search is not held back
    const before = received;
    await a.discovery.findPeers(8);
    await settle();
    expect(received).toBeGreaterThan(before);
    expect(warnings()).toHaveLength(1);
  });
});
