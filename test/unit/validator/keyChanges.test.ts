import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {interopKeystore, interopPubkey} from "../../keystoreFiles.ts";
import {FakeBeaconApi} from "./fakeBeaconApi.ts";
import {attesterOf, startManualDuties, tempDir, turns, until} from "./manualDuties.ts";

/** A call whose answer the test holds back: released when the test says, in the order it chooses. */
interface Held {
  what: string;
  indices: number[];
  release(): void;
}

/** The stand-in node, answering for the indices asked when a call came in; while `holding`, those answers wait for the test. */
class HoldingApi extends FakeBeaconApi {
  readonly holding = new Set<"attester" | "sync" | "data">();
  readonly held: Held[] = [];

  private hold(what: "attester" | "sync" | "data", indices: number[]): Promise<void> | undefined {
    if (!this.holding.has(what)) return undefined;
    return new Promise((release) => this.held.push({what, indices: [...indices], release}));
  }
  override async getAttesterDuties(epoch: number, indices: number[]) {
    const answer = await super.getAttesterDuties(epoch, [...indices]);
    await this.hold("attester", indices);
    return answer;
  }
  override async getSyncCommitteeDuties(epoch: number, indices: number[]) {
    const answer = await super.getSyncCommitteeDuties(epoch, [...indices]);
    await this.hold("sync", indices);
    return answer;
  }
  override async produceAttestationData(committeeIndex: number, slot: number) {
    const data = await super.produceAttestationData(committeeIndex, slot);
    await this.hold("data", []);
    return data;
  }
}

const PASSWORD = "key changes";

/**
 * Keys imported and deleted while the duty loop runs (the keymanager API's ValidatorKeys), with
 * the clock driven slot by slot and duty answers held back, so that a fetch begun for the old
 * keys finishes after the change: each key change counts from the next duty, whatever the order.
 */
