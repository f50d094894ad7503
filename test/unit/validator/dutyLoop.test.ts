// suite: alone (duties on a real-time slot clock)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {Writable} from "node:stream";
import {DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, type ForkName, isForkPostElectra, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {BeaconBlock, electra, phase0} from "@lodestar/types";
import type {Type} from "@chainsafe/ssz";
import type {DevFork} from "../../../src/config/chainConfig.ts";
import {initLogging, parseLogDirective} from "../../../src/log.ts";
import {startValidatorClient} from "../../../src/validator/index.ts";
import {FakeBeaconApi, VALIDATORS, committeeLengthOf, feeRecipient, keys} from "./fakeBeaconApi.ts";
import {toHex} from "@lodestar/utils";

/** A node that never produces a block and fails attestation data at odd slots: the client must carry on. */
class FlakyBeaconApi extends FakeBeaconApi {
  override async produceBlock(): Promise<never> {
    throw new Error("flaky: no block");
  }
  override async produceAttestationData(committeeIndex: number, slot: number) {
    if (slot % 2 === 1) throw new Error("flaky: no attestation data");
    return super.produceAttestationData(committeeIndex, slot);
  }
}

describe("validator client duty loop", () => {
  const runs = new Map<DevFork, FakeBeaconApi>();
  let flaky: FlakyBeaconApi;
  const errorLines: string[] = [];
  let firstSlot = 0;
  let lastSlot = 0;
  let dataDir: string;

  beforeAll(async () => {
    initLogging({
      directive: parseLogDirective("INFO"),
      format: "json",
      destination: new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split("\n")) if (line && JSON.parse(line).level >= 40) errorLines.push(line);
          done();
        },
      }),
    });
    dataDir = await mkdtemp(join(tmpdir(), "vc-"));
    // Two epochs after genesis, 1-second slots; a phase0 chain and an electra chain side by side.
    const genesisTime = Math.floor(Date.now() / 1000) - 2 * SLOTS_PER_EPOCH;
    runs.set("phase0", new FakeBeaconApi("phase0", genesisTime));
    runs.set("electra", new FakeBeaconApi("electra", genesisTime));
    flaky = new FlakyBeaconApi("electra", genesisTime);
    const apis = [...runs.values(), flaky];
    const clients = await Promise.all(
      apis.map((api, k) => startValidatorClient({api, indices: keys.map((_, i) => i), dataDir: join(dataDir, String(k)), feeRecipient}))
    );
    // Slots [firstSlot, lastSlot] run whole: from the first tick to just before the tick after lastSlot.
    firstSlot = Math.floor((Date.now() / 1000 - genesisTime)) + 1;
    lastSlot = firstSlot + 2;
    await new Promise((resolve) => setTimeout(resolve, (genesisTime + lastSlot + 1) * 1000 - 60 - Date.now()));
    await Promise.all(clients.map((c) => c.stop()));
  }, 15_000);

  afterAll(async () => {
    await rm(dataDir, {recursive: true, force: true});
  });

  const slotsRun = (): number[] => Array.from({length: lastSlot - firstSlot + 1}, (_, k) => firstSlot + k);

  it.each(["phase0", "electra"] as const)("%s: proposes a signed block at each slot it has a proposer duty", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const blocks = api.blocks.filter((b) => b.message.slot === slot);
      expect(blocks).toHaveLength(1);
      const i = slot % SLOTS_PER_EPOCH;
      expect(blocks[0].message.proposerIndex).toBe(i);
      const blockType = ssz[api.config.getForkName(slot)].BeaconBlock as Type<BeaconBlock>;
      expect(api.verifies(i, blockType, blocks[0].message, DOMAIN_BEACON_PROPOSER, computeEpochAtSlot(slot), blocks[0].signature)).toBe(true);
    }
  });

  it.each(["phase0", "electra"] as const)("%s: attests once per slot per validator with a duty", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const i = slot % SLOTS_PER_EPOCH;
      const atSlot = api.attestations.filter((a) => a.data.slot === slot);
      expect(atSlot).toHaveLength(1);
      const attestation = atSlot[0];
      if (isForkPostElectra(fork as ForkName)) {
        const single = attestation as electra.SingleAttestation;
        expect(single.attesterIndex).toBe(i);
        expect(single.committeeIndex).toBe(i % 2);
        expect(single.data.index).toBe(0);
      } else {
        const att = attestation as phase0.Attestation;
        expect(att.aggregationBits.bitLen).toBe(committeeLengthOf(i));
        expect(att.aggregationBits.getTrueBitIndexes()).toEqual([0]);
        expect(att.data.index).toBe(i % 2);
      }
      expect(api.verifies(i, ssz.phase0.AttestationData, attestation.data, DOMAIN_BEACON_ATTESTER, computeEpochAtSlot(slot), attestation.signature)).toBe(true);
    }
    // Subnet subscriptions carried the aggregation selection (the duties of the slots run, their proofs signed by then).
    for (const sub of api.subscriptions) if (sub.isAggregator) expect(api.isAggregator(sub.validatorIndex, sub.slot)).toBe(true);
    for (const slot of slotsRun()) {
      const i = slot % SLOTS_PER_EPOCH;
      expect(api.subscriptions.some((s) => s.validatorIndex === i && s.slot === slot && s.isAggregator)).toBe(api.isAggregator(i, slot));
    }
  });

  it.each(["phase0", "electra"] as const)("%s: aggregates exactly when selected", (fork) => {
    const api = runs.get(fork)!;
    for (const slot of slotsRun()) {
      const i = slot % SLOTS_PER_EPOCH;
      const atSlot = api.aggregates.filter((a) => a.message.aggregate.data.slot === slot);
      expect(atSlot.map((a) => a.message.aggregatorIndex)).toEqual(api.isAggregator(i, slot) ? [i] : []);
    }
    expect(api.aggregates.length).toBeGreaterThan(0);
  });

  it("electra: sends sync committee messages and contributions every slot; phase0: none", () => {
    const electraApi = runs.get("electra")!;
    for (const slot of slotsRun()) {
      expect(electraApi.syncMessages.filter((m) => m.slot === slot).map((m) => m.validatorIndex).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // Minimal preset: every sync subcommittee member is an aggregator.
      expect(electraApi.contributions.filter((c) => c.message.contribution.slot === slot)).toHaveLength(VALIDATORS);
    }
    const phase0Api = runs.get("phase0")!;
    expect(phase0Api.syncMessages).toHaveLength(0);
    expect(phase0Api.contributions).toHaveLength(0);
  });

  it("announces the fee recipient and logs no warnings or errors", () => {
    for (const api of runs.values()) {
      expect(api.proposerPreparations.map((p) => p.validatorIndex).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(api.proposerPreparations.every((p) => toHex(p.feeRecipient) === toHex(feeRecipient))).toBe(true);
    }
    expect(errorLines.filter((line) => !line.includes("flaky"))).toEqual([]);
  });

  it("carries on past failing calls, logging each failure", () => {
    expect(flaky.blocks).toHaveLength(0);
    for (const slot of slotsRun()) {
      expect(flaky.attestations.filter((a) => a.data.slot === slot)).toHaveLength(slot % 2 === 0 ? 1 : 0);
      expect(flaky.syncMessages.filter((m) => m.slot === slot)).toHaveLength(VALIDATORS);
    }
    expect(errorLines.filter((line) => line.includes("flaky: no block")).length).toBeGreaterThanOrEqual(slotsRun().length);
    expect(errorLines.some((line) => line.includes("flaky: no attestation data"))).toBe(true);
  });
});
