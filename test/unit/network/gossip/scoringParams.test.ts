import {describe, expect, it, jest} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {RejectReason} from "@libp2p/gossipsub/types";
import {PeerScore, createPeerScoreParams, createPeerScoreThresholds, validatePeerScoreParams, validatePeerScoreThresholds} from "@libp2p/gossipsub/score";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {devChainConfig} from "../../../../src/config/chainConfig.ts";
import {
  GOSSIP_SCORE_THRESHOLDS,
  computePeerScoreParams,
  gossipsubMeshParams,
  gossipsubOptions,
  updateTopicScores,
} from "../../../../src/network/gossip/scoringParams.ts";
import {activeBoundariesAt, stringifyTopic} from "../../../../src/network/gossip/topics.ts";

const config = createBeaconConfig(devChainConfig({secondsPerSlot: 4, genesisFork: "phase0", forkEpochs: {altair: 10}}), new Uint8Array(32).fill(1));
const epochSlots = SLOTS_PER_EPOCH;

const silentLogger = () => {
  const log = Object.assign(() => undefined, {error: () => undefined, trace: () => undefined, enabled: false});
  return {forComponent: () => log} as never;
};

describe("gossipsub parameters", () => {
  it("are the spec's mesh parameters, in milliseconds", () => {
    expect(gossipsubMeshParams(config)).toEqual({
      D: 8,
      Dlo: 6,
      Dhi: 12,
      Dlazy: 6,
      heartbeatInterval: 700,
      fanoutTTL: 60_000,
      mcacheLength: 6,
      mcacheGossip: 3,
      seenTTL: 4 * epochSlots * 2 * 1000,
    });
    expect(gossipsubOptions(config)).toMatchObject({globalSignaturePolicy: "StrictNoSign", maxInboundDataLength: 10485760 + 1747626 + 32 + 1024});
  });

  it("use the consensus clients' score thresholds, which gossipsub accepts", () => {
    expect(GOSSIP_SCORE_THRESHOLDS).toEqual({gossipThreshold: -4000, publishThreshold: -8000, graylistThreshold: -16000, acceptPXThreshold: 100, opportunisticGraftThreshold: 5});
    expect(() => validatePeerScoreThresholds(createPeerScoreThresholds(GOSSIP_SCORE_THRESHOLDS))).not.toThrow();
  });
});

