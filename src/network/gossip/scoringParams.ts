import type {BeaconConfig, ForkBoundary} from "@lodestar/config";
import {StrictNoSign, type GossipsubOpts} from "@libp2p/gossipsub";
import {type PeerScoreParams, type PeerScoreThresholds, type TopicScoreParams, validateTopicScoreParams} from "@libp2p/gossipsub/score";
import {ATTESTATION_SUBNET_COUNT, SLOTS_PER_EPOCH, TARGET_AGGREGATORS_PER_COMMITTEE} from "@lodestar/params";
import {computeCommitteeCount} from "@lodestar/state-transition";
import {maxMessageSize} from "./encoding.ts";
import {type GossipType, stringifyTopic} from "./topics.ts";

/** Gossipsub parameters of phase0 p2p-interface.md. */
export const GOSSIP_D = 8;
export const GOSSIP_D_LOW = 6;
export const GOSSIP_D_HIGH = 12;
export const GOSSIP_D_LAZY = 6;
export const GOSSIP_HEARTBEAT_INTERVAL_MS = 700;
export const GOSSIP_FANOUT_TTL_MS = 60_000;
export const GOSSIP_MCACHE_LENGTH = 6;
export const GOSSIP_MCACHE_GOSSIP = 3;

export type GossipsubMeshParams = Pick<
  GossipsubOpts,
  "D" | "Dlo" | "Dhi" | "Dlazy" | "heartbeatInterval" | "fanoutTTL" | "mcacheLength" | "mcacheGossip" | "seenTTL"
>;

/** The spec's mesh parameters in gossipsub's units (milliseconds); seen_ttl is two epochs. */
export function gossipsubMeshParams(config: Pick<BeaconConfig, "SECONDS_PER_SLOT">): GossipsubMeshParams {
  return {
    D: GOSSIP_D,
    Dlo: GOSSIP_D_LOW,
    Dhi: GOSSIP_D_HIGH,
    Dlazy: GOSSIP_D_LAZY,
    heartbeatInterval: GOSSIP_HEARTBEAT_INTERVAL_MS,
    fanoutTTL: GOSSIP_FANOUT_TTL_MS,
    mcacheLength: GOSSIP_MCACHE_LENGTH,
    mcacheGossip: GOSSIP_MCACHE_GOSSIP,
    seenTTL: config.SECONDS_PER_SLOT * SLOTS_PER_EPOCH * 2 * 1000,
  };
}

/**
 * The gossipsub options of the spec: the mesh parameters, StrictNoSign, the RPC frame limit
 * max_message_size(), the score thresholds, and the topic scores when `scoring` is given (they
 * depend on the validator count and the subscribed fork boundaries). The message id function and
 * the data transform are in encoding.ts.
 */
export function gossipsubOptions(config: BeaconConfig, scoring?: Omit<ScoreParamsInput, "config">): Partial<GossipsubOpts> {
  return {
    ...gossipsubMeshParams(config),
    globalSignaturePolicy: StrictNoSign,
    maxInboundDataLength: maxMessageSize(config),
    scoreThresholds: GOSSIP_SCORE_THRESHOLDS,
    ...(scoring ? {scoreParams: computePeerScoreParams({config, ...scoring})} : {}),
  };
}

/**
 * Peer score thresholds shared by the consensus clients (the "gossipsub v1.1 score params"
 * recommendation the spec points to, as Lighthouse and Lodestar use them).
 */
export const GOSSIP_SCORE_THRESHOLDS: PeerScoreThresholds = {
  gossipThreshold: -4000,
  publishThreshold: -8000,
  graylistThreshold: -16000,
  acceptPXThreshold: 100,
  opportunisticGraftThreshold: 5,
};

const MAX_IN_MESH_SCORE = 10;
const MAX_FIRST_MESSAGE_DELIVERIES_SCORE = 40;
export const TOPIC_WEIGHTS = {
  beacon_block: 0.5,
  beacon_aggregate_and_proof: 0.5,
  /** per subnet: the subnets together weigh 1 */
  beacon_attestation: 1 / ATTESTATION_SUBNET_COUNT,
  voluntary_exit: 0.05,
  proposer_slashing: 0.05,
  attester_slashing: 0.05,
} as const;
const MAX_POSITIVE_SCORE =
  (MAX_IN_MESH_SCORE + MAX_FIRST_MESSAGE_DELIVERIES_SCORE) *
  (TOPIC_WEIGHTS.beacon_block +
    TOPIC_WEIGHTS.beacon_aggregate_and_proof +
    TOPIC_WEIGHTS.beacon_attestation * ATTESTATION_SUBNET_COUNT +
    TOPIC_WEIGHTS.voluntary_exit +
    TOPIC_WEIGHTS.proposer_slashing +
    TOPIC_WEIGHTS.attester_slashing);
