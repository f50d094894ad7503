import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest} from "@jest/globals";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {BeaconChain} from "../../../src/chain/beaconChain.ts";
import {EpochAdvance} from "../../../src/chain/epochAdvance.ts";
import {initChain} from "../../../src/chain/init.ts";
import {Clock} from "../../../src/clock/clock.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {MockExecutionEngine} from "../../../src/execution/mockEngine.ts";

/** Jest's fake timers drive the chain clock (its timers and Date.now): nothing waits on the wall clock. */
const GENESIS_S = 1_700_000_000;
const SLOT_MS = 4000;
const SLOTS_PER_EPOCH = 8;

describe("EpochAdvance: the head state advanced into the next epoch ahead of its start", () => {
  let clock: Clock;
  let advance: EpochAdvance | undefined;
  beforeEach(() => {
    jest.useFakeTimers({now: GENESIS_S * 1000});
    clock = new Clock(GENESIS_S, SLOT_MS / 1000, SLOTS_PER_EPOCH);
    clock.start();
  });
  afterEach(() => {
    advance?.stop();
    clock.stop();
    jest.useRealTimers();
  });

  function start(headSlot: () => number): {epoch: number; msIntoSlot: number}[] {
    const calls: {epoch: number; msIntoSlot: number}[] = [];
    advance = new EpochAdvance({
      clock,
      headSlot,
      advanceHeadInto: async (epoch) => {
        calls.push({epoch, msIntoSlot: clock.msIntoSlot(epoch * SLOTS_PER_EPOCH - 1)});
      },
    });
    return calls;
  }

  it("runs once an epoch, three quarters into its last slot, for the next epoch", async () => {
    const calls = start(() => clock.currentSlot());
    const lastSlotOfEpoch0 = SLOTS_PER_EPOCH - 1;
    jest.advanceTimersByTime(lastSlotOfEpoch0 * SLOT_MS + 0.75 * SLOT_MS - 1);
    expect(calls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toEqual([{epoch: 1, msIntoSlot: 3000}]);
    // through the whole of epoch 1 and into epoch 2's last slot
    jest.advanceTimersByTime(SLOTS_PER_EPOCH * SLOT_MS);
    expect(calls).toEqual([
      {epoch: 1, msIntoSlot: 3000},
      {epoch: 2, msIntoSlot: 3000},
    ]);
  });

  it("is skipped while the head is more than an epoch behind the clock (syncing), and resumes once it is not", () => {
    let head = 0;
    const calls = start(() => head);
    jest.advanceTimersByTime(2 * SLOTS_PER_EPOCH * SLOT_MS);
    expect(calls).toEqual([{epoch: 1, msIntoSlot: 3000}]);
    head = 2 * SLOTS_PER_EPOCH;
    jest.advanceTimersByTime(SLOTS_PER_EPOCH * SLOT_MS);
    expect(calls.map((c) => c.epoch)).toEqual([1, 3]);
  });

  it("does nothing once stopped, not even a timer already set", () => {
    const calls = start(() => clock.currentSlot());
    jest.advanceTimersByTime((SLOTS_PER_EPOCH - 1) * SLOT_MS + 10);
    advance?.stop();
    jest.advanceTimersByTime(SLOT_MS);
    expect(calls).toEqual([]);
  });

  it("a failed advance does not stop the next epoch's", async () => {
    const epochs: number[] = [];
    advance = new EpochAdvance({
      clock,
      headSlot: () => clock.currentSlot(),
      advanceHeadInto: async (epoch) => {
        epochs.push(epoch);
        if (epoch === 1) throw new Error("no state");
      },
    });
    jest.advanceTimersByTime(2 * SLOTS_PER_EPOCH * SLOT_MS);
    await Promise.resolve();
    expect(epochs).toEqual([1, 2]);
  });
});

describe("a chain's head state, advanced into the next epoch before it starts", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-epoch-advance-"));
  const chainConfig = devChainConfig({secondsPerSlot: SLOT_MS / 1000, genesisFork: "fulu", forkEpochs: {}});
  let db: BeaconDb;
  let chain: BeaconChain;
  // the chain's one clock, on a time the test sets; its slot events are emitted by the test
  let nowMs = GENESIS_S * 1000;

  beforeAll(async () => {
    db = await BeaconDb.open(join(dir, "beacon"), chainConfig);
    chain = await initChain(chainConfig, db, new MockExecutionEngine(), (t) => new Clock(t, SLOT_MS / 1000, SLOTS_PER_EPOCH, () => nowMs), {validatorCount: 64, genesisTime: GENESIS_S}, {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20)});
  }, 60_000);

  afterAll(async () => {
    jest.useRealTimers();
    await chain.close();
    await db.close();
    rmSync(dir, {recursive: true, force: true});
  });

  it("is cached three quarters into the epoch's last slot, and is the state the epoch's duties read", async () => {
    jest.useFakeTimers({doNotFake: ["nextTick", "setImmediate", "queueMicrotask", "performance", "Date"]});
    const lastSlot = SLOTS_PER_EPOCH - 1;
    nowMs = chain.clock.slotStartMs(lastSlot);
    chain.clock.emit("slot", lastSlot);
    const before = chain.cachedStateCount();
    nowMs += 0.75 * SLOT_MS - 1;
    jest.advanceTimersByTime(0.75 * SLOT_MS - 1);
    expect(chain.cachedStateCount()).toBe(before);
    nowMs += 1;
    jest.advanceTimersByTime(1);
    await Promise.resolve();
    // the genesis state advanced into epoch 1 (the epoch transition done), kept
    expect(chain.cachedStateCount()).toBe(before + 1);
    const atEpochStart = await chain.getHeadStateAtEpoch(1);
    expect(atEpochStart.slot).toBe(SLOTS_PER_EPOCH);
    expect(await chain.getHeadStateAtEpoch(1)).toBe(atEpochStart);
    expect(chain.cachedStateCount()).toBe(before + 1);
  });
});
