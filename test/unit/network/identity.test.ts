import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {FAR_FUTURE_EPOCH} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
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
