import {afterEach, describe, expect, it, jest} from "@jest/globals";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {HeadEvent} from "../../../src/validator/beaconApi.ts";
import {attesterOf, startManualDuties, tempDir, until} from "./manualDuties.ts";
import {FakeBeaconApi} from "./fakeBeaconApi.ts";

/** The dependent root of every epoch's duties on each branch: a re-org deeper than an epoch changes them all. */
const rootOf = (branch: number): Uint8Array<ArrayBuffer> => new Uint8Array(32).fill(branch === 0 ? 0xaa : 0xbb);

/**
 * A node on one of two branches whose shufflings differ: on branch 0 validator i attests at
 * slot i of each epoch (as FakeBeaconApi), on branch 1 at slot (i + 4) % 8. Its duties carry the
 * branch's dependent root; its attester duty requests are counted by epoch.
 */
class TwoBranchApi extends FakeBeaconApi {
  branch = 0;
  readonly dutyRequests = new Map<number, number>();

  override async getAttesterDuties(epoch: number, indices: number[]) {
    this.dutyRequests.set(epoch, (this.dutyRequests.get(epoch) ?? 0) + 1);
    const {duties} = await super.getAttesterDuties(epoch, indices);
    const shift = this.branch === 0 ? 0 : 4;
    const start = epoch * SLOTS_PER_EPOCH;
    return {dependentRoot: rootOf(this.branch), duties: duties.map((d) => ({...d, slot: start + ((d.validatorIndex + shift) % SLOTS_PER_EPOCH)}))};
  }

  /** The head event of a head at `slot` on the current branch (the spec's dependent roots: this node's are the branch's). */
  head(slot: number): HeadEvent {
    return {slot, block: new Uint8Array(32).fill(slot), previousDutyDependentRoot: rootOf(this.branch), currentDutyDependentRoot: rootOf(this.branch)};
  }
}

/**
 * The validator client follows the node's head events (eventstream, `head`), as Lighthouse and
 * Lodestar do: a head whose duty dependent roots differ from those of the duties it holds (a
 * re-org onto a branch with another shuffling, as when a split network heals) makes it fetch
 * those duties again at once, rather than attest with the old committees until the epoch ends
 * (which the node refuses: "validator not in committee"). The clock is driven by hand.
 */
describe("duty loop: attester duties follow the head's dependent roots", () => {
  jest.setTimeout(30_000);
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Validators 2 and 3 (branch 0: slots 2 and 3 of each epoch; branch 1: slots 6 and 7), the clock at the start of epoch 2. */
  async function setup() {
    const api = new TwoBranchApi("electra", 0);
    const dir = await tempDir("head-events-");
    cleanups.push(dir.remove);
    const harness = await startManualDuties({api, dir: dir.dir, slot: 2 * SLOTS_PER_EPOCH, indices: [2, 3]});
    cleanups.push(harness.stop);
    await until("the head event stream opened", () => api.headSubscriptions === 1);
    const attestedAt = (validator: number) => api.attestations.filter((a) => attesterOf(a) === validator).map((a) => a.data.slot);
    const warnings = () => harness.lines.filter((l) => l.level === "error" || l.level === "warn");
    return {api, ...harness, attestedAt, warnings};
  }

  it("a head on a branch with other duty roots fetches the epoch's duties again at once: the epoch's later attestations follow that branch", async () => {
    const {api, clock, loop, runSlot, attestedAt, warnings} = await setup();
    await runSlot(); // slot 17, no duty of ours on either branch
    expect(api.dutyRequests.get(2)).toBe(1);

    // the node re-orgs onto branch 1 and says so with its next head event
    api.branch = 1;
    api.pushHead(api.head(clock.slot));
    await until("epoch 2's duties fetched again", () => api.dutyRequests.get(2) === 2);
    await loop.settle(5000);
    while (clock.slot < 3 * SLOTS_PER_EPOCH - 1) await runSlot();

    // branch 1's duties for the rest of epoch 2: not at slots 18 and 19 but 22 and 23
    expect(attestedAt(2)).toEqual([22]);
    expect(attestedAt(3)).toEqual([23]);
    expect(warnings()).toEqual([]);
  });

  it("while head events come, the epoch's duties are fetched once, and a head with the same duty roots fetches nothing again", async () => {
    const {api, clock, loop, runSlot, attestedAt, warnings} = await setup();
    for (let i = 0; i < 3; i++) {
      await runSlot();
      api.pushHead(api.head(clock.slot));
      await loop.settle(5000);
    }
    expect(computeEpochAtSlot(clock.slot)).toBe(2);
    expect(api.dutyRequests.get(2)).toBe(1);
    expect(attestedAt(2)).toEqual([18]);
    expect(attestedAt(3)).toEqual([19]);
    expect(warnings()).toEqual([]);
  });

  it("when the head events stop, the client says so once, fetches the epoch's duties each slot, and opens the stream again at the next slot", async () => {
    const {api, clock, runSlot, attestedAt, lines} = await setup();
    await runSlot();
    api.endHeadStreams();
    await until("the loss said", () => lines.some((l) => l.msg.startsWith("Head events from the beacon node stopped")));
    api.branch = 1; // a re-org while no head event can tell
    await runSlot(); // slot 18: the epoch's duties fetched again with the slot, and the stream opened again
    expect(api.dutyRequests.get(2)).toBe(2);
    expect(api.headSubscriptions).toBe(2);
    // branch 1's duties from slot 18 on
    while (clock.slot < 3 * SLOTS_PER_EPOCH - 1) await runSlot();
    expect(attestedAt(2)).toEqual([22]);
    expect(attestedAt(3)).toEqual([23]);
    // the stream is back: the next slots fetch the epoch's duties no more
    expect(api.dutyRequests.get(2)).toBe(2);
    expect(lines.filter((l) => l.msg.startsWith("Head events from the beacon node stopped"))).toHaveLength(1);
  });
});