/**
 * Peers on the loopback interface are processes on this machine (a devnet, or an operator's own
 * nodes side by side), not a Sybil crowd behind one public address: the colocation penalty would
 * give every one of them a negative score once there are more than three, and gossipsub keeps no
 * mesh with peers below zero.
 */
const LOOPBACK_ADDRESSES = new Set(["127.0.0.1", "::1"]);
/** A counter decayed below this counts as zero. */
const DECAY_TO_ZERO = 0.01;
const BEHAVIOUR_PENALTY_THRESHOLD = 6;
const MESH_MESSAGE_DELIVERIES_WINDOW_MS = 2000;

export interface ScoreParamsInput {
  config: BeaconConfig;
  currentSlot: number;
  /** active validators at the current epoch (sets the expected attestation and aggregate rates) */
  activeValidatorCount: number;
  /** the fork boundaries whose topics are subscribed (activeBoundariesAt) */
  boundaries: ForkBoundary[];
}

interface Timing {
  slotMs: number;
  epochMs: number;
  /** the per-tick decay that brings a counter to DECAY_TO_ZERO after `ms` */
  decayOver(ms: number): number;
}

interface TopicScoreInput {
  topicWeight: number;
  /** messages per slot */
  expectedMessageRate: number;
  firstMessageDecayMs: number;
  mesh?: {decaySlots: number; capFactor: number; activationMs: number};
}

/**
 * Peer score parameters (gossipsub v1.1): the block, aggregate, attestation subnet, exit and
 * slashing topics of every given boundary are scored, each counter decaying to zero over a few
 * epochs. Mesh delivery penalties hold only on the current boundary's topics, once the chain has
 * been on that boundary for longer than their decay window: the topics of a past or future
 * boundary carry no messages, and a mesh peer there would be penalized for delivering none (a
 * devnet's nodes banned each other at the first boundary where the penalties began). The
 * aggregate topic has none while every committee member is an aggregator (see
 * aggregatesDuplicate), and no attestation subnet that no committee is assigned to has any.
 */
