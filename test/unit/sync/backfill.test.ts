import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {ChainForkConfig} from "@lodestar/config";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {verifyOnThisThread} from "../../../src/bls/verifier.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import type {PeerAction} from "../../../src/network/peers/peerScore.ts";
import type {Status} from "../../../src/network/status.ts";
import {Backfill} from "../../../src/sync/backfill.ts";
import {BackfillBatchError, linkBatch, proposerSignaturesValid} from "../../../src/sync/backfillChecks.ts";
import {copyBlock, type ChainEnv} from "../network/gossip/validation/chainEnv.ts";
import {createSourceChain, within} from "./sourceChain.ts";

/**
 * Backfill's checks on real signed blocks of a real chain (interop keys): a batch must be the
 * chain of parent roots down from the lowest stored block, and each block must carry its
 * proposer's signature; a peer that serves otherwise is scored down and another asked.
 */

const ANCHOR = 12; // a block and a half epoch of the minimal preset: batches 8..11 and 0..7
let source: ChainEnv;
/** the source chain's blocks by slot, the genesis block at 0 */
const bySlot: SignedBeaconBlock[] = [];

beforeAll(async () => {
  const {env, blocks} = await createSourceChain(ANCHOR);
  source = env;
  bySlot.push((await env.chain.getCanonicalBlockAtSlot(0))!, ...blocks);
}, 60_000);
afterAll(() => source?.close());

const rootOf = (block: SignedBeaconBlock) => source.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
const validators = () => ({pubkeyCache: source.chain.getHeadState().epochCtx.pubkeyCache, count: source.chain.getHeadState().validators.length});

/** The block at `slot` with its graffiti changed, signed again by its proposer: a valid block of another branch. */
function otherBranchBlock(slot: number): SignedBeaconBlock {
  const message = copyBlock(source.config, bySlot[slot].message);
  message.body.graffiti = new Uint8Array(32).fill(7);
  return source.signBlock(message);
}

/** The block at `slot`, signed by another validator than its proposer: its root (the chain of roots) is unchanged. */
function wronglySigned(slot: number): SignedBeaconBlock {
  const message = bySlot[slot].message;
  return source.signBlock(message, (message.proposerIndex + 1) % 64);
}