describe("duty loop: keys imported and deleted while duty fetches are in flight", () => {
  jest.setTimeout(30_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Interop keys 0 and 1 at start (electra from genesis), the clock at `slot`. */
  async function setup(slot: number) {
    const {dir, remove} = await tempDir("key-changes-");
    cleanups.push(remove);
    const api = new HoldingApi("electra", 0);
    const {clock, loop, keys, validators, lines, runSlot, stop} = await startManualDuties({api, dir, slot, indices: [0, 1]});
    cleanups.push(stop);
    const importKey = async (i: number): Promise<void> => {
      const statuses = await keys.importKeystores([JSON.stringify(await interopKeystore(i, PASSWORD))], [PASSWORD], undefined);
      expect(statuses).toEqual([{status: "imported"}]);
    };
    const errors = () => lines.filter((l) => l.level === "error" || l.level === "warn");
    return {api, clock, loop, keys, validators, runSlot, importKey, errors};
  }

  it("a key imported while the attester duties of the old keys are fetched attests at each of its next duty slots", async () => {
    // epoch 2, slot 2; validator i attests at slot i of each epoch
    const {api, clock, loop, validators, runSlot, importKey, errors} = await setup(2 * SLOTS_PER_EPOCH + 2);
    await importKey(4);
    api.holding.add("attester");
    // slot 19: the slot's poll asks for epoch 3's duties of keys 0 and 1 while key 4 is being resolved
    clock.startSlot();
    await until("key 4 resolved and duties asked for", () => validators.indexOf(interopPubkey(4)) !== undefined && api.held.length >= 2);
    await turns(20);
    expect(api.held.filter((h) => !h.indices.includes(4))).toHaveLength(2);
    // the answers for the new keys come first, those for the old keys after them
    api.holding.clear();
    const held = api.held.splice(0);
    for (const h of [...held.filter((h) => h.indices.includes(4)), ...held.filter((h) => !h.indices.includes(4))]) {
      h.release();
      await turns(20);
    }
    clock.runDue();
    await loop.settle(5000);
    // through epoch 3's slot 4 and epoch 4's
    while (clock.slot < 4 * SLOTS_PER_EPOCH + 4) await runSlot();

    const slotsOf4 = api.attestations.filter((a) => attesterOf(a) === 4).map((a) => a.data.slot);
    expect(slotsOf4).toEqual([2, 3, 4].map((epoch) => epoch * SLOTS_PER_EPOCH + 4));
    expect(api.subscriptions.filter((s) => s.validatorIndex === 4).map((s) => s.slot)).toEqual(expect.arrayContaining([28, 36]));
    // the keys there before attest as ever
    expect(api.attestations.filter((a) => attesterOf(a) === 0).map((a) => a.data.slot)).toEqual([24, 32]);
    expect(errors()).toEqual([]);
  });

  it("a key imported while the epoch's sync committee duties are fetched signs sync committee messages from the next slot", async () => {
    // the last slot of epoch 1: the next slot starts epoch 2, whose preparation fetches the sync committee duties
    const {api, clock, loop, validators, runSlot, importKey, errors} = await setup(2 * SLOTS_PER_EPOCH - 1);
    api.holding.add("sync");
    clock.startSlot();
    await until("sync committee duties of keys 0 and 1 asked for", () => api.held.length === 2);
    clock.runDue();
    await until("slot 16's sync committee messages", () => api.syncMessages.some((m) => m.slot === 16));
    await importKey(4);
    // slot 17: key 4 resolved, its duties asked for while those of keys 0 and 1 are still on their way
    clock.startSlot();
    await until("sync committee duties asked for again", () => validators.indexOf(interopPubkey(4)) !== undefined && api.held.length === 4);
    expect(api.held.map((h) => h.indices.includes(4))).toEqual([false, false, true, true]);
    api.holding.clear();
    for (const h of api.held.splice(0).reverse()) {
      h.release();
      await turns(20);
    }
    clock.runDue();
    await loop.settle(5000);
    await runSlot();
    await runSlot();

    const slotsOf4 = [...new Set(api.syncMessages.filter((m) => m.validatorIndex === 4).map((m) => m.slot))];
    expect(slotsOf4).toEqual([17, 18, 19]);
    expect(errors()).toEqual([]);
  });

  it("a deleted key signs nothing more: not the attestation whose data it waited for, not the duties fetched before or during the deletion", async () => {
    const {api, clock, loop, keys, runSlot, importKey, errors} = await setup(2 * SLOTS_PER_EPOCH);
    await importKey(2);
    await runSlot(); // slot 17: epoch 2's and 3's duties fetched with key 2's
    expect(api.subscriptions.some((s) => s.validatorIndex === 2 && s.slot === 3 * SLOTS_PER_EPOCH + 2)).toBe(true);
    api.holding.add("attester");
    api.holding.add("data");
    // slot 18, key 2's: its block at the slot start, epoch 3's duties asked for and held
    clock.startSlot();
    await until("slot 18's block and epoch 3's duties asked for", () => api.blocks.some((b) => b.message.slot === 18) && api.held.some((h) => h.what === "attester"));
    // its deadlines: the attestation data held, the sync committee message waiting for its turn to be signed, when the key goes
    clock.runDue();
    const deletion = keys.deleteKeys([interopPubkey(2)]);
    await until("slot 18's attestation data asked for", () => api.held.some((h) => h.what === "data"));
    const {statuses, slashingProtection} = await deletion;
    expect(statuses).toEqual([{status: "deleted"}]);
    api.holding.clear();
    for (const h of api.held.splice(0)) h.release();
    await loop.settle(5000);
    while (clock.slot < 4 * SLOTS_PER_EPOCH + 2) await runSlot();

    expect(api.blocks.filter((b) => b.message.proposerIndex === 2).map((b) => b.message.slot)).toEqual([18]);
    expect(api.attestations.filter((a) => attesterOf(a) === 2)).toEqual([]);
    expect(api.aggregates.filter((a) => a.message.aggregatorIndex === 2)).toEqual([]);
    // slot 18's sync committee messages: the others' went out
    expect(api.syncMessages.filter((m) => m.slot === 18).map((m) => m.validatorIndex).sort()).toEqual([0, 1]);
    expect(api.syncMessages.filter((m) => m.validatorIndex === 2 && m.slot > 18)).toEqual([]);
    expect(api.contributions.filter((c) => c.message.aggregatorIndex === 2 && c.message.contribution.slot > 18)).toEqual([]);
    // its history, handed back at the deletion, has its block and no attestation
    const history = JSON.parse(slashingProtection).data[0];
    expect([history.signed_blocks.map((b: {slot: string}) => b.slot), history.signed_attestations]).toEqual([["18"], []]);
    // the others carry on
    expect(api.attestations.filter((a) => attesterOf(a) <= 1 && a.data.slot > 18).map((a) => a.data.slot)).toEqual([24, 25, 32, 33]);
    expect(errors()).toEqual([]);
  });
});