export function computePeerScoreParams(input: ScoreParamsInput): Partial<PeerScoreParams> {
  const {config, currentSlot, activeValidatorCount} = input;
  if (activeValidatorCount < 1) throw new Error("peer score parameters need at least one active validator");
  const slotMs = config.SECONDS_PER_SLOT * 1000;
  const timing: Timing = {slotMs, epochMs: slotMs * SLOTS_PER_EPOCH, decayOver: (ms) => DECAY_TO_ZERO ** (slotMs / ms)};
  const behaviourPenaltyDecay = timing.decayOver(timing.epochMs * 10);
  const target = decayConvergence(behaviourPenaltyDecay, 10 / SLOTS_PER_EPOCH) - BEHAVIOUR_PENALTY_THRESHOLD;
  const topicScoreCap = MAX_POSITIVE_SCORE * 0.5;

  const committeesPerSlot = computeCommitteeCount(activeValidatorCount);
  const manyBursts = committeesPerSlot >= (2 * ATTESTATION_SUBNET_COUNT) / SLOTS_PER_EPOCH;
  // the boundary whose topics carry the messages now: the last one begun
  const currentEpoch = Math.floor(currentSlot / SLOTS_PER_EPOCH);
  const begun = input.boundaries.filter((b) => b.epoch <= currentEpoch);
  const current = begun.length > 0 ? begun.reduce((a, b) => (b.epoch > a.epoch ? b : a)) : null;
  /** the topic scores of a boundary on which the chain has been for `slotsOnBoundary` slots (null: not the current boundary) */
  const byTypeOn = (slotsOnBoundary: number | null): Partial<Record<GossipType, TopicScoreParams>> => {
    const topic = (inputs: TopicScoreInput) => topicScoreParams(timing, slotsOnBoundary, inputs);
    return {
      voluntary_exit: topic({topicWeight: TOPIC_WEIGHTS.voluntary_exit, expectedMessageRate: 4 / SLOTS_PER_EPOCH, firstMessageDecayMs: timing.epochMs * 100}),
      proposer_slashing: topic({topicWeight: TOPIC_WEIGHTS.proposer_slashing, expectedMessageRate: 1 / 5 / SLOTS_PER_EPOCH, firstMessageDecayMs: timing.epochMs * 100}),
      attester_slashing: topic({topicWeight: TOPIC_WEIGHTS.attester_slashing, expectedMessageRate: 1 / 5 / SLOTS_PER_EPOCH, firstMessageDecayMs: timing.epochMs * 100}),
      beacon_block: topic({
        topicWeight: TOPIC_WEIGHTS.beacon_block,
        expectedMessageRate: 1,
        firstMessageDecayMs: timing.epochMs * 20,
        mesh: {decaySlots: SLOTS_PER_EPOCH * 5, capFactor: 3, activationMs: timing.epochMs},
      }),
      beacon_aggregate_and_proof: topic({
        topicWeight: TOPIC_WEIGHTS.beacon_aggregate_and_proof,
        expectedMessageRate: aggregatorsPerSlot(activeValidatorCount),
        firstMessageDecayMs: timing.epochMs,
        mesh: aggregatesDuplicate(activeValidatorCount) ? undefined : {decaySlots: SLOTS_PER_EPOCH * 2, capFactor: 4, activationMs: timing.epochMs},
      }),
      beacon_attestation: topic({
        topicWeight: TOPIC_WEIGHTS.beacon_attestation,
        expectedMessageRate: activeValidatorCount / ATTESTATION_SUBNET_COUNT / SLOTS_PER_EPOCH,
        firstMessageDecayMs: manyBursts ? timing.epochMs : timing.epochMs * 4,
        mesh: {
          decaySlots: SLOTS_PER_EPOCH * (manyBursts ? 4 : 16),
          capFactor: 16,
          activationMs: manyBursts ? slotMs * (SLOTS_PER_EPOCH / 2 + 1) : timing.epochMs,
        },
      }),
    };
  };
  const others = byTypeOn(null);

  const topics: Record<string, TopicScoreParams> = {};
  for (const boundary of input.boundaries) {
    const byType = boundary === current ? byTypeOn(currentSlot - boundary.epoch * SLOTS_PER_EPOCH) : others;
    for (const [type, params] of Object.entries(byType) as [GossipType, TopicScoreParams][]) {
      if (type === "beacon_attestation") {
        // compute_subnet_for_attestation puts an epoch's committees on subnets 0, 1, ... in turn:
        // with fewer committees an epoch than subnets, the others carry no attestation at all
        for (let subnet = 0; subnet < ATTESTATION_SUBNET_COUNT; subnet++) {
          topics[stringifyTopic(config, {type, subnet, boundary})] = subnet < committeesPerSlot * SLOTS_PER_EPOCH ? params : (others.beacon_attestation ?? params);
        }
      } else {
        topics[stringifyTopic(config, {type, boundary})] = params;
      }
    }
  }

  return {
    topics,
    topicScoreCap,
    appSpecificWeight: 1,
    IPColocationFactorWeight: -topicScoreCap,
    IPColocationFactorThreshold: 3,
    IPColocationFactorWhitelist: LOOPBACK_ADDRESSES,
    behaviourPenaltyWeight: GOSSIP_SCORE_THRESHOLDS.gossipThreshold / (target * target),
    behaviourPenaltyThreshold: BEHAVIOUR_PENALTY_THRESHOLD,
    behaviourPenaltyDecay,
    decayInterval: slotMs,
    decayToZero: DECAY_TO_ZERO,
    retainScore: timing.epochMs * 100,
  };
}

/**
 * The topic scores of `input` in place of those gossipsub scores with now. The expected message
 * rates follow the active validator count and the mesh delivery penalties start once the chain is
 * older than their windows: computed once at start, a node started on a young chain would never
 * hold mesh peers to a delivery rate. Called every epoch, as Lighthouse does.
 */
export function updateTopicScores(score: {params: Pick<PeerScoreParams, "topics">}, input: ScoreParamsInput): void {
  const topics = computePeerScoreParams(input).topics ?? {};
  for (const params of new Set(Object.values(topics))) validateTopicScoreParams(params);
  Object.assign(score.params.topics, topics);
}

