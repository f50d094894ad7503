import {describe, it, expect, beforeEach} from "@jest/globals";
import {type CachedBeaconStateAllForks, computeStartSlotAtEpoch, processSlots} from "@lodestar/state-transition";
import {type Root, type phase0, ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {createApiHandlers, createApp} from "../../../src/api/server/index.ts";
import {AnswerCache, answerCacheOf} from "../../../src/api/impl/answerCache.ts";
import {TestChain, createTestContext} from "./testContext.ts";
import type {ChainEvents} from "../../../src/chain/interface.ts";

/**
 * The answers served from the answer cache: the same bytes while the chain stands still, the new
 * answer as soon as the head, the slot or the dependent root changes, and the per-request flags
 * (execution_optimistic) read at each request.
 */

/** The test chain with a head that moves, and counts of the chain calls the cache should spare. */
class MovingHeadChain extends TestChain {
  head: {slot: number; root: Root; state: CachedBeaconStateAllForks} | null = null;
  blockReads = 0;
  attestationDataCalls = 0;

  getHead() {
    if (!this.head) return super.getHead();
    return {slot: this.head.slot, blockRoot: this.head.root, stateRoot: this.head.state.hashTreeRoot(), executionBlockHash: new Uint8Array(32)};
  }
  getHeadState(): CachedBeaconStateAllForks {
    return this.head?.state ?? super.getHeadState();
  }
  async getHeadStateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks> {
    const head = this.getHeadState();
    const slot = computeStartSlotAtEpoch(epoch);
    return slot <= head.slot ? head : processSlots(head.clone(), slot);
  }
  async getBlockByRoot(blockRoot: Root) {
    this.blockReads++;
    return super.getBlockByRoot(blockRoot);
  }
  async produceAttestationData(committeeIndex: number, slot: number): Promise<phase0.AttestationData> {
    this.attestationDataCalls++;
    const head = this.getHead();
    return {slot, index: 0, beaconBlockRoot: head.blockRoot, source: this.getHeadState().currentJustifiedCheckpoint.toValue(), target: {epoch: 0, root: head.blockRoot}};
  }

  /**
   * Makes a child of genesis at `slot` the head, as the chain does: its post-state keeps the block's
   * header with a zero state root, the block commits to that state's root; `justified` goes into the state.
   */
  moveHead(slot: number, justified?: phase0.Checkpoint, edit?: (state: CachedBeaconStateAllForks) => void): Root {
    const state = processSlots(this.state.clone(), slot);
    edit?.(state);
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.slot = slot;
    block.message.proposerIndex = slot;
    block.message.parentRoot = this.genesisRoot;
    const bodyRoot = ssz.fulu.BeaconBlockBody.hashTreeRoot(block.message.body);
    state.latestBlockHeader = ssz.phase0.BeaconBlockHeader.toViewDU({slot, proposerIndex: slot, parentRoot: this.genesisRoot, stateRoot: new Uint8Array(32), bodyRoot});
    if (justified) state.currentJustifiedCheckpoint = ssz.phase0.Checkpoint.toViewDU(justified);
    state.commit();
    block.message.stateRoot = state.hashTreeRoot();
    const root = this.addBlock(block);
    this.head = {slot, root, state};
    this.emitter.emit("head", {slot, block: root, state: block.message.stateRoot, epochTransition: false, previousDutyDependentRoot: root, currentDutyDependentRoot: root});
    return root;
  }
}

function setup() {
  const t = createTestContext();
  const chain = new MovingHeadChain(t.state);
  chain.slot = 1;
  const app = createApp({}, {...t.ctx, chain});
  return {chain, app, state: t.state};
}

describe("answer cache: headers/head", () => {
  it("serves the same bytes without reading the block again, and the new head's header after a head event", async () => {
    const {chain, app} = setup();
    const first = await request(app).get("/eth/v1/beacon/headers/head").expect(200);
    const second = await request(app).get("/eth/v1/beacon/headers/head").expect(200);
    expect(second.text).toBe(first.text);
    expect(chain.blockReads).toBe(1);
    expect(first.body.data.root).toBe(toHex(chain.genesisRoot));

    const root = chain.moveHead(1);
    const moved = await request(app).get("/eth/v1/beacon/headers/head").expect(200);
    expect(moved.body.data.root).toBe(toHex(root));
    expect(moved.body.data.header.message.slot).toBe("1");
    expect(moved.body.data.header.message.body_root).toBe(toHex(ssz.fulu.BeaconBlockBody.hashTreeRoot(ssz.fulu.BeaconBlockBody.defaultValue())));
    // the header of the head by its root is the same answer
    const byRoot = await request(app).get(`/eth/v1/beacon/headers/${toHex(root)}`).expect(200);
    expect(moved.text).toBe(byRoot.text);
  });

  it("reads execution_optimistic at each request: it changes without a new head", async () => {
    const {chain, app} = setup();
    expect((await request(app).get("/eth/v1/beacon/headers/head").expect(200)).body.execution_optimistic).toBe(false);
    chain.optimisticRoots.add(toHex(chain.genesisRoot));
    expect((await request(app).get("/eth/v1/beacon/headers/head").expect(200)).body.execution_optimistic).toBe(true);
  });
});

describe("answer cache: finality checkpoints", () => {
  it("the head's checkpoints are the new head state's as soon as the head moves", async () => {
    const {chain, app} = setup();
    const before = await request(app).get("/eth/v1/beacon/states/head/finality_checkpoints").expect(200);
    expect((await request(app).get("/eth/v1/beacon/states/head/finality_checkpoints").expect(200)).text).toBe(before.text);
    expect(before.body.data.current_justified).toEqual({epoch: "0", root: toHex(new Uint8Array(32))});

    const justified = {epoch: 1, root: new Uint8Array(32).fill(9)};
    chain.moveHead(2, justified);
    const after = await request(app).get("/eth/v1/beacon/states/head/finality_checkpoints").expect(200);
    expect(after.body.data.current_justified).toEqual({epoch: "1", root: toHex(justified.root)});
  });
});

describe("validators of the head (read from the state each time, not kept)", () => {
  it("the same bytes while the head stands, the new head state's balances once it moves", async () => {
    const {chain, app} = setup();
    const url = "/eth/v1/beacon/states/head/validators?id=1,2";
    const kept = answerCacheOf(chain).size;
    const first = await request(app).get(url).expect(200);
    expect((await request(app).get(url).expect(200)).text).toBe(first.text);
    await request(app).get("/eth/v1/beacon/states/head/validators/2").expect(200);
    // a validator lookup is not an answer every client shares: nothing is kept for it
    expect(answerCacheOf(chain).size).toBe(kept);
    // the same state asked by slot, not kept: the same data
    expect((await request(app).get("/eth/v1/beacon/states/0/validators?id=1,2").expect(200)).body.data).toEqual(first.body.data);
    expect((await request(app).get("/eth/v1/beacon/states/head/validators/2").expect(200)).body.data).toEqual(first.body.data[1]);

    chain.moveHead(1, undefined, (state) => state.balances.set(2, 31_000_000_123));
    const moved = await request(app).get(url).expect(200);
    expect(moved.body.data.map((v: {balance: string}) => v.balance)).toEqual([first.body.data[0].balance, "31000000123"]);
    expect((await request(app).get("/eth/v1/beacon/states/head/validators/2").expect(200)).body.data.balance).toBe("31000000123");
    await request(app).get("/eth/v1/beacon/states/head/validators/100000").expect(404);
    await request(app).get("/eth/v1/beacon/states/head/validators/100000").expect(404);
  });
});

describe("answer cache: attestation data", () => {
  it("computes once per head and slot; another slot or a new head asks the chain again", async () => {
    const {chain, app} = setup();
    const url = (slot: number, index = 0) => `/eth/v1/validator/attestation_data?slot=${slot}&committee_index=${index}`;
    const first = await request(app).get(url(1)).expect(200);
    // from electra on every committee index has the same answer (index 0)
    const otherCommittee = await request(app).get(url(1, 3)).expect(200);
    expect(otherCommittee.text).toBe(first.text);
    expect(chain.attestationDataCalls).toBe(1);

    expect((await request(app).get(url(2)).expect(200)).body.data.slot).toBe("2");
    expect(chain.attestationDataCalls).toBe(2);

    const root = chain.moveHead(1);
    const afterHead = await request(app).get(url(1)).expect(200);
    expect(afterHead.body.data.beacon_block_root).toBe(toHex(root));
    expect(chain.attestationDataCalls).toBe(3);
  });
});

describe("answer cache: duties", () => {
  it("proposer duties: the same bytes; a head whose dependent root differs gives its own duties", async () => {
    const {chain, app} = setup();
    const first = await request(app).get("/eth/v1/validator/duties/proposer/1").expect(200);
    expect((await request(app).get("/eth/v1/validator/duties/proposer/1").expect(200)).text).toBe(first.text);
    expect(first.body.dependent_root).toBe(toHex(chain.genesisRoot));

    const root = chain.moveHead(3);
    const moved = await request(app).get("/eth/v1/validator/duties/proposer/1").expect(200);
    // epoch 1's proposers depend on the block at slot 7 of the head chain: the new head
    expect(moved.body.dependent_root).toBe(toHex(root));
    const advanced = processSlots(chain.getHeadState().clone(), computeStartSlotAtEpoch(1));
    const proposers = advanced.epochCtx.getBeaconProposers();
    expect(moved.body.data).toEqual(proposers.map((index, i) => ({pubkey: toHex(advanced.validators.getReadonly(index).pubkey), validator_index: String(index), slot: String(8 + i)})));
  });

  it("attester duties: the validators of each request, in its order, whatever was asked before", async () => {
    const {app, state} = setup();
    const some = await request(app).post("/eth/v1/validator/duties/attester/0").send(["5", "3"]).expect(200);
    expect(some.body.data.map((d: {validator_index: string}) => d.validator_index)).toEqual(["5", "3"]);
    const all = await request(app).post("/eth/v1/validator/duties/attester/0").send(Array.from({length: 64}, (_, i) => String(63 - i))).expect(200);
    expect(all.body.data.map((d: {validator_index: string}) => d.validator_index)).toEqual(Array.from({length: 64}, (_, i) => String(63 - i)));
    for (const duty of all.body.data) {
      const committee = state.epochCtx.getBeaconCommittee(Number(duty.slot), Number(duty.committee_index));
      expect(committee[Number(duty.validator_committee_index)]).toBe(Number(duty.validator_index));
    }
    // validator 5 answered from the cache is the same duty as computed the first time
    expect(all.body.data.find((d: {validator_index: string}) => d.validator_index === "5")).toEqual(some.body.data[0]);
    // an index the state does not have is left out, as before
    expect((await request(app).post("/eth/v1/validator/duties/attester/0").send(["3", "64"]).expect(200)).body.data).toHaveLength(1);
  });

  it("attester duties: a body sent again is answered with the same bytes, its flags read at each request", async () => {
    const {chain, app} = setup();
    const body = JSON.stringify(Array.from({length: 64}, (_, i) => String(i)));
    const ask = () => request(app).post("/eth/v1/validator/duties/attester/0").set("Content-Type", "application/json").send(body).expect(200);
    const first = await ask();
    expect(first.body.data).toHaveLength(64);
    expect((await ask()).text).toBe(first.text);
    // the same list written otherwise is parsed apart, and gets the same duties
    const spaced = await request(app).post("/eth/v1/validator/duties/attester/0").set("Content-Type", "application/json").send(body.replaceAll(",", ", ")).expect(200);
    expect(spaced.text).toBe(first.text);
    chain.optimisticRoots.add(toHex(chain.getHead().blockRoot));
    const optimistic = await ask();
    expect(optimistic.body.execution_optimistic).toBe(true);
    expect(optimistic.body.data).toEqual(first.body.data);
    chain.optimisticRoots.clear();
    expect((await ask()).text).toBe(first.text);
  });
});

describe("kept whole answers", () => {
  it("attester duties asked again get the same response, headers and bytes, until a flag changes", async () => {
    const t = createTestContext();
    const chain = new MovingHeadChain(t.state);
    chain.slot = 1;
    const handle = createApiHandlers({...t.ctx, chain}).getAttesterDuties;
    const body = new TextEncoder().encode(JSON.stringify(["0", "1", "2"]));
    const ask = () => handle({params: {epoch: "0"}, query: {}, headers: {"content-type": "application/json"}, body});
    const first = await ask();
    expect(first.status).toBe(200);
    expect(await ask()).toBe(first);
    expect(Object.isFrozen(first.headers)).toBe(true);
    chain.optimisticRoots.add(toHex(chain.getHead().blockRoot));
    const optimistic = await ask();
    expect(optimistic).not.toBe(first);
    expect(optimistic.headers["Eth-Execution-Optimistic"]).toBe("true");
    expect(JSON.parse(Buffer.from(optimistic.body as Uint8Array).toString()).execution_optimistic).toBe(true);
    chain.optimisticRoots.clear();
    const again = await ask();
    expect(again.headers["Eth-Execution-Optimistic"]).toBe("false");
    expect(Buffer.from(again.body as Uint8Array).equals(Buffer.from(first.body as Uint8Array))).toBe(true);
  });
});

describe("AnswerCache", () => {
  it("drops head answers on head and reorg events, dependent-root answers on finalization only", async () => {
    const emitter = new (await import("node:events")).EventEmitter<ChainEvents>();
    const cache = new AnswerCache({emitter});
    let computed = 0;
    const compute = () => ++computed;
    await cache.ofHeadGet("a", compute);
    await cache.ofDependentRootGet("d", compute);
    expect(await cache.ofHeadGet("a", compute)).toBe(1);
    emitter.emit("chain_reorg", {slot: 1, depth: 1, oldHeadBlock: new Uint8Array(32), newHeadBlock: new Uint8Array(32), oldHeadState: new Uint8Array(32), newHeadState: new Uint8Array(32), epoch: 0});
    expect(await cache.ofHeadGet("a", compute)).toBe(3);
    expect(await cache.ofDependentRootGet("d", compute)).toBe(2);
    emitter.emit("finalized_checkpoint", {block: new Uint8Array(32), state: new Uint8Array(32), epoch: 1});
    expect(cache.size).toBe(0);
  });

  it("keeps no failed answer, and never grows past its bound", async () => {
    const emitter = new (await import("node:events")).EventEmitter<ChainEvents>();
    const cache = new AnswerCache({emitter}, 3);
    await expect(cache.ofHeadGet("x", () => Promise.reject(new Error("no block")))).rejects.toThrow("no block");
    expect(await cache.ofHeadGet("x", () => 7)).toBe(7);
    for (let i = 0; i < 10; i++) await cache.ofHeadGet(`k${i}`, () => i);
    expect(cache.size).toBeLessThanOrEqual(3);
  });
});
