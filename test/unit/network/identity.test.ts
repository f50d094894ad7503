import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {FAR_FUTURE_EPOCH} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {BitArray} from "@chainsafe/ssz";
import {chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {enrForkId, loadOrCreateNodeKey, NodeIdentity} from "../../../src/network/identity.ts";

const GVR = new Uint8Array(32).fill(9);
/** altair at genesis, bellatrix at epoch 2, capella to fulu at epoch 3 */
const config: BeaconConfig = createBeaconConfig(
  devChainConfig({secondsPerSlot: 2, genesisFork: "altair", forkEpochs: {bellatrix: 2, capella: 3, deneb: 3, electra: 3, fulu: 3}}),
  GVR
);

let dir: string;
let epoch: number;
const forks = {config, currentEpoch: () => epoch};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "identity-"));
  epoch = 0;
});
afterEach(() => rmSync(dir, {recursive: true, force: true}));

const decode = (identity: NodeIdentity) => ENR.decodeTxt(identity.enr());

describe("node key", () => {
  it("is made on first start, readable by its owner only, and the same afterwards", async () => {
    const key = await loadOrCreateNodeKey(dir);
    expect(key.length).toBe(32);
    expect(statSync(join(dir, "node.key")).mode & 0o777).toBe(0o600);
    expect(toHex(await loadOrCreateNodeKey(dir))).toBe(toHex(key));
  });

  it("restricts a key file others could read", async () => {
    await loadOrCreateNodeKey(dir);
    chmodSync(join(dir, "node.key"), 0o644);
    await loadOrCreateNodeKey(dir);
    expect(statSync(join(dir, "node.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses a key file that is not a key, rather than replacing the identity", async () => {
    writeFileSync(join(dir, "node.key"), "not a key", {mode: 0o600});
    await expect(loadOrCreateNodeKey(dir)).rejects.toThrow("is not a secp256k1 node key");
  });
});

describe("node identity", () => {
  it("keeps its peer id and ENR across restarts", async () => {
    const first = await NodeIdentity.load(dir, forks);
    const again = await NodeIdentity.load(dir, forks);
    expect(again.peerId).toBe(first.peerId);
    expect(first.peerId).toMatch(/^16Uiu2/);
    expect(again.enr()).toBe(first.enr());
    expect(decode(first).seq).toBe(1n);
    expect(decode(first).peerId.toString()).toBe(first.peerId);
  });

  it("carries the fork id of the wall-clock epoch, and from a scheduled fulu the custody count and next fork digest", async () => {
    const identity = await NodeIdentity.load(dir, forks);
    const record = decode(identity);
    const forkId = ssz.phase0.ENRForkID.deserialize(record.kvs.get("eth2")!);
    expect(toHex(forkId.forkDigest)).toBe(toHex(config.forkBoundary2ForkDigest({fork: "altair" as never, epoch: 0})));
    expect(toHex(forkId.nextForkVersion)).toBe(toHex(config.BELLATRIX_FORK_VERSION));
    expect(forkId.nextForkEpoch).toBe(2);
    expect(toHex(record.kvs.get("nfd")!)).toBe(toHex(config.forkBoundary2ForkDigest({fork: "bellatrix" as never, epoch: 2})));
    expect(toHex(record.kvs.get("cgc")!)).toBe("0x04");
    expect(toHex(record.kvs.get("attnets")!)).toBe("0x0000000000000000");
    expect(record.ip).toBeUndefined();
    expect(record.tcp).toBeUndefined();
    expect(identity.p2pAddresses()).toEqual([]);
    expect(identity.discoveryAddresses()).toEqual([]);
  });

  it("signs a new record with a higher sequence number at a fork boundary, and keeps it", async () => {
    const identity = await NodeIdentity.load(dir, forks);
    const before = identity.enr();
    epoch = 3;
    const after = decode(identity);
    expect(after.seq).toBe(2n);
    const eth2 = after.kvs.get("eth2")!;
    // next_fork_epoch is FAR_FUTURE_EPOCH: all ones (deserializing it gives a rounded number, so read the bytes)
    expect(toHex(eth2.subarray(8))).toBe("0x" + "ff".repeat(8));
    expect(toHex(ssz.phase0.ENRForkID.deserialize(eth2).nextForkVersion)).toBe(toHex(config.FULU_FORK_VERSION));
    expect(toHex(after.kvs.get("nfd")!)).toBe("0x00000000");
    expect(identity.enr()).not.toBe(before);
    expect(readFileSync(join(dir, "enr"), "utf8").trim()).toBe(identity.enr());
    expect(decode(await NodeIdentity.load(dir, forks)).seq).toBe(2n);
  });

  it("starts a fresh record when the stored ENR is another key's or not an ENR", async () => {
    writeFileSync(join(dir, "enr"), "enr:garbage\n");
    const identity = await NodeIdentity.load(dir, forks);
    expect(decode(identity).peerId.toString()).toBe(identity.peerId);
  });

  it("metadata: no subnets, the spec's minimum custody", () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(1), forks);
    expect(ssz.fulu.Metadata.toJson(identity.metadata())).toEqual({seq_number: "0", attnets: "0x0000000000000000", syncnets: "0x00", custody_group_count: "4"});
  });
});

describe("enrForkId", () => {
  it("without a next fork: the current version and FAR_FUTURE_EPOCH", () => {
    const {forkId, nextForkDigest} = enrForkId(config, 100);
    expect(toHex(ssz.phase0.ENRForkID.serialize(forkId).subarray(8))).toBe("0x" + "ff".repeat(8));
    expect(toHex(forkId.nextForkVersion)).toBe(toHex(config.FULU_FORK_VERSION));
    expect(forkId.nextForkEpoch).toBe(FAR_FUTURE_EPOCH);
    expect(toHex(nextForkDigest)).toBe("0x00000000");
  });
});

describe("ENR addresses", () => {
  const key = new Uint8Array(32).fill(3);

  it("carries ip, tcp and udp once set, with one new sequence number for the change, and keeps them across restarts", async () => {
    const identity = new NodeIdentity(key, forks, dir);
    const seq = decode(identity).seq;
    identity.setAddresses({ip: "127.0.0.1", tcp: 9000, udp: 9001});
    const record = decode(identity); // decodeTxt checks the signature
    expect(record.seq).toBe(seq + 1n);
    expect(record.ip).toBe("127.0.0.1");
    expect(record.tcp).toBe(9000);
    expect(record.udp).toBe(9001);
    // EIP-778: ip is 4 bytes, ports big endian
    expect(toHex(record.kvs.get("ip")!)).toBe("0x7f000001");
    expect(toHex(record.kvs.get("tcp")!)).toBe("0x2328");
    expect(toHex(record.kvs.get("udp")!)).toBe("0x2329");
    expect(identity.addresses()).toEqual({ip: "127.0.0.1", tcp: 9000, udp: 9001});
    expect(new NodeIdentity(key, forks, dir).enr()).toBe(identity.enr());
  });

  it("signs again only when something changed; an address not given is removed", () => {
    const identity = new NodeIdentity(key, forks);
    identity.setAddresses({ip: "10.0.0.1", tcp: 9000, udp: 9000});
    const seq = decode(identity).seq;
    identity.setAddresses({ip: "10.0.0.1", tcp: 9000, udp: 9000});
    expect(decode(identity).seq).toBe(seq);
    identity.setAddresses({ip: "10.0.0.1", ip6: "::1", tcp: 9000, udp: 9002});
    expect(decode(identity).seq).toBe(seq + 1n);
    expect(decode(identity).ip6).toBe("::1");
    expect(decode(identity).kvs.get("ip6")!.length).toBe(16);
    identity.setAddresses({ip: "10.0.0.1", tcp: 9000});
    const record = decode(identity);
    expect(record.seq).toBe(seq + 2n);
    expect([record.ip6, record.udp]).toEqual([undefined, undefined]);
  });

  it("carries the QUIC port under `quic`, as a big-endian port like tcp and udp", () => {
    const identity = new NodeIdentity(key, forks);
    identity.setAddresses({ip: "10.0.0.1", tcp: 9000, udp: 9000, quic: 9001});
    const record = decode(identity);
    expect(record.quic).toBe(9001);
    expect(toHex(record.kvs.get("quic")!)).toBe("0x2329");
    expect(identity.addresses()).toEqual({ip: "10.0.0.1", tcp: 9000, udp: 9000, quic: 9001});
  });

  it("refuses what is not a reachable address or a port", () => {
    const identity = new NodeIdentity(key, forks);
    expect(() => identity.setAddresses({ip: "0.0.0.0"})).toThrow("not an IPv4 address other nodes can reach");
    expect(() => identity.setAddresses({ip: "::1"})).toThrow("not an IPv4 address");
    expect(() => identity.setAddresses({ip6: "1.2.3.4"})).toThrow("not an IPv6 address");
    expect(() => identity.setAddresses({tcp: 0})).toThrow("tcp must be a port from 1 to 65535");
    expect(() => identity.setAddresses({udp: 65536})).toThrow("udp must be a port");
    expect(decode(identity).seq).toBe(1n);
  });

  it("the live record discv5 gets is the same object after every change, and is what enr() shows", () => {
    const identity = new NodeIdentity(key, forks);
    const live = identity.signableEnr();
    identity.setAddresses({ip: "127.0.0.1", udp: 9100});
    identity.setSubnets({attnets: BitArray.fromBoolArray(Array.from({length: 64}, (_, i) => i === 5))});
    epoch = 3;
    identity.refresh();
    expect(identity.signableEnr()).toBe(live);
    expect(live.encodeTxt()).toBe(identity.enr());
    expect(live.seq).toBe(4n);
    expect(ENR.decodeTxt(live.encodeTxt()).udp).toBe(9100);
  });
});

describe("subnets in MetaData and ENR", () => {
  const attnets = (...set: number[]) => BitArray.fromBoolArray(Array.from({length: 64}, (_, i) => set.includes(i)));
  const syncnets = (...set: number[]) => BitArray.fromBoolArray(Array.from({length: 4}, (_, i) => set.includes(i)));

  it("both change together; the MetaData seq_number rises by one per change, the ENR by one per change", () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(4), forks);
    identity.setSubnets({attnets: attnets(0, 9, 63), syncnets: syncnets(2)});
    const meta = ssz.fulu.Metadata.toJson(identity.metadata()) as Record<string, string>;
    // bit i is bit (i % 8) of byte i / 8 (SSZ Bitvector)
    expect(meta).toEqual({seq_number: "1", attnets: "0x0102000000000080", syncnets: "0x04", custody_group_count: "4"});
    expect(toHex(decode(identity).kvs.get("attnets")!)).toBe(meta.attnets);
    expect(toHex(decode(identity).kvs.get("syncnets")!)).toBe(meta.syncnets);
    expect(decode(identity).seq).toBe(2n);

    identity.setSubnets({attnets: attnets(0, 9, 63), syncnets: syncnets(2)});
    expect(identity.metadata().seqNumber).toBe(1n);
    expect(decode(identity).seq).toBe(2n);

    identity.setSubnets({syncnets: syncnets()});
    expect(identity.metadata().seqNumber).toBe(2n);
    expect(toHex(identity.metadata().attnets.uint8Array)).toBe("0x0102000000000080");
    expect(toHex(decode(identity).kvs.get("syncnets")!)).toBe("0x00");
    expect(decode(identity).seq).toBe(3n);
  });

  it("refuses bitfields of the wrong length", () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(4), forks);
    expect(() => identity.setSubnets({attnets: BitArray.fromBitLen(32)})).toThrow("attnets must have 64 bits");
    expect(() => identity.setSubnets({syncnets: BitArray.fromBitLen(8)})).toThrow("syncnets must have 4 bits");
  });
});

