import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig, createChainForkConfig, type ChainConfig} from "@lodestar/config";
import {createHash} from "node:crypto";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {irrelevantReason, ourStatus, type Status} from "../../../src/network/status.ts";

const GVR = Uint8Array.from({length: 32}, (_, i) => i + 1);
// every fork one epoch after the previous (minimal preset: 8 slots an epoch), and a blob-parameters-only fork at epoch 7
const config = createBeaconConfig(
  createChainForkConfig({
    ...(devChainConfig({secondsPerSlot: 6, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2, capella: 3, deneb: 4, electra: 5, fulu: 6}}) as unknown as ChainConfig),
    BLOB_SCHEDULE: [{EPOCH: 7, MAX_BLOBS_PER_BLOCK: 12}],
  }),
  GVR
);

// fork versions of the spec's configs/minimal.yaml
const VERSIONS = ["00000001", "01000001", "02000001", "03000001", "04000001", "05000001", "06000001"];
const sha256 = (...parts: Uint8Array[]) => new Uint8Array(createHash("sha256").update(Buffer.concat(parts)).digest());
const uint64le = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};
/** phase0 compute_fork_digest: hash_tree_root(ForkData(version, gvr))[:4]; both fields pad to one 32-byte chunk each */
function forkDigest(versionHex: string): Uint8Array {
  const version = new Uint8Array(32);
  version.set(Buffer.from(versionHex, "hex"));
  return sha256(version, GVR).subarray(0, 4);
}
/** fulu compute_fork_digest: the fork data root xor hash(uint64(blob params epoch) ++ uint64(max blobs)), first 4 bytes */
function fuluForkDigest(versionHex: string, blobEpoch: number, maxBlobs: number): Uint8Array {
  const version = new Uint8Array(32);
  version.set(Buffer.from(versionHex, "hex"));
  const base = sha256(version, GVR);
  const mask = sha256(uint64le(blobEpoch), uint64le(maxBlobs));
  return base.map((b, i) => b ^ mask[i]).subarray(0, 4);
}

const root = (fill: number) => new Uint8Array(32).fill(fill);

function chainAt(currentSlot: number, finalized: {epoch: number; root: Uint8Array}, head = {slot: currentSlot, blockRoot: root(0xbb)}) {
  return {
    config,
    currentSlot: () => currentSlot,
    getHead: () => ({slot: head.slot, blockRoot: head.blockRoot, stateRoot: root(0), executionBlockHash: root(0)}),
    getFinalizedCheckpoint: () => finalized,
  };
}

describe("ourStatus", () => {
  it("sends the zero root as the finalized root while the finalized epoch is 0", () => {
    const status = ourStatus(chainAt(5, {epoch: 0, root: root(0xaa)}), 0);
    expect(status.finalizedEpoch).toBe(0);
    expect(status.finalizedRoot).toEqual(new Uint8Array(32));
    expect(status.headRoot).toEqual(root(0xbb));
    expect(status.headSlot).toBe(5);
    expect(status.earliestAvailableSlot).toBe(0);
  });

  it("sends the finalized checkpoint's root once an epoch after genesis is finalized, and the earliest available slot", () => {
    const status = ourStatus(chainAt(40, {epoch: 3, root: root(0xaa)}, {slot: 38, blockRoot: root(0xcc)}), 24);
    expect(status).toMatchObject({finalizedEpoch: 3, finalizedRoot: root(0xaa), headSlot: 38, headRoot: root(0xcc), earliestAvailableSlot: 24});
  });

  it.each([
    [0, 0],
    [7, 0],
    [8, 1],
    [17, 2],
    [24, 3],
    [39, 4],
    [40, 5],
  ])("at slot %i carries the fork digest of epoch %i's fork version, computed per compute_fork_digest", (slot, epoch) => {
    const status = ourStatus(chainAt(slot, {epoch: 0, root: root(0)}, {slot: 0, blockRoot: root(1)}), 0);
    expect(Buffer.from(status.forkDigest).toString("hex")).toBe(Buffer.from(forkDigest(VERSIONS[epoch])).toString("hex"));
  });

  it("is driven by the wall-clock slot, not the head's slot", () => {
    const status = ourStatus(chainAt(9, {epoch: 0, root: root(0)}, {slot: 3, blockRoot: root(1)}), 0);
    expect(status.forkDigest).toEqual(forkDigest(VERSIONS[1]));
  });

  it("from fulu masks the digest with the blob parameters (electra's before the first BPO fork, then the schedule's)", () => {
    const atFulu = ourStatus(chainAt(48, {epoch: 0, root: root(0)}), 0);
    expect(atFulu.forkDigest).toEqual(fuluForkDigest(VERSIONS[6], 5, 9)); // ELECTRA_FORK_EPOCH, MAX_BLOBS_PER_BLOCK_ELECTRA
    const atBpo = ourStatus(chainAt(56, {epoch: 0, root: root(0)}), 0);
    expect(atBpo.forkDigest).toEqual(fuluForkDigest(VERSIONS[6], 7, 12));
    expect(atBpo.forkDigest).not.toEqual(atFulu.forkDigest);
  });
});

