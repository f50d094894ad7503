import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {ForkName, SYNC_COMMITTEE_SIZE} from "@lodestar/params";
import {ssz, type LightClientFinalityUpdate, type LightClientOptimisticUpdate} from "@lodestar/types";
import type {Forked} from "../../../../../src/chain/lightClient/server.ts";
import {devChainConfig} from "../../../../../src/config/chainConfig.ts";
import {createLightClientFinalityUpdateValidator, createLightClientOptimisticUpdateValidator} from "../../../../../src/network/gossip/validation/lightClient.ts";
import type {GossipValidatorDeps} from "../../../../../src/network/gossip/validation/types.ts";
import type {ParsedTopic} from "../../../../../src/network/gossip/topics.ts";

/**
 * The light-client topics' rules for full nodes (altair/light-client/p2p-interface.md), with a
 * 2-second slot: the sync message is due at 3333 bps of the slot (666 ms), and the gossip clock
 * disparity allowance is 500 ms, so an update is forwarded from 166 ms into its signature slot.
 */

const config = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), new Uint8Array(32));
const topic = {boundary: {fork: ForkName.fulu}} as unknown as ParsedTopic;

function harness() {
  const local: {finality: Forked<LightClientFinalityUpdate> | null; optimistic: Forked<LightClientOptimisticUpdate> | null} = {finality: null, optimistic: null};
  let msIntoSlot = 0;
  const deps = {
    config,
    chain: {lightClient: {getFinalityUpdate: () => local.finality, getOptimisticUpdate: () => local.optimistic}},
    clock: {currentSlot: () => 0, currentSlotWithTolerance: () => 0, msIntoSlot: () => msIntoSlot},
  } as unknown as GossipValidatorDeps;
  return {deps, local, at: (ms: number) => (msIntoSlot = ms)};
}

function optimistic(attestedSlot: number, participants = SYNC_COMMITTEE_SIZE): LightClientOptimisticUpdate {
  const u = ssz.fulu.LightClientOptimisticUpdate.defaultValue();
  u.attestedHeader.beacon.slot = attestedSlot;
  u.signatureSlot = attestedSlot + 1;
  for (let i = 0; i < participants; i++) u.syncAggregate.syncCommitteeBits.set(i, true);
  return u;
}

function finality(finalizedSlot: number, attestedSlot: number, participants: number): LightClientFinalityUpdate {
  const u = ssz.fulu.LightClientFinalityUpdate.defaultValue();
  u.finalizedHeader.beacon.slot = finalizedSlot;
  u.attestedHeader.beacon.slot = attestedSlot;
  u.signatureSlot = attestedSlot + 1;
  for (let i = 0; i < participants; i++) u.syncAggregate.syncCommitteeBits.set(i, true);
  return u;
}

describe("light_client_optimistic_update", () => {
  it("forwards the node's own update once the sync message is due, each attested slot once", async () => {
    const {deps, local, at} = harness();
    const validate = createLightClientOptimisticUpdateValidator(deps);
    local.optimistic = {fork: ForkName.fulu, value: optimistic(10)};
    at(100);
    expect(await validate(topic, optimistic(10), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/had time to propagate/)});
    at(166);
    expect(await validate(topic, optimistic(10, 5), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not the optimistic update this node computed/)});
    expect(await validate(topic, optimistic(10), "peer")).toMatchObject({result: "ACCEPT"});
    expect(await validate(topic, optimistic(10), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not newer/)});
    expect(await validate(topic, optimistic(9), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not newer/)});
  });

  it("ignores everything when the node has no update, or one of another fork than the topic's", async () => {
    const {deps, local, at} = harness();
    const validate = createLightClientOptimisticUpdateValidator(deps);
    at(1000);
    expect(await validate(topic, optimistic(10), "peer")).toMatchObject({result: "IGNORE"});
    local.optimistic = {fork: ForkName.electra, value: optimistic(10)};
    expect(await validate(topic, optimistic(10), "peer")).toMatchObject({result: "IGNORE"});
  });
});

describe("light_client_finality_update", () => {
  it("forwards a newer finalized header, and the same one again only when it newly has supermajority (> 2/3)", async () => {
    const {deps, local, at} = harness();
    const validate = createLightClientFinalityUpdateValidator(deps);
    at(1000);
    const twoThirds = Math.floor((SYNC_COMMITTEE_SIZE * 2) / 3);
    local.finality = {fork: ForkName.fulu, value: finality(8, 20, twoThirds)};
    expect(await validate(topic, finality(8, 20, twoThirds), "peer")).toMatchObject({result: "ACCEPT"});
    expect(await validate(topic, finality(8, 20, twoThirds), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not newer/)});
    local.finality = {fork: ForkName.fulu, value: finality(8, 21, SYNC_COMMITTEE_SIZE)};
    expect(await validate(topic, finality(8, 21, SYNC_COMMITTEE_SIZE), "peer")).toMatchObject({result: "ACCEPT"});
    expect(await validate(topic, finality(8, 22, SYNC_COMMITTEE_SIZE), "peer")).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/not newer/)});
    local.finality = {fork: ForkName.fulu, value: finality(16, 30, twoThirds)};
    expect(await validate(topic, finality(16, 30, twoThirds), "peer")).toMatchObject({result: "ACCEPT"});
  });
});