describe("listen addresses", () => {
  it("are what was last set, each ending in /p2p/<peer id>", () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(5), forks);
    identity.setListenAddresses(["/ip4/127.0.0.1/tcp/9000"], [`/ip4/0.0.0.0/udp/9000/p2p/${identity.peerId}`]);
    expect(identity.p2pAddresses()).toEqual([`/ip4/127.0.0.1/tcp/9000/p2p/${identity.peerId}`]);
    expect(identity.discoveryAddresses()).toEqual([`/ip4/0.0.0.0/udp/9000/p2p/${identity.peerId}`]);
    const other = new NodeIdentity(new Uint8Array(32).fill(6), forks).peerId;
    expect(() => identity.setListenAddresses([`/ip4/127.0.0.1/tcp/9000/p2p/${other}`], [])).toThrow("names another peer");
  });
});

describe("metadata for the Beacon API", () => {
  const configAt = (genesisFork: "phase0" | "altair", fulu?: number) =>
    createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork, forkEpochs: fulu === undefined ? {} : {altair: 1, bellatrix: 1, capella: 1, deneb: 1, electra: 1, fulu}}), GVR);

  it("has the fields of the wall-clock fork: phase0 (v1), altair (v2, syncnets), fulu (v3, custody_group_count)", () => {
    const at = {epoch: 0};
    const identity = new NodeIdentity(new Uint8Array(32).fill(8), {config: configAt("phase0", 2), currentEpoch: () => at.epoch});
    expect(identity.metadataVersion()).toBe(1);
    expect(identity.metadataForApi()).toEqual({seqNumber: 0n, attnets: BitArray.fromBitLen(64)});
    // fulu is scheduled: the ENR carries cgc already, the MetaData of the API not yet
    expect(decode(identity).kvs.get("cgc")).toBeDefined();
    at.epoch = 1;
    expect(identity.metadataVersion()).toBe(2);
    expect(Object.keys(identity.metadataForApi())).toEqual(["seqNumber", "attnets", "syncnets"]);
    at.epoch = 2;
    expect(identity.metadataVersion()).toBe(3);
    expect(ssz.fulu.Metadata.toJson(identity.metadataForApi() as never)).toEqual(ssz.fulu.Metadata.toJson(identity.metadata()));
  });

  it("with fulu not scheduled: no cgc or nfd in the ENR", () => {
    const identity = new NodeIdentity(new Uint8Array(32).fill(8), {config: configAt("altair"), currentEpoch: () => 0});
    expect(identity.metadataVersion()).toBe(2);
    expect([decode(identity).kvs.has("cgc"), decode(identity).kvs.has("nfd")]).toEqual([false, false]);
  });
});