describe("irrelevantReason", () => {
  const DIGEST = forkDigest(VERSIONS[3]);
  const ours: Status = {forkDigest: DIGEST, finalizedRoot: root(0xf3), finalizedEpoch: 3, headRoot: root(0xee), headSlot: 30};
  const theirs = (edit: Partial<Status>): Status => ({...ours, ...edit});
  const CURRENT_SLOT = 30;
  const calls: number[] = [];
  /** our finalized chain: epoch 1's checkpoint root is 0xf1, epoch 2's is unknown (e.g. pruned) */
  const checkpointRootAt = async (epoch: number) => {
    calls.push(epoch);
    return epoch === 1 ? root(0xf1) : null;
  };
  const reason = (status: Status) => irrelevantReason(ours, status, CURRENT_SLOT, checkpointRootAt);

  it("accepts a peer with our own status", async () => {
    expect(await reason(theirs({}))).toBeNull();
  });

  it("rejects another fork digest, naming it", async () => {
    expect(await reason(theirs({forkDigest: forkDigest(VERSIONS[2])}))).toMatch(/fork digest/);
    expect(await reason(theirs({forkDigest: Uint8Array.from([0xde, 0xad, 0xbe, 0xef])}))).toMatch(/0xdeadbeef/);
  });

  it("rejects a head beyond the current slot with one slot of tolerance", async () => {
    expect(await reason(theirs({headSlot: CURRENT_SLOT + 1}))).toBeNull();
    expect(await reason(theirs({headSlot: CURRENT_SLOT + 2}))).toMatch(/head slot 32 is ahead of the current slot 30/);
  });

  it("rejects the same finalized epoch with another root", async () => {
    expect(await reason(theirs({finalizedRoot: root(0x01)}))).toMatch(/finalized root at epoch 3 differs/);
  });

  it("accepts a finalized epoch ahead of ours (we cannot check it yet)", async () => {
    expect(await reason(theirs({finalizedEpoch: 4, finalizedRoot: root(0x44), headSlot: 31}))).toBeNull();
  });

  it("checks an older finalized checkpoint against our finalized chain", async () => {
    calls.length = 0;
    expect(await reason(theirs({finalizedEpoch: 1, finalizedRoot: root(0xf1)}))).toBeNull();
    expect(await reason(theirs({finalizedEpoch: 1, finalizedRoot: root(0x01)}))).toMatch(/finalized root at epoch 1 is not on our chain/);
    expect(calls).toEqual([1, 1]);
  });

  it("accepts an older finalized checkpoint whose root we no longer know", async () => {
    expect(await reason(theirs({finalizedEpoch: 2, finalizedRoot: root(0x02)}))).toBeNull();
  });

  it("accepts a peer whose finalized epoch is 0, whatever its root, without a lookup", async () => {
    calls.length = 0;
    expect(await reason(theirs({finalizedEpoch: 0, finalizedRoot: new Uint8Array(32)}))).toBeNull();
    expect(await reason(theirs({finalizedEpoch: 0, finalizedRoot: root(0x99)}))).toBeNull();
    expect(calls).toEqual([]);
  });

  it("two genesis-finalized nodes (both zero roots) accept each other", async () => {
    const genesisOurs = {...ours, finalizedEpoch: 0, finalizedRoot: new Uint8Array(32)};
    expect(await irrelevantReason(genesisOurs, {...genesisOurs, headSlot: 3}, CURRENT_SLOT, checkpointRootAt)).toBeNull();
  });
});
