import type {BeaconConfig, ForkBoundary} from "@lodestar/config";
import {ATTESTATION_SUBNET_COUNT, ForkName, ForkSeq, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {ssz, sszTypesFor} from "@lodestar/types";

/**
 * Gossip topics of the consensus p2p spec (p2p-interface.md, phase0 to fulu):
 * `/eth2/<fork digest, lowercase hex without 0x>/<name>/ssz_snappy`.
 */

export const GossipType = {
  beacon_block: "beacon_block",
  beacon_aggregate_and_proof: "beacon_aggregate_and_proof",
  beacon_attestation: "beacon_attestation",
  voluntary_exit: "voluntary_exit",
  proposer_slashing: "proposer_slashing",
  attester_slashing: "attester_slashing",
  sync_committee_contribution_and_proof: "sync_committee_contribution_and_proof",
  sync_committee: "sync_committee",
  bls_to_execution_change: "bls_to_execution_change",
  blob_sidecar: "blob_sidecar",
  data_column_sidecar: "data_column_sidecar",
  light_client_finality_update: "light_client_finality_update",
  light_client_optimistic_update: "light_client_optimistic_update",
} as const;
export type GossipType = (typeof GossipType)[keyof typeof GossipType];

export const GOSSIP_ENCODING = "ssz_snappy";

/** Topics whose name carries a subnet: `<type>_<subnet>`. */
export type SubnetGossipType = "beacon_attestation" | "sync_committee" | "blob_sidecar" | "data_column_sidecar";
const SUBNET_TYPES = new Set<GossipType>(["beacon_attestation", "sync_committee", "blob_sidecar", "data_column_sidecar"]);

export function isSubnetType(type: GossipType): type is SubnetGossipType {
  return SUBNET_TYPES.has(type);
}

/** A topic of the node's fork schedule. `subnet` is set exactly for the subnet topics. */
export interface GossipTopic {
  type: GossipType;
  subnet?: number;
  boundary: ForkBoundary;
}

export interface ParsedTopic extends GossipTopic {
  /** lowercase hex, no 0x */
  forkDigest: string;
}

/** The first and (exclusive) last fork of each topic; blob sidecars end at fulu. */
const TOPIC_FORKS: Record<GossipType, {from: ForkSeq; until?: ForkSeq}> = {
  beacon_block: {from: ForkSeq.phase0},
  beacon_aggregate_and_proof: {from: ForkSeq.phase0},
  beacon_attestation: {from: ForkSeq.phase0},
  voluntary_exit: {from: ForkSeq.phase0},
  proposer_slashing: {from: ForkSeq.phase0},
  attester_slashing: {from: ForkSeq.phase0},
  sync_committee_contribution_and_proof: {from: ForkSeq.altair},
  sync_committee: {from: ForkSeq.altair},
  bls_to_execution_change: {from: ForkSeq.capella},
  blob_sidecar: {from: ForkSeq.deneb, until: ForkSeq.fulu},
  data_column_sidecar: {from: ForkSeq.fulu},
  light_client_finality_update: {from: ForkSeq.altair},
  light_client_optimistic_update: {from: ForkSeq.altair},
};

export function topicExistsAtFork(type: GossipType, fork: ForkName): boolean {
  const {from, until} = TOPIC_FORKS[type];
  const seq = ForkSeq[fork];
  return seq >= from && (until === undefined || seq < until);
}

/** How many subnets a subnet topic has at `fork` (the blob subnet count changes at electra). */
export function subnetCount(config: BeaconConfig, type: SubnetGossipType, fork: ForkName): number {
  switch (type) {
    case "beacon_attestation":
      return ATTESTATION_SUBNET_COUNT;
    case "sync_committee":
      return SYNC_COMMITTEE_SUBNET_COUNT;
    case "blob_sidecar":
      return ForkSeq[fork] >= ForkSeq.electra ? config.BLOB_SIDECAR_SUBNET_COUNT_ELECTRA : config.BLOB_SIDECAR_SUBNET_COUNT;
    case "data_column_sidecar":
      return config.DATA_COLUMN_SIDECAR_SUBNET_COUNT;
  }
}

export function topicName(topic: Pick<GossipTopic, "type" | "subnet">): string {
  if (isSubnetType(topic.type)) {
    if (topic.subnet === undefined) throw new Error(`gossip topic ${topic.type} needs a subnet`);
    return `${topic.type}_${topic.subnet}`;
  }
  return topic.type;
}

export function forkDigestHex(config: BeaconConfig, boundary: ForkBoundary): string {
  return Buffer.from(config.forkBoundary2ForkDigest(boundary)).toString("hex");
}

export function stringifyTopic(config: BeaconConfig, topic: GossipTopic): string {
  return `/eth2/${forkDigestHex(config, topic.boundary)}/${topicName(topic)}/${GOSSIP_ENCODING}`;
}

const TOPIC_RE = /^\/eth2\/([0-9a-f]{8})\/([a-z0-9_]+)\/([a-z_]+)$/;
const SUBNET_NAME_RE = /^([a-z_]+)_(0|[1-9][0-9]{0,5})$/;
const GOSSIP_TYPES = new Set<string>(Object.values(GossipType));

function parseName(name: string): Pick<GossipTopic, "type" | "subnet"> | null {
  if (GOSSIP_TYPES.has(name)) {
    const type = name as GossipType;
    return isSubnetType(type) ? null : {type};
  }
  const match = SUBNET_NAME_RE.exec(name);
  if (!match || !GOSSIP_TYPES.has(match[1])) return null;
  const type = match[1] as GossipType;
  return isSubnetType(type) ? {type, subnet: Number(match[2])} : null;
}

/**
 * The topic, or null when the digest is not one of the node's fork boundaries, the name is not a
 * topic of that boundary's fork, the subnet is out of range or the encoding is not ssz_snappy.
 */
export function parseTopic(config: BeaconConfig, topicStr: string): ParsedTopic | null {
  const match = TOPIC_RE.exec(topicStr);
  if (!match || match[3] !== GOSSIP_ENCODING) return null;
  const forkDigest = match[1];
  const boundary = config.forkDigest2ForkBoundaryOption(forkDigest);
  const name = parseName(match[2]);
  if (!boundary || !name || !topicExistsAtFork(name.type, boundary.fork)) return null;
  if (name.subnet !== undefined && name.subnet >= subnetCount(config, name.type as SubnetGossipType, boundary.fork)) return null;
  return {...name, boundary, forkDigest};
}

export interface SubnetSelection {
  attestationSubnets?: Iterable<number>;
  syncCommitteeSubnets?: Iterable<number>;
  dataColumnSubnets?: Iterable<number>;
}

/**
 * The topics to subscribe to at a fork boundary: the global topics of its fork, every blob
 * subnet (deneb, electra: every node needs every blob), and the attestation, sync committee and
 * data column subnets the caller chose, and the light-client topics (from altair on).
 */
export function topicsForBoundary(config: BeaconConfig, boundary: ForkBoundary, subnets: SubnetSelection = {}): GossipTopic[] {
  const {fork} = boundary;
  const topics: GossipTopic[] = [];
  const global: GossipType[] = [
    "beacon_block",
    "beacon_aggregate_and_proof",
    "voluntary_exit",
    "proposer_slashing",
    "attester_slashing",
    "sync_committee_contribution_and_proof",
    "bls_to_execution_change",
    "light_client_finality_update",
    "light_client_optimistic_update",
  ];
  for (const type of global) if (topicExistsAtFork(type, fork)) topics.push({type, boundary});
  const addSubnets = (type: SubnetGossipType, chosen: Iterable<number>) => {
    if (!topicExistsAtFork(type, fork)) return;
    const count = subnetCount(config, type, fork);
    for (const subnet of new Set(chosen)) {
      if (!Number.isInteger(subnet) || subnet < 0 || subnet >= count) throw new Error(`${type} subnet ${subnet} is out of range (${count})`);
      topics.push({type, subnet, boundary});
    }
  };
  addSubnets("blob_sidecar", Array.from({length: topicExistsAtFork("blob_sidecar", fork) ? subnetCount(config, "blob_sidecar", fork) : 0}, (_, i) => i));
  addSubnets("beacon_attestation", subnets.attestationSubnets ?? []);
  addSubnets("sync_committee", subnets.syncCommitteeSubnets ?? []);
  addSubnets("data_column_sidecar", subnets.dataColumnSubnets ?? []);
  return topics;
}

/** Epochs before a fork boundary its topics are subscribed, and after it the old ones are kept. */
export const FORK_EPOCH_LOOKAHEAD = 2;

/**
 * The fork boundaries whose topics should be subscribed at `epoch` (altair p2p-interface.md,
 * "Transitioning the gossip"): the current one; the next one from FORK_EPOCH_LOOKAHEAD epochs
 * before it starts; the previous one until FORK_EPOCH_LOOKAHEAD epochs after the current one
 * started. Boundaries sharing an epoch count as the last of them. Ascending by epoch.
 */
export function activeBoundariesAt(config: BeaconConfig, epoch: number): ForkBoundary[] {
  const boundaries = distinctBoundaries(config);
  const active: ForkBoundary[] = [];
  for (let i = 0; i < boundaries.length; i++) {
    const start = boundaries[i].epoch;
    const end = i + 1 < boundaries.length ? boundaries[i + 1].epoch : Infinity;
    if (epoch >= start - FORK_EPOCH_LOOKAHEAD && epoch < end + FORK_EPOCH_LOOKAHEAD) active.push(boundaries[i]);
  }
  return active;
}

/** The scheduled boundaries with a fork digest of their own (the last of several at one epoch). */
function distinctBoundaries(config: BeaconConfig): ForkBoundary[] {
  const all = config.forkBoundariesAscendingEpochOrder;
  return all.filter((b, i) => i + 1 >= all.length || all[i + 1].epoch !== b.epoch);
}

/** Anything with the SSZ type methods the gossip layer uses. */
export interface GossipSszType {
  serialize(value: never): Uint8Array;
  deserialize(data: Uint8Array): unknown;
  readonly minSize: number;
  readonly maxSize: number;
}

/** The SSZ type of a topic's messages at `fork`. Throws for a topic the fork does not have. */
export function gossipSszType(type: GossipType, fork: ForkName): GossipSszType {
  if (!topicExistsAtFork(type, fork)) throw new Error(`gossip topic ${type} does not exist at ${fork}`);
  const seq = ForkSeq[fork];
  const postElectra = seq >= ForkSeq.electra;
  switch (type) {
    case "beacon_block":
      return sszTypesFor(fork).SignedBeaconBlock;
    case "beacon_aggregate_and_proof":
      return postElectra ? ssz.electra.SignedAggregateAndProof : ssz.phase0.SignedAggregateAndProof;
    case "beacon_attestation":
      return postElectra ? ssz.electra.SingleAttestation : ssz.phase0.Attestation;
    case "voluntary_exit":
      return ssz.phase0.SignedVoluntaryExit;
    case "proposer_slashing":
      return ssz.phase0.ProposerSlashing;
    case "attester_slashing":
      return postElectra ? ssz.electra.AttesterSlashing : ssz.phase0.AttesterSlashing;
    case "sync_committee_contribution_and_proof":
      return ssz.altair.SignedContributionAndProof;
    case "sync_committee":
      return ssz.altair.SyncCommitteeMessage;
    case "bls_to_execution_change":
      return ssz.capella.SignedBLSToExecutionChange;
    case "blob_sidecar":
      return ssz.deneb.BlobSidecar;
    case "data_column_sidecar":
      return ssz.fulu.DataColumnSidecar;
    case "light_client_finality_update":
      return sszTypesFor(fork as ForkName.altair).LightClientFinalityUpdate;
    case "light_client_optimistic_update":
      return sszTypesFor(fork as ForkName.altair).LightClientOptimisticUpdate;
  }
}
