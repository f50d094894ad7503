// suite: alone (duties on a real-time slot clock)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {Writable} from "node:stream";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import {startValidatorClient} from "../../../src/validator/index.ts";
import {FakeBeaconApi, keys} from "./fakeBeaconApi.ts";

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

const SLOT_MS = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many of `slots` were signed more than once. */
function signedTwice(slots: number[]): number[] {
  return slots.filter((slot, i) => slots.indexOf(slot) !== i);
}

describe("validator clock faults", () => {
  const lines: {level: number; msg: string; error?: string; slot?: number}[] = [];
  let dataDir: string;
  const genesisTime = Math.floor(Date.now() / 1000) - 2 * SLOTS_PER_EPOCH;
  const jumping = new ChangingBeaconApi("phase0", genesisTime);
  const guarded = new FakeBeaconApi("phase0", genesisTime);
  const signedBeforeJump: number[] = [];
  let slotBeforeJump = 0;
  let offUntilMs = 0;
  let restartedFrom = 0;

  beforeAll(async () => {
    initLogging({
      directive: parseLogDirective("INFO"),
      format: "json",
      destination: new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
          done();
        },
      }),
    });
    dataDir = await mkdtemp(join(tmpdir(), "vc-clock-"));
    const indices = keys.map((_, i) => i);

    // 1. a clock driven backwards by two slots (an NTP correction) while the client runs, and a
    // second client started on the same slashing protection with a clock further behind still
    let shift = 0;
    const jumpingRun = (async () => {
      const first = await startValidatorClient({api: jumping, indices, dataDir: join(dataDir, "jumping"), now: () => Date.now() + shift});
      await sleep(2.5 * SLOT_MS);
      slotBeforeJump = Math.floor((Date.now() + shift) / SLOT_MS) - genesisTime;
      signedBeforeJump.push(...jumping.blocks.map((b) => b.message.slot));
      shift = -2 * SLOT_MS;
      await sleep(3.5 * SLOT_MS);
      await first.stop();
      // a restart with the clock 4 slots behind: the slots it runs were signed already
      const behind = -4 * SLOT_MS;
      restartedFrom = Math.floor((Date.now() + behind) / SLOT_MS) - genesisTime + 1;
      const second = await startValidatorClient({api: jumping, indices, dataDir: join(dataDir, "jumping"), now: () => Date.now() + behind});
      await sleep(2.5 * SLOT_MS);
      await second.stop();
    })();

    // 2. a node that knows its clock is off: nothing is signed until it is right again
    const guardedRun = (async () => {
      offUntilMs = Date.now() + 2.5 * SLOT_MS;
      const client = await startValidatorClient({
        api: guarded,
        indices,
        dataDir: join(dataDir, "guarded"),
        clockCheck: () => (Date.now() < offUntilMs ? {offsetMs: 3000, off: true} : {offsetMs: 20, off: false}),
      });
      await sleep(5 * SLOT_MS);
      await client.stop();
    })();
    await Promise.all([jumpingRun, guardedRun]);
  }, 30_000);

  afterAll(async () => {
    await rm(dataDir, {recursive: true, force: true});
  });

  it("a clock driven backwards never makes a validator sign twice for a slot", () => {
    const blockSlots = jumping.blocks.map((b) => b.message.slot);
    const attestationSlots = jumping.attestations.map((a) => a.data.slot);
    expect(signedBeforeJump.length).toBeGreaterThanOrEqual(1);
    expect(signedTwice(blockSlots)).toEqual([]);
    expect(signedTwice(attestationSlots)).toEqual([]);
    // the client went on after the jump, with the slots after the last one it had run
    expect(Math.max(...blockSlots)).toBeGreaterThan(slotBeforeJump);
    // the restarted client ran slots signed already: slashing protection refused them
    expect(restartedFrom).toBeLessThanOrEqual(Math.max(...blockSlots));
    const refusals = lines.filter((l) => /already signed another block|already voted differently/.test(l.error ?? ""));
    expect(refusals.length).toBeGreaterThanOrEqual(1);
  });

  it("signs nothing while the node knows its clock is off, says so once, and resumes when it is right", () => {
    const offSlot = Math.floor(offUntilMs / SLOT_MS) - genesisTime;
    // a slot's duties start at its start: those of slots starting before the clock was right again were skipped
    expect(guarded.blocks.filter((b) => b.message.slot < offSlot)).toEqual([]);
    expect(guarded.attestations.filter((a) => a.data.slot < offSlot)).toEqual([]);
    expect(guarded.blocks.filter((b) => b.message.slot > offSlot).length).toBeGreaterThanOrEqual(1);
    expect(guarded.attestations.filter((a) => a.data.slot > offSlot).length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.msg.startsWith("Validator duties skipped"))).toHaveLength(1);
    expect(lines.filter((l) => l.msg.startsWith("Validator duties resume"))).toHaveLength(1);
  });
});