describe("a backfill batch's checks", () => {
  it("accepts the chain of parent roots down from the expected root, and the proposers' signatures", async () => {
    const batch = bySlot.slice(1, 8);
    const {linked, nextExpected} = await linkBatch(source.config, batch, bySlot[8].message.parentRoot);
    expect(linked.map((b) => b.block.message.slot)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(toRootHex(nextExpected)).toBe(toRootHex(rootOf(bySlot[0])));
    expect(await proposerSignaturesValid(source.config, linked, validators(), verifyOnThisThread)).toBe(true);
  });

  it("refuses a block that does not link, even one its proposer signed", async () => {
    const batch = bySlot.slice(1, 8);
    batch[3] = otherBranchBlock(4);
    // its signature holds: only the link check can catch it
    expect(await proposerSignaturesValid(source.config, [{block: batch[3], root: rootOf(batch[3])}], validators(), verifyOnThisThread)).toBe(true);
    const refused = linkBatch(source.config, batch, bySlot[8].message.parentRoot);
    await expect(refused).rejects.toBeInstanceOf(BackfillBatchError);
    await expect(refused).rejects.toMatchObject({code: "NOT_LINKED"});
    // a batch that leaves out the newest block does not link either
    await expect(linkBatch(source.config, bySlot.slice(1, 7), bySlot[8].message.parentRoot)).rejects.toMatchObject({code: "NOT_LINKED"});
  });

  it("refuses a block signed by another validator than its proposer", async () => {
    const batch = bySlot.slice(1, 8);
    batch[4] = wronglySigned(5);
    // its root is the expected one: the chain of roots does not see the signature
    const {linked} = await linkBatch(source.config, batch, bySlot[8].message.parentRoot);
    expect(await proposerSignaturesValid(source.config, linked, validators(), verifyOnThisThread)).toBe(false);
  });
});

describe("backfill", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, {recursive: true, force: true})));

  /** A database as checkpoint sync leaves it: the anchor block, its canonical index entry and the anchor checkpoint. */
  async function anchoredDb(): Promise<BeaconDb> {
    const dir = mkdtempSync(join(tmpdir(), "bg-backfill-"));
    dirs.push(dir);
    const db = await BeaconDb.open(dir, source.config as ChainForkConfig);
    const anchor = bySlot[ANCHOR];
    await db.batch([
      db.blocks.putOp(rootOf(anchor), anchor),
      db.canonicalBlocks.putOp(ANCHOR, rootOf(anchor)),
      db.chainMeta.anchorCheckpoint.putOp({epoch: 2, root: rootOf(anchor)}),
    ]);
    return db;
  }

  const status = (peer: string): {peerId: string; status: Status} => ({
    peerId: peer,
    status: {forkDigest: new Uint8Array(4), finalizedRoot: new Uint8Array(32), finalizedEpoch: 2, headRoot: new Uint8Array(32), headSlot: ANCHOR, earliestAvailableSlot: 0},
  });

  type Serve = (start: number, count: number, signal: AbortSignal) => Promise<SignedBeaconBlock[]>;
  function backfill(db: BeaconDb, serve: Record<string, Serve>) {
    const reports: {peer: string; action: PeerAction}[] = [];
    const requests: {peer: string; start: number; count: number}[] = [];
    const sync = new Backfill({
      config: source.config,
      db,
      verifier: verifyOnThisThread,
      validators,
      currentSlot: () => ANCHOR + 8,
      toGenesis: true,
      syncPeers: () => Object.keys(serve).map(status),
      report: (peer, action) => void reports.push({peer, action}),
      fetchBlocksByRange: (peer, start, count, signal) => {
        requests.push({peer, start, count});
        return serve[peer](start, count, signal);
      },
      fetchSidecars: async () => [],
      busy: () => false,
    });
    return {sync, reports, requests};
  }
  const honest = async (start: number, count: number) => bySlot.slice(start, start + count);

  it("goes back to genesis, scoring down a peer whose batch has a bad signature and taking it from another", async () => {
    const db = await anchoredDb();
    const liar = async (start: number, count: number) => honest(start, count).then((blocks) => blocks.map((b) => (b.message.slot === 9 ? wronglySigned(9) : b)));
    const {sync, reports, requests} = backfill(db, {liar, honest});
    await sync.load();
    expect(sync.earliestAvailableSlot()).toBe(ANCHOR);
    sync.start();
    await within(sync.finished(), 30_000, "backfill to finish");
    expect(sync.earliestAvailableSlot()).toBe(0);
    expect(reports).toEqual([{peer: "liar", action: "high"}]);
    expect(requests.slice(0, 2)).toEqual([
      {peer: "liar", start: 8, count: 4},
      {peer: "honest", start: 8, count: 4},
    ]);
    // every block is stored as the source has it, by root and in the canonical slot index
    for (const block of bySlot) {
      const root = await db.canonicalBlocks.get(block.message.slot);
      expect(root && toRootHex(root)).toBe(toRootHex(rootOf(block)));
      expect(Buffer.from((await db.blocks.getBytes(rootOf(block)))!).equals(db.blocks.serialize(block))).toBe(true);
    }
    expect((await db.chainMeta.backfilledTo.get())?.slot).toBe(0);
    await db.close();
  });

  it("scores down a peer whose batch does not link (a block of another branch) and takes it from another", async () => {
    const db = await anchoredDb();
    const forker = async (start: number, count: number) => honest(start, count).then((blocks) => blocks.map((b) => (b.message.slot === 10 ? otherBranchBlock(10) : b)));
    const {sync, reports, requests} = backfill(db, {forker, honest});
    await sync.load();
    sync.start();
    await within(sync.finished(), 30_000, "backfill to finish");
    expect(reports).toEqual([{peer: "forker", action: "mid"}]);
    expect(requests[0]).toEqual({peer: "forker", start: 8, count: 4});
    expect(toRootHex((await db.canonicalBlocks.get(10))!)).toBe(toRootHex(rootOf(bySlot[10])));
    expect(sync.earliestAvailableSlot()).toBe(0);
    await db.close();
  });

  it("resumes after a restart from the lowest block it stored, not from the anchor", async () => {
    const db = await anchoredDb();
    // the peer answers the first batch, then not until the request is given up (the node stops meanwhile)
    const hang: Serve = (_start, _count, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const first = backfill(db, {honest: (start, count, signal) => (start === 8 ? honest(start, count) : hang(start, count, signal))});
    await first.sync.load();
    first.sync.start();
    await within(
      (async () => {
        while (first.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
      })(),
      10_000,
      "the second batch"
    );
    expect(first.sync.earliestAvailableSlot()).toBe(8);
    // stopped, as at shutdown, while the second batch is in flight: the request is given up
    await within(first.sync.stop(), 5_000, "backfill to stop");

    const second = backfill(db, {honest});
    await second.sync.load();
    expect(second.sync.earliestAvailableSlot()).toBe(8);
    second.sync.start();
    await within(second.sync.finished(), 30_000, "backfill to finish");
    expect(second.requests).toEqual([{peer: "honest", start: 0, count: 8}]);
    expect(second.sync.earliestAvailableSlot()).toBe(0);
    await db.close();
  });
});
