import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {ExecutionPayload, SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {PendingChildren} from "../../../../../src/chain/pendingChildren.ts";
import {MockExecutionEngine} from "../../../../../src/execution/mockEngine.ts";
import type {PayloadStatus} from "../../../../../src/execution/engine.ts";
import type {GossipValidationResult} from "../../../../../src/network/gossip/validation/index.ts";
import {type ChainEnv, copyBlock, createChainEnv} from "./chainEnv.ts";

/** The mock engine, whose newPayload answers only once the test opens the gate: an import held mid-way. */
class GatedEngine extends MockExecutionEngine {
  private gate: Promise<void> | null = null;
  private openGate: () => void = () => undefined;

  close(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  open(): void {
    this.gate = null;
    this.openGate();
  }

  override async notifyNewPayload(fork: string, payload: ExecutionPayload): Promise<PayloadStatus> {
    if (this.gate) await this.gate;
    return super.notifyNewPayload(fork, payload);
  }
}

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/**
 * beacon_block: a block whose parent passed gossip validation and is still importing waits for
 * that import (instead of an IGNORE and a by-root request for the parent), then is validated
 * and imported; when the parent turns out invalid, the child is REJECTed with it.
 */
describe("gossip blocks whose parent is being imported", () => {
  const engine = new GatedEngine();
  let node: ChainEnv;
  let source: ChainEnv;
  const blocks: SignedBeaconBlock[] = [];

  beforeAll(async () => {
    [node, source] = await Promise.all([createChainEnv("fulu", {}, {engine}), createChainEnv("fulu")]);
    for (const slot of [1, 2, 3, 4]) {
      source.setTime(slot, 100);
      const block = await source.produceBlock(slot);
      await source.chain.importBlock(block);
      blocks.push(block);
    }
    node.setTime(4, 100);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([node?.close(), source?.close()]);
  });

  const validate = (block: SignedBeaconBlock): Promise<GossipValidationResult> => node.validators.beacon_block(node.topic("beacon_block"), block, "peer");
  const rootOf = (block: SignedBeaconBlock) => toRootHex(node.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message));

  it("a child waits for its parent's import, then is accepted and imported; a child of an invalid parent is rejected", async () => {
    const [parent, child, slot3, slot4] = blocks;
    // a block on genesis that passes gossip but whose import fails, and a child of it
    const badMessage = copyBlock(node.config, slot3.message);
    badMessage.parentRoot = node.chain.getHead().blockRoot;
    badMessage.stateRoot = new Uint8Array(32).fill(0xab);
    const badParent = node.signBlock(badMessage);
    const orphanMessage = copyBlock(node.config, slot4.message);
    orphanMessage.parentRoot = node.config.getForkTypes(3).BeaconBlock.hashTreeRoot(badMessage);
    const badChild = node.signBlock(orphanMessage);

    engine.close();
    expect(await validate(parent)).toMatchObject({result: "ACCEPT"});
    const parentImport = node.lastGossipImport()!;
    const childOutcome = validate(child);
    expect(await settled(childOutcome)).toBe(false);
    expect(node.chain.pendingChildren.size).toBe(1);

    // the bad parent's import queues behind the first one's
    expect(await validate(badParent)).toMatchObject({result: "ACCEPT"});
    const badParentImport = node.lastGossipImport()!;
    const badChildOutcome = validate(badChild);
    expect(await settled(badChildOutcome)).toBe(false);
    expect(node.chain.pendingChildren.size).toBe(2);

    engine.open();
    expect(await parentImport).toMatchObject({blockRoot: expect.anything()});
    const outcome = await childOutcome;
    expect(outcome).toMatchObject({result: "ACCEPT"});
    expect(outcome.parentUnknown).toBeUndefined();
    expect(await node.lastGossipImport()).toMatchObject({isHead: true, slot: 2});
    expect(toRootHex(node.chain.getHead().blockRoot)).toBe(rootOf(child));

    // its payload is not built on genesis' either: the state transition fails before the root check
    expect(await badParentImport).toMatchObject({code: "STATE_TRANSITION_FAILED"});
    expect(await badChildOutcome).toMatchObject({result: "REJECT", reason: expect.stringMatching(/parent .* is invalid: STATE_TRANSITION_FAILED/)});
    expect(node.chain.forkChoice.hasBlock(rootOf(badChild))).toBe(false);
    expect(node.chain.pendingChildren.size).toBe(0);
  });
});

describe("PendingChildren bounds", () => {
  const parents = (n: number) => Array.from({length: n}, (_, i) => `0x${i.toString(16).padStart(64, "0")}`);

  it("lets the oldest waiter go past its count, and waiters older than two slots at a slot", async () => {
    let slot = 10;
    const pending = new PendingChildren(() => slot, 2);
    const [a, b, c] = parents(3);
    for (const root of [a, b, c]) pending.begin(root);
    expect(pending.waitForParent(parents(4)[3])).toBeNull();
    const first = pending.waitForParent(a)!;
    const second = pending.waitForParent(b)!;
    const third = pending.waitForParent(c)!;
    expect(await first).toMatchObject({kind: "dropped", reason: expect.stringMatching(/more than 2 blocks wait/)});
    expect(pending.size).toBe(2);
    pending.prune(12);
    expect(await settled(second)).toBe(false);
    pending.prune(13);
    expect(await second).toMatchObject({kind: "dropped", reason: expect.stringMatching(/more than 2 slots/)});
    expect(await third).toMatchObject({kind: "dropped"});
    expect(pending.size).toBe(0);
    slot = 13;
    const late = pending.waitForParent(a)!;
    pending.prune(15);
    expect(await settled(late)).toBe(false);
    expect(pending.size).toBe(1);
  });
});