describe("peer score parameters", () => {
  const boundaries = activeBoundariesAt(config, 9); // phase0 and altair
  const topic = (type: "beacon_block" | "beacon_aggregate_and_proof" | "voluntary_exit" | "attester_slashing", b = boundaries[0]) => stringifyTopic(config, {type, boundary: b});
  const young = computePeerScoreParams({config, currentSlot: 3, activeValidatorCount: 64, boundaries});
  const mature = computePeerScoreParams({config, currentSlot: 100 * epochSlots, activeValidatorCount: 500_000, boundaries});

  it("score the block, aggregate, attestation subnet, exit and slashing topics of every active boundary", () => {
    expect(boundaries.map((b) => b.fork)).toEqual(["phase0", "altair"]);
    const topics = young.topics ?? {};
    expect(Object.keys(topics)).toHaveLength(2 * (64 + 5));
    expect(topics[topic("beacon_block", boundaries[1])].topicWeight).toBe(0.5);
    expect(topics[topic("beacon_aggregate_and_proof")].topicWeight).toBe(0.5);
    expect(topics[stringifyTopic(config, {type: "beacon_attestation", subnet: 63, boundary: boundaries[0]})].topicWeight).toBe(1 / 64);
    expect(topics[topic("voluntary_exit")].topicWeight).toBe(0.05);
    expect(topics[topic("attester_slashing")].topicWeight).toBe(0.05);
  });

  it("are accepted by gossipsub's own validation, young chain and mature", () => {
    expect(() => validatePeerScoreParams(createPeerScoreParams(young))).not.toThrow();
    expect(() => validatePeerScoreParams(createPeerScoreParams(mature))).not.toThrow();
    expect(() => computePeerScoreParams({config, currentSlot: 0, activeValidatorCount: 0, boundaries})).toThrow();
  });

  it("decay each counter to decayToZero over its window (one decay per slot)", () => {
    const block = (mature.topics ?? {})[topic("beacon_block", boundaries[1])];
    expect(mature.decayInterval).toBe(4000);
    expect(block.firstMessageDeliveriesDecay ** (20 * epochSlots)).toBeCloseTo(0.01, 10);
    expect(block.meshMessageDeliveriesDecay ** (5 * epochSlots)).toBeCloseTo(0.01, 10);
    expect(block.invalidMessageDeliveriesDecay ** (50 * epochSlots)).toBeCloseTo(0.01, 10);
    expect((mature.behaviourPenaltyDecay ?? 0) ** (10 * epochSlots)).toBeCloseTo(0.01, 10);
  });

  it("hold mesh peers to a delivery rate only on the current boundary's topics, once the chain has been on it for longer than the window", () => {
    const youngBlock = (young.topics ?? {})[topic("beacon_block")];
    const matureBlock = (mature.topics ?? {})[topic("beacon_block", boundaries[1])];
    expect(youngBlock.meshMessageDeliveriesWeight).toBe(0);
    expect(matureBlock.meshMessageDeliveriesWeight).toBeLessThan(0);
    expect(matureBlock.meshMessageDeliveriesThreshold).toBeGreaterThan(0);
    expect(matureBlock.meshMessageDeliveriesActivation).toBe(4000 * epochSlots);
    // the past boundary's topics carry nothing now: a mesh peer there delivers nothing and is not penalized
    for (const type of ["beacon_block", "beacon_aggregate_and_proof"] as const) {
      expect((mature.topics ?? {})[topic(type, boundaries[0])].meshMessageDeliveriesWeight).toBe(0);
      expect((mature.topics ?? {})[topic(type, boundaries[1])].meshMessageDeliveriesWeight).toBeLessThan(0);
    }
    // a chain long past phase0's window but only 3 epochs into altair: no block penalty yet on either; aggregates' (2 epochs) on altair's
    const forkSlot = 10 * epochSlots;
    const justForked = computePeerScoreParams({config, currentSlot: forkSlot + 3 * epochSlots, activeValidatorCount: 4096, boundaries}).topics ?? {};
    // the deliveries are counted before the penalty begins, so that it begins against the window just passed
    const notYet = justForked[topic("beacon_block", boundaries[1])];
    expect(notYet.meshMessageDeliveriesCap).toBeGreaterThanOrEqual(2);
    expect(notYet.meshMessageDeliveriesDecay ** (5 * epochSlots)).toBeCloseTo(0.01, 10);
    expect(boundaries.map((b) => justForked[topic("beacon_block", b)].meshMessageDeliveriesWeight)).toEqual([0, 0]);
    expect(justForked[topic("beacon_aggregate_and_proof", boundaries[0])].meshMessageDeliveriesWeight).toBe(0);
    expect(justForked[topic("beacon_aggregate_and_proof", boundaries[1])].meshMessageDeliveriesWeight).toBeLessThan(0);
    // before altair begins, phase0's topics are the current ones
    const beforeFork = computePeerScoreParams({config, currentSlot: forkSlot - 1, activeValidatorCount: 64, boundaries}).topics ?? {};
    expect(beforeFork[topic("beacon_block", boundaries[0])].meshMessageDeliveriesWeight).toBeLessThan(0);
    expect(beforeFork[topic("beacon_block", boundaries[1])].meshMessageDeliveriesWeight).toBe(0);
  });

  it("ask no aggregate delivery rate of mesh peers while every committee member is an aggregator, and the spec-community rate otherwise", () => {
    const aggregatesAt = (activeValidatorCount: number) =>
      (computePeerScoreParams({config, currentSlot: 100 * epochSlots, activeValidatorCount, boundaries}).topics ?? {})[topic("beacon_aggregate_and_proof", boundaries[1])];
    // minimal preset: 64 validators make 2 committees of 4 a slot, 960 make 4 of 30: all aggregate (is_aggregator's modulo is 1)
    for (const count of [64, 960]) {
      expect(aggregatesAt(count)).toMatchObject({meshMessageDeliveriesWeight: 0, meshMessageDeliveriesThreshold: 0, meshFailurePenaltyWeight: 0});
    }
    // committees of 32 and more: TARGET_AGGREGATORS_PER_COMMITTEE (16) of each a slot, and the rate/50 threshold of Lighthouse's and Lodestar's parameters
    for (const count of [1024, 500_000]) {
      const params = aggregatesAt(count);
      const aggregatorsPerSlot = (4 * 16 * epochSlots) / epochSlots; // 4 committees a slot on the minimal preset
      const decay = 0.01 ** (1 / (2 * epochSlots));
      const threshold = ((aggregatorsPerSlot / 50) / (1 - decay)) * decay;
      expect(params.meshMessageDeliveriesThreshold).toBeCloseTo(threshold, 10);
      expect(params.meshMessageDeliveriesWeight).toBeCloseTo(-107.5 / (0.5 * threshold * threshold), 10);
      expect(params.meshFailurePenaltyWeight).toBe(params.meshMessageDeliveriesWeight);
    }
  });

  it("ask no delivery rate on the attestation subnets no committee is assigned to", () => {
    const subnetWeight = (activeValidatorCount: number, subnet: number) =>
      (computePeerScoreParams({config, currentSlot: 100 * epochSlots, activeValidatorCount, boundaries}).topics ?? {})[
        stringifyTopic(config, {type: "beacon_attestation", subnet, boundary: boundaries[1]})
      ].meshMessageDeliveriesWeight;
    // minimal preset: 64 validators make 2 committees a slot, 16 an epoch, on subnets 0 to 15; 500,000 make 32, on subnets 0 to 31
    expect([15, 16, 63].map((subnet) => subnetWeight(64, subnet) < 0)).toEqual([true, false, false]);
    expect([31, 32].map((subnet) => subnetWeight(500_000, subnet) < 0)).toEqual([true, false]);
  });

  it("are updated in a running gossipsub's scores as the chain ages and the validator count moves", () => {
    const score = new PeerScore(createPeerScoreParams(young), null, silentLogger(), {scoreCacheValidityMs: 0});
    const aggregates = topic("beacon_aggregate_and_proof");
    const youngCap = score.params.topics[aggregates].firstMessageDeliveriesCap;
    expect(score.params.topics[topic("beacon_block", boundaries[1])].meshMessageDeliveriesWeight).toBe(0);
    updateTopicScores(score, {config, currentSlot: 100 * epochSlots, activeValidatorCount: 500_000, boundaries});
    expect(score.params.topics[topic("beacon_block", boundaries[1])]).toEqual((mature.topics ?? {})[topic("beacon_block", boundaries[1])]);
    expect(score.params.topics[topic("beacon_block", boundaries[1])].meshMessageDeliveriesWeight).toBeLessThan(0);
    // more validators, more aggregators a slot: a first delivery is worth less, up to a higher cap
    expect(score.params.topics[aggregates].firstMessageDeliveriesCap).toBeGreaterThan(youngCap);
    expect(() => validatePeerScoreParams(score.params)).not.toThrow();
    expect(Object.keys(score.params.topics)).toHaveLength(2 * (64 + 5));
  });

  it("let gossipsub's scoring drop a peer below the gossip threshold after a few invalid blocks", () => {
    const score = new PeerScore(createPeerScoreParams(young), null, silentLogger(), {scoreCacheValidityMs: 0});
    score.addPeer("peer");
    const blockTopic = topic("beacon_block");
    const after: number[] = [];
    for (let i = 1; i <= 7; i++) {
      score.rejectMessage("peer", `msg${i}`, blockTopic, RejectReason.Reject);
      after.push(score.score("peer"));
    }
    // P4 is the squared count of invalid messages, weighted so that one costs the most a peer can earn (107.5)
    expect(after[0]).toBeCloseTo(-107.5, 6);
    expect(after[5]).toBeGreaterThan(GOSSIP_SCORE_THRESHOLDS.gossipThreshold);
    expect(after[6]).toBeLessThan(GOSSIP_SCORE_THRESHOLDS.gossipThreshold);
  });

  it("penalize a fourth peer behind one public address, but not peers on this machine's loopback", () => {
    const score = new PeerScore(createPeerScoreParams(young), null, silentLogger(), {scoreCacheValidityMs: 0});
    const peers = ["a", "b", "c", "d"];
    for (const peer of peers) {
      score.addPeer(peer);
      score.addIP(peer, "203.0.113.7");
    }
    // P6: the square of the peers beyond the threshold (3) on one address, weighted by -topicScoreCap (53.75)
    expect(score.score("a")).toBeCloseTo(-53.75, 6);
    for (const peer of ["e", "f", "g", "h", "i"]) {
      score.addPeer(peer);
      score.addIP(peer, "127.0.0.1");
    }
    expect(score.score("e")).toBe(0);
  });
});