function topicScoreParams(timing: Timing, slotsOnBoundary: number | null, input: TopicScoreInput): TopicScoreParams {
  const {topicWeight, expectedMessageRate, firstMessageDecayMs, mesh} = input;
  const timeInMeshCap = 3600 / (timing.slotMs / 1000);
  const firstMessageDeliveriesDecay = timing.decayOver(firstMessageDecayMs);
  const firstMessageDeliveriesCap = decayConvergence(firstMessageDeliveriesDecay, (2 * expectedMessageRate) / GOSSIP_D);
  const params: TopicScoreParams = {
    topicWeight,
    timeInMeshWeight: MAX_IN_MESH_SCORE / timeInMeshCap,
    timeInMeshQuantum: timing.slotMs,
    timeInMeshCap,
    firstMessageDeliveriesWeight: MAX_FIRST_MESSAGE_DELIVERIES_SCORE / firstMessageDeliveriesCap,
    firstMessageDeliveriesDecay,
    firstMessageDeliveriesCap,
    meshMessageDeliveriesWeight: 0,
    meshMessageDeliveriesDecay: 0,
    meshMessageDeliveriesCap: 0,
    meshMessageDeliveriesThreshold: 0,
    meshMessageDeliveriesWindow: 0,
    meshMessageDeliveriesActivation: 0,
    meshFailurePenaltyWeight: 0,
    meshFailurePenaltyDecay: 0,
    invalidMessageDeliveriesWeight: -MAX_POSITIVE_SCORE / topicWeight,
    invalidMessageDeliveriesDecay: timing.decayOver(timing.epochMs * 50),
  };
  if (mesh) {
    const decay = timing.decayOver(mesh.decaySlots * timing.slotMs);
    const threshold = decayConvergence(decay, expectedMessageRate / 50) * decay;
    const weight = -MAX_POSITIVE_SCORE / (topicWeight * threshold * threshold);
    // The deliveries are counted on every boundary, so that the penalty, when it begins, holds a
    // peer to what it delivered over the window just passed: with a cap of 0 before, every mesh
    // peer would start from nothing and fall below zero at once, leaving the meshes empty.
    Object.assign(params, {
      meshMessageDeliveriesDecay: decay,
      meshMessageDeliveriesCap: Math.max(mesh.capFactor * threshold, 2),
      meshMessageDeliveriesWindow: MESH_MESSAGE_DELIVERIES_WINDOW_MS,
      meshMessageDeliveriesActivation: mesh.activationMs,
      meshFailurePenaltyDecay: decay,
    });
    // A boundary the chain is not on, or has been on for less than the window, has not carried
    // enough messages to hold mesh peers to a delivery rate.
    if (slotsOnBoundary !== null && slotsOnBoundary > mesh.decaySlots) {
      Object.assign(params, {meshMessageDeliveriesWeight: weight, meshMessageDeliveriesThreshold: threshold, meshFailurePenaltyWeight: weight});
    }
  }
  return params;
}

/** The value a counter converges to when `rate` is added every tick and it decays by `decay`. */
function decayConvergence(decay: number, rate: number): number {
  return rate / (1 - decay);
}

/**
 * Whether is_aggregator selects every member of every committee (committees under twice
 * TARGET_AGGREGATORS_PER_COMMITTEE: small networks, the minimal preset's devnets). Every member
 * then aggregates the same attestations, and a node whose own validator aggregates for the
 * committee IGNOREs the aggregates its peers send ("a known aggregate covers these attesters").
 * gossipsub credits no mesh delivery for an ignored message, so no delivery rate can be asked of
 * mesh peers on the aggregate topic: with one, the penalty pushed honest peers below zero and
 * out of every mesh.
 */
function aggregatesDuplicate(activeValidatorCount: number): boolean {
  const committeesPerEpoch = computeCommitteeCount(activeValidatorCount) * SLOTS_PER_EPOCH;
  const largestCommittee = Math.ceil(activeValidatorCount / committeesPerEpoch);
  return Math.floor(largestCommittee / TARGET_AGGREGATORS_PER_COMMITTEE) <= 1;
}

/** Expected aggregators per slot: TARGET_AGGREGATORS_PER_COMMITTEE per committee, as is_aggregator selects them. */
function aggregatorsPerSlot(activeValidatorCount: number): number {
  const committeesPerEpoch = computeCommitteeCount(activeValidatorCount) * SLOTS_PER_EPOCH;
  const smallSize = Math.floor(activeValidatorCount / committeesPerEpoch);
  const largeCommittees = activeValidatorCount - smallSize * committeesPerEpoch;
  const smallCommittees = committeesPerEpoch - largeCommittees;
  const perCommittee = (size: number) => size / Math.max(1, Math.floor(size / TARGET_AGGREGATORS_PER_COMMITTEE));
  const perEpoch = Math.floor(perCommittee(smallSize) * smallCommittees) + Math.floor(perCommittee(smallSize + 1) * largeCommittees);
  return Math.max(1, Math.floor(perEpoch / SLOTS_PER_EPOCH));
}
