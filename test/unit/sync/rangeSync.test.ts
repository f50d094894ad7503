import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from "@jest/globals";
import {DOMAIN_RANDAO, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {ssz, type SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {once} from "node:events";
import type {PeerAction} from "../../../src/network/peers/peerScore.ts";
import type {Status} from "../../../src/network/status.ts";
import {BATCH_SLOTS, RangeSync} from "../../../src/sync/rangeSync.ts";
import {copyBlock, type ChainEnv} from "../network/gossip/validation/chainEnv.ts";
import {createSourceChain, createTargetChain, within} from "./sourceChain.ts";

const HEAD = 40; // five epochs of the minimal preset
let source: ChainEnv;
let sourceBlocks: SignedBeaconBlock[];

beforeAll(async () => {
  ({env: source, blocks: sourceBlocks} = await createSourceChain(HEAD));
}, 60_000);
afterAll(() => source?.close());

type Serve = (startSlot: number, count: number) => Promise<SignedBeaconBlock[]>;

/** The source chain's canonical blocks in [startSlot, startSlot + count) up to `headSlot`, as an honest peer serves them. */
const honestUpTo =
  (headSlot: number): Serve =>
  async (startSlot, count) => {
    const blocks: SignedBeaconBlock[] = [];
    for (let slot = startSlot; slot < Math.min(startSlot + count, headSlot + 1); slot++) {
      const block = await source.chain.getCanonicalBlockAtSlot(slot);
      if (block) blocks.push(block);
    }
    return blocks;
  };
const honest = honestUpTo(HEAD);

/**
 * Peers that answer as `serve` says, with the source's head in their status (or what `statuses`
 * changes of it, peer by peer); records every request and report.
 */
function fakePeers(target: ChainEnv, serves: Record<string, Serve>, headSlot = HEAD, statuses: Record<string, Partial<Status>> = {}) {
  const status: Status = {
    forkDigest: new Uint8Array(4),
    finalizedRoot: source.chain.getFinalizedCheckpoint().root,
    finalizedEpoch: source.chain.getFinalizedCheckpoint().epoch,
    headRoot: source.chain.getHead().blockRoot,
    headSlot,
  };
  const requests: {peer: string; startSlot: number; count: number; syncing: boolean; target: number}[] = [];
  const reports: {peer: string; action: PeerAction; reason: string}[] = [];
  const sync: RangeSync = new RangeSync({
    chain: target.chain,
    syncPeers: () => Object.keys(serves).map((peerId) => ({peerId, status: {...status, ...statuses[peerId]}})),
    report: (peer, action, reason) => void reports.push({peer, action, reason}),
    hasBlock: (root) => target.chain.forkChoice.hasBlock(root),
    fetchBlocksByRange: async (peer, startSlot, count) => {
      const request = {peer, startSlot, count, syncing: false, target: 0};
      requests.push(request);
      await Promise.resolve(); // a peer's answer arrives later: what the sync says meanwhile
      request.syncing = sync.isSyncing();
      request.target = sync.target();
      return serves[peer](startSlot, count);
    },
  });
  return {sync, status, requests, reports};
}

/** Starts a round as a peer's status would, and waits for its `done` event. */
async function syncRound(sync: RangeSync, status: Status): Promise<number> {
  const done = once(sync, "done");
  sync.onPeerStatus(status);
  expect(sync.isSyncing()).toBe(true);
  const [headSlot] = await within(done, 30_000, "range sync done");
  return headSlot as number;
}

const headRootHex = (env: ChainEnv) => toRootHex(env.chain.getHead().blockRoot);
/** Whether `env` stored every one of `blocks` (fork choice forgets the finalized ones, the database keeps them). */
async function hasEveryBlock(env: ChainEnv, blocks: SignedBeaconBlock[]): Promise<boolean> {
  for (const b of blocks) {
    if (!(await env.chain.getBlockByRoot(env.config.getForkTypes(b.message.slot).BeaconBlock.hashTreeRoot(b.message)))) return false;
  }
  return true;
}

/** The source's blocks up to `forkSlot` - 1 on `env`, then a block of its own at `forkSlot` (another graffiti, so not the source's); returns its import result. */
async function forkAt(env: ChainEnv, forkSlot: number) {
  for (const block of sourceBlocks.slice(0, forkSlot - 1)) await env.chain.importBlock(block);
  env.setTime(forkSlot, 100);
  const proposer = (await env.chain.getHeadStateAtEpoch(computeEpochAtSlot(forkSlot))).epochCtx.getBeaconProposer(forkSlot);
  const randaoReveal = env.sign(proposer, computeSigningRoot(ssz.Epoch, computeEpochAtSlot(forkSlot), env.config.getDomain(forkSlot, DOMAIN_RANDAO)));
  const {block} = await env.chain.produceBlock({slot: forkSlot, randaoReveal, graffiti: new Uint8Array(32).fill(0x42)});
  return env.chain.importBlock(env.signBlock(block));
}

describe("RangeSync over a real chain", () => {
  let target: ChainEnv;
  beforeEach(async () => {
    target = await createTargetChain(HEAD);
  });
  afterEach(() => target.close());

  it("imports up to the peers' head in batches of two epochs spread over the peers, syncing until done", async () => {
    expect(BATCH_SLOTS).toBe(2 * SLOTS_PER_EPOCH);
    expect(SLOTS_PER_EPOCH).toBe(8); // the minimal preset the tests run with
    const {sync, status, requests, reports} = fakePeers(target, {a: honest, b: honest, c: honest});
    expect(sync.target()).toBe(0);

    const doneSlot = await syncRound(sync, status);

    expect(doneSlot).toBe(HEAD);
    expect(sync.isSyncing()).toBe(false);
    expect(sync.target()).toBe(0);
    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(target.chain.getFinalizedCheckpoint().epoch).toBe(source.chain.getFinalizedCheckpoint().epoch);
    expect(requests.map((r) => [r.startSlot, r.count])).toEqual([
      [1, 16],
      [17, 16],
      [33, 16],
    ]);
    expect(new Set(requests.map((r) => r.peer))).toEqual(new Set(["a", "b", "c"]));
    expect(requests.every((r) => r.syncing && r.target === HEAD)).toBe(true);
    expect(reports).toEqual([]);
  });

  it("does not start a round for a peer less than two slots ahead, and starts one at two", async () => {
    const {sync, status, requests} = fakePeers(target, {a: honestUpTo(2)}, 2);
    sync.onPeerStatus({...status, headSlot: 1});
    expect(sync.isSyncing()).toBe(false);
    expect(requests).toEqual([]);

    expect(await syncRound(sync, status)).toBe(2);
    expect(requests.map((r) => [r.peer, r.startSlot])).toEqual([["a", 1]]);
    expect(target.chain.getHead().slot).toBe(2);
  });

  it("starts no second round while one is under way", async () => {
    const {sync, status, requests} = fakePeers(target, {a: honest});
    const done = once(sync, "done");
    sync.onPeerStatus(status);
    sync.onPeerStatus(status);
    await within(done, 30_000, "range sync done");
    expect(requests.map((r) => r.startSlot)).toEqual([1, 17, 33]);
  });

  it("reports a peer serving a block with a broken signature ('high') and takes the batch from another peer", async () => {
    const brokenSignature: Serve = async (start, count) =>
      (await honest(start, count)).map((b, i) => {
        if (i !== 2) return b;
        const signature = Uint8Array.from(b.signature);
        signature[95] ^= 1;
        return {...b, signature} as SignedBeaconBlock;
      });
    const {sync, status, requests, reports} = fakePeers(target, {bad: brokenSignature, good: honest});

    expect(await syncRound(sync, status)).toBe(HEAD);

    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports.length).toBeGreaterThan(0);
    expect(requests[0]).toMatchObject({peer: "bad", startSlot: 1});
    expect(reports.every((r) => r.peer === "bad" && r.action === "high" && /INVALID_SIGNATURE/.test(r.reason))).toBe(true);
    // every batch the bad peer got was asked again of the good one
    for (const r of requests.filter((q) => q.peer === "bad")) {
      expect(requests.some((q) => q.peer === "good" && q.startSlot === r.startSlot)).toBe(true);
    }
  });

  it("reports a peer serving a wrong block ('high': a re-signed block whose state root does not follow) and syncs from another", async () => {
    const wrongBlock: Serve = async (start, count) =>
      (await honest(start, count)).map((b, i) => {
        if (i !== 3) return b;
        const message = copyBlock(source.config, b.message);
        message.body.graffiti = new Uint8Array(32).fill(0x77);
        return source.signBlock(message);
      });
    const {sync, status, requests, reports} = fakePeers(target, {wrong: wrongBlock, good: honest});

    expect(await syncRound(sync, status)).toBe(HEAD);

    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports.length).toBeGreaterThan(0);
    expect(reports.every((r) => r.peer === "wrong" && r.action === "high" && /INVALID_STATE_ROOT/.test(r.reason))).toBe(true);
    expect(requests[0]).toMatchObject({peer: "wrong", startSlot: 1});
    expect(requests.find((r, i) => i > 0 && r.startSlot === 1)).toMatchObject({peer: "good"});
  });

  it("reports a peer whose request fails ('low') and takes the batch from another", async () => {
    const failing: Serve = async () => {
      throw new Error("stream reset");
    };
    const {sync, status, requests, reports} = fakePeers(target, {flaky: failing, good: honest});

    expect(await syncRound(sync, status)).toBe(HEAD);

    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports.length).toBeGreaterThan(0);
    expect(requests[0]).toMatchObject({peer: "flaky", startSlot: 1});
    expect(reports.every((r) => r.peer === "flaky" && r.action === "low" && /stream reset/.test(r.reason))).toBe(true);
    for (const r of requests.filter((q) => q.peer === "flaky")) {
      expect(requests.some((q) => q.peer === "good" && q.startSlot === r.startSlot)).toBe(true);
    }
  });

  it("reports a peer that withholds a batch's blocks ('low') once the next batch does not build on it, and syncs from another", async () => {
    const withholding: Serve = async () => [];
    const {sync, status, requests, reports} = fakePeers(target, {lazy: withholding, good: honest});

    expect(await syncRound(sync, status)).toBe(HEAD);

    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports.length).toBeGreaterThan(0);
    expect(reports.every((r) => r.peer === "lazy" && r.action === "low")).toBe(true);
    // no restart from the finalized checkpoint: the withheld batch itself was fetched again
    expect(requests.filter((r) => r.peer === "lazy").every((r) => requests.some((q) => q.peer === "good" && q.startSlot === r.startSlot))).toBe(true);
  });

  it("gives up a round (done, head unchanged) when the only peer keeps failing", async () => {
    const {sync, status, requests, reports} = fakePeers(target, {flaky: async () => Promise.reject(new Error("no"))});
    expect(await syncRound(sync, status)).toBe(0);
    // MAX_BATCH_ATTEMPTS of the first batch, each reported
    expect(requests.filter((r) => r.startSlot === 1)).toHaveLength(5);
    expect(reports).toHaveLength(5);
    expect(reports.every((r) => r.peer === "flaky" && r.action === "low")).toBe(true);
  });

  it("when our head is on a branch the peers lack, starts again from the finalized checkpoint", async () => {
    const FORK_SLOT = 37;
    const ours = await forkAt(target, FORK_SLOT);
    expect(ours.isHead).toBe(true);
    expect(target.chain.forkChoice.hasBlock(toRootHex(source.config.getForkTypes(FORK_SLOT).BeaconBlock.hashTreeRoot(sourceBlocks[FORK_SLOT - 1].message)))).toBe(false);
    target.setTime(HEAD, 500);
    const finalizedEpoch = target.chain.getFinalizedCheckpoint().epoch;
    expect(finalizedEpoch).toBeGreaterThan(0);

    const {sync, status, requests, reports} = fakePeers(target, {a: honest, b: honest});
    expect(await syncRound(sync, status)).toBe(HEAD);

    const restartSlot = computeStartSlotAtEpoch(finalizedEpoch) + 1;
    expect(requests[0].startSlot).toBe(FORK_SLOT + 1);
    expect(requests.map((r) => r.startSlot)).toContain(restartSlot);
    expect(requests.map((r) => r.startSlot).filter((s) => s < restartSlot)).toEqual([]);
    expect(await hasEveryBlock(target, sourceBlocks)).toBe(true);
    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports).toEqual([]);
  });

  it("follows one branch: a peer on another head serves only batches within its finalized part, and is not blamed for the branches differing", async () => {
    // a peer of the other half of a split network: the same finalized checkpoint, another head a few slots lower
    const finalizedSlot = computeStartSlotAtEpoch(source.chain.getFinalizedCheckpoint().epoch);
    expect(finalizedSlot).toBeGreaterThanOrEqual(BATCH_SLOTS);
    const otherBranch: Serve = async (start, count) =>
      (await honest(start, count)).map((b) => {
        if (b.message.slot <= finalizedSlot) return b;
        // its own blocks above the finalized checkpoint: valid ones of another branch would not link to ours either
        const message = copyBlock(source.config, b.message);
        message.body.graffiti = new Uint8Array(32).fill(0x55);
        return source.signBlock(message);
      });
    const other = {headRoot: new Uint8Array(32).fill(0xbb), headSlot: HEAD - 3};
    // x second: taking batches in turn over every peer ahead, it would be asked for the second batch, above its finalized part
    const {sync, status, requests, reports} = fakePeers(target, {a: honest, x: otherBranch, b: honest}, HEAD, {x: other});

    expect(await syncRound(sync, status)).toBe(HEAD);

    expect(headRootHex(target)).toBe(headRootHex(source));
    expect(reports).toEqual([]);
    // the other branch's peer is asked for the shared, finalized part only
    expect(requests.filter((r) => r.peer === "x").every((r) => r.startSlot + r.count - 1 <= finalizedSlot)).toBe(true);
    expect(requests.filter((r) => r.startSlot > 1).length).toBeGreaterThan(0);
  });

  it("a branch we lack with a head no higher than ours (lookups by root gave up on it): onUnknownBranch syncs it; a peer whose head we have starts nothing", async () => {
    const FORK_SLOT = 37;
    await forkAt(target, FORK_SLOT);
    target.setTime(FORK_SLOT + 1, 500);
    const sourceRoot = source.config.getForkTypes(FORK_SLOT).BeaconBlock.hashTreeRoot(sourceBlocks[FORK_SLOT - 1].message);

    // the other half's peer: its head at the same slot as ours, on its own branch
    const {sync, status, requests, reports} = fakePeers(target, {other: honestUpTo(FORK_SLOT)}, FORK_SLOT, {other: {headRoot: sourceRoot, headSlot: FORK_SLOT}});
    sync.onPeerStatus({...status, headRoot: sourceRoot, headSlot: FORK_SLOT});
    expect(sync.isSyncing()).toBe(false);

    const done = once(sync, "done");
    sync.onUnknownBranch();
    expect(sync.isSyncing()).toBe(true);
    await within(done, 30_000, "range sync done");
    expect(target.chain.forkChoice.hasBlock(toRootHex(sourceRoot))).toBe(true);
    expect(requests.length).toBeGreaterThan(0);
    expect(reports).toEqual([]);

    // now we have its head: nothing more to sync from it
    sync.onUnknownBranch();
    expect(sync.isSyncing()).toBe(false);
  });
});