/**
 * The 3-node devnet of test/e2e/devnet.test.ts as node A's peer scores see it after fulu: 64
 * validators on the minimal preset (two committees of 4 a slot, every member an aggregator), a block
 * a slot proposed by A, B and C in turn. A aggregates its own committee members' attestations too,
 * so every aggregate B and C send covers attesters A's own aggregate already covers: the spec's
 * rules IGNORE it, and gossipsub gives an ignored message no mesh delivery credit.
 */
describe("peer scores on a small devnet after its last fork", () => {
  const forkEpochs = {altair: 1, bellatrix: 2, capella: 3, deneb: 4, electra: 5, fulu: 6};
  const devnet = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "phase0", forkEpochs}), new Uint8Array(32).fill(2));
  const slotMs = 2000;
  const fuluSlot = 6 * epochSlots;
  const genesisMs = Date.UTC(2026, 0, 1);
  const boundariesAt = (slot: number) => activeBoundariesAt(devnet, Math.floor(slot / epochSlots));

  /** A's scores of B and C (which forward blocks and aggregates as the devnet does) and of D (in the mesh, silent), slot by slot until `lastSlot` */
  function simulate(lastSlot: number): Record<"b" | "c" | "d", number[]> {
    const startSlot = fuluSlot - epochSlots; // the fulu topics are joined an epoch before the fork
    jest.useFakeTimers({now: genesisMs + startSlot * slotMs});
    try {
      const input = (slot: number) => ({config: devnet, currentSlot: slot, activeValidatorCount: 64, boundaries: boundariesAt(slot)});
      const score = new PeerScore(createPeerScoreParams(computePeerScoreParams(input(startSlot))), null, silentLogger(), {scoreCacheValidityMs: 0});
      const fulu = boundariesAt(fuluSlot).find((b) => b.fork === "fulu");
      if (!fulu) throw new Error("no fulu boundary");
      const blocks = stringifyTopic(devnet, {type: "beacon_block", boundary: fulu});
      const aggregates = stringifyTopic(devnet, {type: "beacon_aggregate_and_proof", boundary: fulu});
      const subnets = Array.from({length: 64}, (_, subnet) => stringifyTopic(devnet, {type: "beacon_attestation", subnet, boundary: fulu}));
      const peers = ["b", "c", "d"] as const;
      for (const peer of peers) {
        score.addPeer(peer);
        score.addIP(peer, "127.0.0.1");
        for (const topic of [blocks, aggregates, ...subnets]) score.graft(peer, topic);
      }
      /** a message first from `first` (validated as `result`), then from the other of B and C */
      const receive = (id: string, topic: string, first: "b" | "c", result: "accept" | "ignore") => {
        score.validateMessage(id);
        if (result === "accept") score.deliverMessage(first, id, topic);
        else score.rejectMessage(first, id, topic, RejectReason.Ignore);
        score.duplicateMessage(first === "b" ? "c" : "b", id, topic);
      };
      const at = (slot: number, ms: number) => jest.setSystemTime(genesisMs + slot * slotMs + ms);
      const scores: Record<"b" | "c" | "d", number[]> = {b: [], c: [], d: []};
      for (let slot = startSlot; slot <= lastSlot; slot++) {
        if (slot % epochSlots === 0) updateTopicScores(score, input(slot));
        // the block: A's own, or first from its proposer and again from the other peer
        const proposer = ["a", "b", "c"][slot % 3];
        if ((proposer === "b" || proposer === "c") && slot >= fuluSlot) {
          at(slot, 200);
          receive(`block-${slot}`, blocks, proposer, "accept");
        }
        // the attestations of the slot's 2 committees of 4, on subnets 0 to 15 (compute_subnet_for_attestation)
        for (let committee = 0; committee < 2 && slot >= fuluSlot; committee++) {
          for (let member = 0; member < 4; member++) {
            const attester = ["a", "b", "c"][(slot + committee + member) % 3];
            at(slot, slotMs / 3 + 100);
            if (attester === "b" || attester === "c") receive(`attestation-${slot}-${committee}-${member}`, subnets[2 * (slot % epochSlots) + committee], attester, "accept");
          }
        }
        // the aggregates of B's 3 and C's 2 aggregators, each IGNOREd (A's own aggregate covers them) and then forwarded by the other peer
        if (slot >= fuluSlot) {
          for (const [aggregator, count] of [["b", 3], ["c", 2]] as const) {
            for (let i = 0; i < count; i++) {
              at(slot, (slotMs * 2) / 3 + 100);
              receive(`aggregate-${slot}-${aggregator}-${i}`, aggregates, aggregator, "ignore");
            }
          }
        }
        at(slot + 1, 0);
        score.refreshScores(); // gossipsub's decay, once a slot (decayInterval)
        for (const peer of peers) scores[peer].push(score.score(peer));
      }
      return scores;
    } finally {
      jest.useRealTimers();
    }
  }

  it("keep a mesh peer that forwards at the devnet's rate, ignored duplicate aggregates and idle subnets included, above zero; a silent mesh peer goes below", () => {
    const lastSlot = fuluSlot + 18 * epochSlots; // past the aggregate (2 epochs), block (5) and attestation subnet (16) penalty windows
    const scores = simulate(lastSlot);
    expect(Math.min(...scores.b)).toBeGreaterThan(0);
    expect(Math.min(...scores.c)).toBeGreaterThan(0);
    // D delivers no block: once the block topic's window has passed on fulu, it is below zero and out of the mesh
    expect(scores.d[scores.d.length - 1]).toBeLessThan(0);
  });
});
