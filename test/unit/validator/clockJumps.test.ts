import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {FakeBeaconApi, VALIDATORS} from "./fakeBeaconApi.ts";
import {startManualDuties, tempDir} from "./manualDuties.ts";

/**
 * A node that answers something new at every call: each block carries a new graffiti and each
 * attestation data a new head root, so signing a slot twice would sign two different messages
 * (a slashable double proposal or double vote), never the same one again.
 */
class ChangingBeaconApi extends FakeBeaconApi {
  private calls = 0;
  override async produceBlock(slot: number, randaoReveal: Uint8Array) {
    const produced = await super.produceBlock(slot, randaoReveal);
    produced.block.body.graffiti = new Uint8Array(32).fill(++this.calls % 256);
    return produced;
  }
  override async produceAttestationData(committeeIndex: number, slot: number) {
    // a new object: AttestationData caches its hash tree root on the value
    const {source, target} = await super.produceAttestationData(committeeIndex, slot);
    return {slot, index: committeeIndex, beaconBlockRoot: new Uint8Array(32).fill(++this.calls % 256), source, target};
  }
}

/** The slots signed more than once. */
function signedTwice(slots: number[]): number[] {
  return slots.filter((slot, i) => slots.indexOf(slot) !== i);
}

/** Every slot proposes and attests with one of the 8 interop keys (fakeBeaconApi.ts): all of them run here. */
const ALL_KEYS = Array.from({length: VALIDATORS}, (_, i) => i);
/** epoch 2's first slot: its duties are fetched at the start */
const START = 2 * SLOTS_PER_EPOCH;

/**
 * The validator client's duty loop on a slot clock the test drives (manualDuties.ts): set back
 * while it runs and across a restart on the same slashing protection, and with a node that
 * knows its clock is off.
 */
describe("validator clock faults", () => {
  jest.setTimeout(30_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a clock driven backwards, while running and across a restart, never makes a validator sign twice for a slot", async () => {
    const {dir, remove} = await tempDir("vc-clock-");
    cleanups.push(remove);
    const api = new ChangingBeaconApi("phase0", 0);
    const first = await startManualDuties({api, dir, slot: START, indices: ALL_KEYS});
    cleanups.push(first.stop);
    for (let i = 0; i < 3; i++) await first.runSlot();
    const slotBeforeJump = first.clock.slot;
    const blocksBeforeJump = api.blocks.map((b) => b.message.slot);
    expect(blocksBeforeJump).toEqual([START + 1, START + 2, START + 3]);
    expect(api.attestations.map((a) => a.data.slot)).toEqual([START + 1, START + 2, START + 3]);

    // set back by two slots (an NTP correction): the clock runs slots it ran already, then new ones
    first.clock.slot -= 2;
    for (let i = 0; i < 3; i++) await first.runSlot();
    await first.stop();
    const refusedRunning = first.lines.filter((l) => /already signed another block|already voted differently/.test(String((l.fields as {error?: string}).error)));
    expect(refusedRunning.length).toBeGreaterThanOrEqual(2);

    // a restart on the same slashing protection with the clock 4 slots behind: the slots it runs were signed already
    const second = await startManualDuties({api, dir, slot: first.clock.slot - 4, indices: ALL_KEYS});
    cleanups.push(second.stop);
    const restartedFrom = second.clock.slot + 1;
    for (let i = 0; i < 4; i++) await second.runSlot();
    await second.stop();

    const blockSlots = api.blocks.map((b) => b.message.slot);
    const attestationSlots = api.attestations.map((a) => a.data.slot);
    expect(signedTwice(blockSlots)).toEqual([]);
    expect(signedTwice(attestationSlots)).toEqual([]);
    // the client went on after the jump, with the slots after the last one it had run
    expect(Math.max(...blockSlots)).toBeGreaterThan(slotBeforeJump);
    expect(Math.max(...attestationSlots)).toBeGreaterThan(slotBeforeJump);
    // the restarted client ran slots signed already: slashing protection refused them
    expect(restartedFrom).toBeLessThanOrEqual(Math.max(...blocksBeforeJump));
    const refusedRestarted = second.lines.filter((l) => /already signed another block|already voted differently/.test(String((l.fields as {error?: string}).error)));
    expect(refusedRestarted.length).toBeGreaterThanOrEqual(1);
    // every slot it ran on was signed once: before the jump, after it, or by the restarted client
    expect([...new Set(blockSlots)].sort((a, b) => a - b)).toEqual(Array.from({length: blockSlots.length}, (_, i) => START + 1 + i));
  });

  it("signs nothing while the node knows its clock is off, says so once, and resumes when it is right", async () => {
    const {dir, remove} = await tempDir("vc-clock-");
    cleanups.push(remove);
    const api = new FakeBeaconApi("phase0", 0);
    let off = true;
    const clockCheck = () => (off ? {offsetMs: 3000, off: true} : {offsetMs: 20, off: false});
    const duties = await startManualDuties({api, dir, slot: START, indices: ALL_KEYS, clockCheck});
    cleanups.push(duties.stop);
    for (let i = 0; i < 3; i++) await duties.runSlot();
    const offSlot = duties.clock.slot;
    off = false;
    for (let i = 0; i < 3; i++) await duties.runSlot();

    // a slot whose duties came while the clock was off was skipped whole; the slots after it signed
    expect(api.blocks.filter((b) => b.message.slot <= offSlot)).toEqual([]);
    expect(api.attestations.filter((a) => a.data.slot <= offSlot)).toEqual([]);
    expect(api.blocks.map((b) => b.message.slot)).toEqual([offSlot + 1, offSlot + 2, offSlot + 3]);
    expect(api.attestations.map((a) => a.data.slot)).toEqual([offSlot + 1, offSlot + 2, offSlot + 3]);
    expect(duties.lines.filter((l) => l.msg.startsWith("Validator duties skipped"))).toHaveLength(1);
    expect(duties.lines.filter((l) => l.msg.startsWith("Validator duties resume"))).toHaveLength(1);
  });
});
