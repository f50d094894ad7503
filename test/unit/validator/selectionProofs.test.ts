import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {DOMAIN_SELECTION_PROOF, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, SLOTS_PER_EPOCH, SYNC_COMMITTEE_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {AttesterService, SELECTION_PROOF_LOOKAHEAD_SLOTS} from "../../../src/validator/attester.ts";
import {SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS} from "../../../src/validator/syncCommittee.ts";
import {startManualDuties, tempDir} from "./manualDuties.ts";
import {FakeBeaconApi, VALIDATORS} from "./fakeBeaconApi.ts";

/**
 * Selection proofs are signed SELECTION_PROOF_LOOKAHEAD_SLOTS slots before their duty, half-way
 * into a slot, not all when an epoch's duties arrive (at the epoch's start, when every validator
 * client asks the node its duties). The node is asked to aggregate on a subnet once the proof
 * says so, well before the duty; the aggregate carries that proof. The clock is driven by hand.
 * (FakeBeaconApi: validator i attests at slot i of each epoch; the even ones always aggregate.)
 */
describe("duty loop: selection proofs signed ahead of their slot", () => {
  jest.setTimeout(30_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("prepares later duties without aggregation, then as aggregators once their proofs are signed, and aggregates with those proofs", async () => {
    expect(SELECTION_PROOF_LOOKAHEAD_SLOTS).toBe(SLOTS_PER_EPOCH);
    const api = new FakeBeaconApi("phase0", 0);
    const dir = await tempDir("selection-");
    cleanups.push(dir.remove);
    const start = 2 * SLOTS_PER_EPOCH;
    const harness = await startManualDuties({api, dir: dir.dir, slot: start, indices: Array.from({length: VALIDATORS}, (_, i) => i)});
    cleanups.push(harness.stop);
    const subscribed = (validatorIndex: number, slot: number) =>
      api.subscriptions.filter((s) => s.validatorIndex === validatorIndex && s.slot === slot).map((s) => s.isAggregator);

    // After the first slot (its duties polled, then its half-slot round): the duties up to 8 slots ahead are selected, those after are prepared as plain attesters.
    await harness.runSlot();
    const first = start + 1;
    for (let i = 0; i < VALIDATORS; i++) {
      for (const slot of [start + i, start + SLOTS_PER_EPOCH + i]) {
        const aggregates = api.isAggregator(i, slot);
        // this slot's and the next: selected on arrival; up to 8 ahead: selected in the half-slot round, and prepared again if aggregating
        if (slot >= first && slot <= first + 1) expect(subscribed(i, slot)).toEqual([aggregates]);
        else if (slot >= first && slot <= first + SELECTION_PROOF_LOOKAHEAD_SLOTS) expect(subscribed(i, slot)).toEqual(aggregates ? [false, true] : [false]);
        else expect(subscribed(i, slot)).toEqual([false]);
      }
    }
    // Validator 2's duty of the next epoch is selected half-way into the slot 8 before it.
    const nextDuty = start + SLOTS_PER_EPOCH + 2;
    expect(api.isAggregator(2, nextDuty)).toBe(true);
    expect(subscribed(2, nextDuty)).toEqual([false]);
    await harness.runSlot(); // start + 2
    expect(subscribed(2, nextDuty)).toEqual([false, true]);

    // At the next epoch's start, the duties of the epoch after arrive: none is selected then, the first one half-way into the slot.
    while (harness.clock.slot < start + SLOTS_PER_EPOCH - 1) await harness.runSlot();
    harness.clock.startSlot();
    await harness.loop.settle(5000);
    const inTwoEpochs = start + 2 * SLOTS_PER_EPOCH;
    for (let i = 0; i < VALIDATORS; i++) expect(subscribed(i, inTwoEpochs + i)).toEqual([false]);
    await harness.clock.runDueInOrder(() => harness.loop.settle(5000));
    expect(subscribed(0, inTwoEpochs)).toEqual([false, true]);
    expect(subscribed(2, inTwoEpochs + 2)).toEqual([false]);

    // Up to that duty: every aggregator asked the node to aggregate before its slot, and aggregated with its proof.
    while (harness.clock.slot < nextDuty) await harness.runSlot();
    for (let slot = start + 1; slot <= nextDuty; slot++) {
      const i = slot % SLOTS_PER_EPOCH;
      const aggregates = api.aggregates.filter((a) => a.message.aggregate.data.slot === slot);
      expect(aggregates.map((a) => a.message.aggregatorIndex)).toEqual(api.isAggregator(i, slot) ? [i] : []);
      if (aggregates.length === 0) continue;
      expect(subscribed(i, slot)).toContain(true);
      expect(api.verifies(i, ssz.Slot, slot, DOMAIN_SELECTION_PROOF, computeEpochAtSlot(slot), aggregates[0].message.selectionProof)).toBe(true);
    }
    // No subscription claimed an aggregation the proof does not give.
    for (const s of api.subscriptions) if (s.isAggregator) expect(api.isAggregator(s.validatorIndex, s.slot)).toBe(true);
    expect(harness.lines.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
  });

  it("aggregates when its slot's selection is still in flight at the aggregation deadline (the half-slot round late)", async () => {
    const api = new FakeBeaconApi("phase0", 0);
    const dir = await tempDir("selection-late-");
    cleanups.push(dir.remove);
    const start = 2 * SLOTS_PER_EPOCH;
    const harness = await startManualDuties({api, dir: dir.dir, slot: start, indices: [2]});
    cleanups.push(harness.stop);
    // a service of its own, driven by hand: validator 2 (always an aggregator) attests at slot start + 2
    const duty = start + 2;
    let now = start;
    const attester = new AttesterService(harness.ctx, () => now);
    await attester.pollDuties(2);
    expect(api.subscriptions.filter((s) => s.slot === duty).map((s) => s.isAggregator)).toEqual([false]);
    now = duty;
    await attester.attest(duty);
    // the round that selects the duty begins, and the deadline comes before it ends
    const round = attester.signSelectionProofs(duty + SELECTION_PROOF_LOOKAHEAD_SLOTS);
    await attester.aggregate(duty);
    await round;
    expect(api.aggregates.map((a) => [a.message.aggregatorIndex, a.message.aggregate.data.slot])).toEqual([[2, duty]]);
  });

  it("sync committee selection proofs are signed half-way into the slot before their contributions, once (again at the deadline where that failed), and the contributions carry them", async () => {
    expect(SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS).toBe(1);
    // electra: every validator holds one sync committee seat (FakeBeaconApi: seat 4i), and on the minimal preset every seat aggregates
    const api = new FakeBeaconApi("electra", 0);
    const dir = await tempDir("sync-selection-");
    cleanups.push(dir.remove);
    const start = 2 * SLOTS_PER_EPOCH;
    const harness = await startManualDuties({api, dir: dir.dir, slot: start, indices: Array.from({length: VALIDATORS}, (_, i) => i)});
    cleanups.push(harness.stop);
    const signedFor: number[] = [];
    const signer = harness.ctx.signer;
    const sign = signer.signSyncSelectionProof.bind(signer);
    // the first proof asked for slot start + 3 fails, as a remote signer away for a moment
    let failOnce = true;
    signer.signSyncSelectionProof = async (pubkey, slot, subcommitteeIndex) => {
      signedFor.push(slot);
      if (slot === start + 3 && failOnce) {
        failOnce = false;
        throw new Error("signer away");
      }
      return sign(pubkey, slot, subcommitteeIndex);
    };
    const signedAt = (slot: number) => signedFor.filter((s) => s === slot).length;

    // The first slot run: its own proofs at its contribution deadline (nothing was signed ahead), the next slot's half-way into it.
    await harness.runSlot();
    expect(signedAt(start + 1)).toBe(VALIDATORS);
    expect(signedAt(start + 2)).toBe(VALIDATORS);
    // The next slot: its contributions use the proofs signed ahead (none signed again), and the slot after's are signed (one fails).
    await harness.runSlot();
    expect(signedAt(start + 2)).toBe(VALIDATORS);
    expect(signedAt(start + 3)).toBe(VALIDATORS);
    // The slot after: the proof that failed ahead is signed again at its deadline, the others are not.
    await harness.runSlot();
    expect(signedAt(start + 3)).toBe(VALIDATORS + 1);
    for (const slot of [start + 2, start + 3]) {
      const contributions = api.contributions.filter((c) => c.message.contribution.slot === slot);
      expect(contributions.map((c) => c.message.aggregatorIndex).sort()).toEqual(Array.from({length: VALIDATORS}, (_, i) => i));
      for (const {message} of contributions) {
        const subcommitteeIndex = Math.floor((4 * message.aggregatorIndex) / (SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT));
        expect(message.contribution.subcommitteeIndex).toBe(subcommitteeIndex);
        const data = {slot, subcommitteeIndex};
        expect(api.verifies(message.aggregatorIndex, ssz.altair.SyncAggregatorSelectionData, data, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, computeEpochAtSlot(slot), message.selectionProof)).toBe(true);
      }
    }
    expect(harness.lines.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
  });
});
