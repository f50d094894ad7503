import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {PeerAction} from "../../../src/network/peers/peerScore.ts";
import {UnknownBlockSync} from "../../../src/sync/unknownBlockSync.ts";
import type {ChainEnv} from "../network/gossip/validation/chainEnv.ts";
import {createSourceChain, createTargetChain, within} from "./sourceChain.ts";

const SLOTS = 22;
let source: ChainEnv;
let blocks: SignedBeaconBlock[]; // blocks[i] is at slot i + 1
let target: ChainEnv;

const rootOf = (b: SignedBeaconBlock) => source.config.getForkTypes(b.message.slot).BeaconBlock.hashTreeRoot(b.message);
const bySlot = (slot: number) => blocks[slot - 1];

beforeAll(async () => {
  ({env: source, blocks} = await createSourceChain(SLOTS));
  target = await createTargetChain(SLOTS);
}, 60_000);
afterAll(async () => {
  await target?.close();
  await source?.close();
});

type Answer = (roots: Uint8Array[]) => SignedBeaconBlock[];

/** The source chain's blocks by root, as an honest peer answers (from memory, so a request settles at once). */
const honest: Answer = (roots) => roots.map((r) => blocks.find((b) => Buffer.from(rootOf(b)).equals(r))).filter((b): b is SignedBeaconBlock => !!b);

/** An UnknownBlockSync on the target whose peer answers as `answer` says, recording requests, imports and reports. */
function syncWith(answer: Answer) {
  const requests: string[][] = [];
  const imported: number[] = [];
  const reports: {peer: string; action: PeerAction; reason: string}[] = [];
  const handedToRangeSync: string[] = [];
  /** the sidecar fetches asked for, each as "peer: slots", and the imports done by then */
  const sidecarFetches: string[] = [];
  let onReport: () => void = () => undefined;
  const sync = new UnknownBlockSync({
    chain: {
      config: target.chain.config,
      importBlock: async (block) => {
        const result = await target.chain.importBlock(block);
        imported.push(block.message.slot);
        return result;
      },
    },
    hasBlock: (rootHex) => target.chain.forkChoice.hasBlock(rootHex),
    fetchBlocksByRoot: async (_peer, roots) => {
      requests.push(roots.map(toRootHex));
      return answer(roots);
    },
    report: (peer, action, reason) => {
      reports.push({peer, action, reason});
      onReport();
    },
    tooFarBehind: (peer) => void handedToRangeSync.push(peer),
    fetchSidecars: async (peer, ancestors) => void sidecarFetches.push(`${peer}: ${ancestors.map((b) => b.message.slot).join(",")} (${imported.length} imported)`),
  });
  const reported = new Promise<void>((resolve) => (onReport = resolve));
  return {sync, requests, imported, reports, reported, handedToRangeSync, sidecarFetches};
}

/** Resolves once the target's head is `block`. */
function headBecomes(block: SignedBeaconBlock): Promise<void> {
  const root = toRootHex(rootOf(block));
  if (toRootHex(target.chain.getHead().blockRoot) === root) return Promise.resolve();
  return new Promise((resolve) => {
    const onHead = ({block: head}: {block: Uint8Array}) => {
      if (toRootHex(head) !== root) return;
      target.chain.emitter.off("head", onHead);
      resolve();
    };
    target.chain.emitter.on("head", onHead);
  });
}

/** Lets every pending promise callback and I/O callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

// The cases share one target chain and run in order: 1..3 imported first, then blocks on top of slot 3.
describe("UnknownBlockSync over a real chain", () => {
  it("fetches a block's two unknown ancestors by root from its peer, their sidecars from peers at once, and imports all three in order", async () => {
    const {sync, requests, imported, reports, sidecarFetches} = syncWith(honest);
    const head = headBecomes(bySlot(3));
    sync.onUnknownParent(bySlot(3), "peer");
    await within(head, 10_000, "block 3 as head");
    expect(requests).toEqual([[toRootHex(rootOf(bySlot(2)))], [toRootHex(rootOf(bySlot(1)))]]);
    // the gossip block's own sidecars come by gossip: only the ancestors', before any import
    expect(sidecarFetches).toEqual(["peer: 1,2 (0 imported)"]);
    expect(imported).toEqual([1, 2, 3]);
    expect(reports).toEqual([]);
  });

  it("reports a peer that answers with another block ('high') and imports nothing", async () => {
    const {sync, imported, reports, reported} = syncWith(() => [bySlot(1)]);
    sync.onUnknownParent(bySlot(5), "liar");
    await within(reported, 10_000, "a report");
    await settle();
    expect(reports).toEqual([{peer: "liar", action: "high", reason: expect.stringMatching(/another block/)}]);
    expect(imported).toEqual([]);
    expect(target.chain.getHead().slot).toBe(3);
  });

  it("reports a peer that does not serve the parent ('low') and imports nothing", async () => {
    const {sync, imported, reports, reported} = syncWith(() => []);
    sync.onUnknownParent(bySlot(5), "silent");
    await within(reported, 10_000, "a report");
    await settle();
    expect(reports).toEqual([{peer: "silent", action: "low", reason: expect.stringMatching(/did not serve the parent/)}]);
    expect(imported).toEqual([]);
  });

  it("leaves a block with more than 16 unknown ancestors to range sync (and tells it): 16 fetched, nothing imported, nobody reported", async () => {
    // the target has 1..3: the block at 21 has 17 unknown ancestors (4..20)
    const {sync, requests, imported, reports, handedToRangeSync} = syncWith(honest);
    sync.onUnknownParent(bySlot(21), "peer");
    for (let i = 0; i < 20 && requests.length < 16; i++) await settle();
    await settle();
    expect(requests).toHaveLength(16);
    expect(requests[15]).toEqual([toRootHex(rootOf(bySlot(5)))]);
    expect(imported).toEqual([]);
    expect(reports).toEqual([]);
    expect(target.chain.getHead().slot).toBe(3);
    expect(handedToRangeSync).toEqual(["peer"]);
  });

  it("fetches and imports exactly 16 unknown ancestors", async () => {
    const {sync, requests, imported, reports, handedToRangeSync} = syncWith(honest);
    const head = headBecomes(bySlot(20));
    sync.onUnknownParent(bySlot(20), "peer");
    await within(head, 20_000, "block 20 as head");
    expect(requests).toHaveLength(16);
    expect(imported).toEqual(Array.from({length: 17}, (_, i) => 4 + i));
    expect(reports).toEqual([]);
    expect(handedToRangeSync).toEqual([]);
  });

  it("ignores a block already being resolved", async () => {
    const {sync, requests, imported} = syncWith(honest);
    const head = headBecomes(bySlot(22));
    sync.onUnknownParent(bySlot(22), "peer");
    sync.onUnknownParent(bySlot(22), "other");
    await within(head, 10_000, "block 22 as head");
    expect(requests).toEqual([[toRootHex(rootOf(bySlot(21)))]]);
    expect(imported).toEqual([21, 22]);
  });
});
