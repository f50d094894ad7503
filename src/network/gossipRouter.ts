import type {BeaconConfig} from "@lodestar/config";
import {SLOTS_PER_EPOCH, SYNC_COMMITTEE_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {computeEpochAtSlot, type CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {TopicValidatorResult, type GossipsubMessage} from "@libp2p/gossipsub";
import type {OutgoingGossip} from "./networkContext.ts";
import {getLogger} from "../log.ts";
import {activeBoundariesAt, gossipSszType, parseTopic, stringifyTopic, subnetCount, topicsForBoundary, type GossipType, type ParsedTopic} from "./gossip/topics.ts";
import type {GossipSub} from "./libp2p.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import {computeSubnetForAttestation} from "./subnets.ts";
import {maxValidationsInFlight} from "./gossip/validationLimits.ts";

const log = getLogger("network");

export interface GossipValidationResult {
  result: "ACCEPT" | "IGNORE" | "REJECT";
  reason: string;
  /** a block whose parent is unknown: worth fetching its ancestors */
  parentUnknown?: boolean;
}

export type GossipValidator = (topic: ParsedTopic, message: unknown, from: string) => Promise<GossipValidationResult>;

export interface GossipRouterDeps {
  gossipsub: GossipSub;
  config: BeaconConfig;
  currentEpoch(): number;
  validators: Partial<Record<GossipType, GossipValidator>>;
  /** the head state advanced to `epoch` (sync committee positions for publishing) */
  stateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks>;
  /** the committees per slot of an attestation's target checkpoint (`root` a 0x hex block root) */
  committeesPerSlot(target: {epoch: number; root: string}): Promise<number>;
  onParentUnknown(block: SignedBeaconBlock, from: string): void;
  /** a message failed a REJECT rule (or did not decode) */
  onRejected(from: string, reason: string): void;
  /** a block or attestation of `slot` from `from` decoded, as it arrived: the clock's watch times it, and counts it once it is not rejected */
  onArrival?(slot: number, from: string): () => void;
  metrics?: Pick<NodeMetrics, "gossipReceived" | "gossipPublished"> & Partial<Pick<NodeMetrics, "gossipValidation" | "gossipOverloaded">>;
  /** the clock validations are timed by, in ms (performance.now by default) */
  now?: () => number;
}

/**
 * The node's gossip: which topics it joins (each active fork boundary's global topics and the
 * chosen subnets), each incoming message decoded, validated and reported to gossipsub
 * (ACCEPT forwards it, IGNORE drops it, REJECT also scores its sender down), and what the
 * node publishes, on the topic and subnet the spec gives it.
 */
export class GossipRouter {
  private readonly deps: GossipRouterDeps;
  private attestationSubnets: number[] = [];
  private syncCommitteeSubnets: number[] = [];
  private dataColumnSubnets: number[] = [];
  private subscribed = new Set<string>();
  /** topics are joined between start and stop only (gossipsub refuses before it starts) */
  private running = false;
  /** false while the node is far behind the head: see `shouldJoinGossip` */
  private joined = true;
  /** validations under way, by message type */
  private readonly inFlight = new Map<GossipType, number>();
  private readonly onMessage = (e: CustomEvent<GossipsubMessage>) => void this.validate(e.detail);

  constructor(deps: GossipRouterDeps) {
    this.deps = deps;
  }

  start(): void {
    this.deps.gossipsub.addEventListener("gossipsub:message", this.onMessage);
    this.running = true;
    this.updateSubscriptions();
  }

  stop(): void {
    this.deps.gossipsub.removeEventListener("gossipsub:message", this.onMessage);
    this.running = false;
    for (const topic of this.subscribed) this.deps.gossipsub.unsubscribe(topic);
    this.subscribed.clear();
  }

  /** The subnets to join (long-lived, validators' subscriptions, or all of them). */
  setSubnets(attestation: number[], syncCommittee: number[]): void {
    this.attestationSubnets = attestation;
    this.syncCommitteeSubnets = syncCommittee;
    this.updateSubscriptions();
  }

  /** The data column subnets of the columns the node samples (fulu). */
  setDataColumnSubnets(subnets: number[]): void {
    this.dataColumnSubnets = subnets;
    this.updateSubscriptions();
  }

  /** Joins every topic (a synced node) or none (a node far behind the head). */
  setJoined(joined: boolean): void {
    if (joined === this.joined) return;
    this.joined = joined;
    log.info({joined}, joined ? "joined gossip: the head is near" : "left gossip until the node has synced");
    this.updateSubscriptions();
  }

  isJoined(): boolean {
    return this.joined;
  }

  /** Joins and leaves topics as fork boundaries come and go (call at each epoch). */
  updateSubscriptions(): void {
    if (!this.running) return;
    const {config, gossipsub} = this.deps;
    const wanted = new Set<string>();
    const boundaries = this.joined ? activeBoundariesAt(config, this.deps.currentEpoch()) : [];
    for (const boundary of boundaries) {
      const topics = topicsForBoundary(config, boundary, {
        attestationSubnets: this.attestationSubnets,
        syncCommitteeSubnets: this.syncCommitteeSubnets,
        dataColumnSubnets: this.dataColumnSubnets,
      });
      for (const topic of topics) wanted.add(stringifyTopic(config, topic));
    }
    for (const topic of wanted) if (!this.subscribed.has(topic)) gossipsub.subscribe(topic);
    for (const topic of this.subscribed) if (!wanted.has(topic)) gossipsub.unsubscribe(topic);
    this.subscribed = wanted;
  }

  subscriptions(): string[] {
    return [...this.subscribed];
  }

  /** Publishes an object the node accepted, on its topic (and subnets) for the object's slot. */
  async publish(message: OutgoingGossip): Promise<void> {
    const {config} = this.deps;
    const slot = slotOf(message);
    const boundary = config.getForkBoundaryAtEpoch(slot === null ? this.deps.currentEpoch() : computeEpochAtSlot(slot));
    const bytes = gossipSszType(message.type, boundary.fork).serialize(message.data as never);
    for (const subnet of await this.subnetsOf(message)) {
      const topic = stringifyTopic(config, {type: message.type, subnet, boundary});
      try {
        await this.deps.gossipsub.publish(topic, bytes);
        this.deps.metrics?.gossipPublished.inc({type: message.type});
      } catch (e) {
        // no peer on the topic yet is normal on a small network
        log.debug({gossipTopic: topic, err: (e as Error).message}, "gossip publish failed");
      }
    }
  }

  private async subnetsOf(message: OutgoingGossip): Promise<Array<number | undefined>> {
    if (message.type === "beacon_attestation") {
      const att = message.data;
      const slot = att.data.slot;
      const committeeIndex = "committeeIndex" in att ? att.committeeIndex : att.data.index;
      const committeesPerSlot = await this.deps.committeesPerSlot({epoch: att.data.target.epoch, root: toRootHex(att.data.target.root)});
      return [computeSubnetForAttestation(committeesPerSlot, slot, committeeIndex)];
    }
    if (message.type === "sync_committee") {
      const state = await this.deps.stateAtEpoch(computeEpochAtSlot(message.data.slot));
      const positions = state.epochCtx.getIndexedSyncCommittee(message.data.slot).validatorIndexMap.get(message.data.validatorIndex) ?? [];
      return [...new Set(positions.map((p) => Math.floor(p / (SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT))))];
    }
    if (message.type === "blob_sidecar") {
      const fork = this.deps.config.getForkName(message.data.signedBlockHeader.message.slot);
      return [message.data.index % subnetCount(this.deps.config, "blob_sidecar", fork)];
    }
    if (message.type === "data_column_sidecar") return [message.data.index % this.deps.config.DATA_COLUMN_SIDECAR_SUBNET_COUNT];
    return [undefined];
  }

  private async validate({msgId, msg, propagationSource}: GossipsubMessage): Promise<void> {
    const now = this.deps.now ?? (() => performance.now());
    const arrived = now();
    const from = propagationSource.toString();
    const topic = parseTopic(this.deps.config, msg.topic);
    const metrics = this.deps.metrics;
    const report = (result: TopicValidatorResult) => {
      // the topic's type (a fixed set) and gossipsub's result names (accept, ignore, reject) keep the labels bounded
      metrics?.gossipReceived.inc({type: topic?.type ?? "unknown", result});
      this.deps.gossipsub.reportMessageValidationResult(msgId, from, result);
    };
    const validator = topic && this.deps.validators[topic.type];
    if (!topic || !validator) return report(TopicValidatorResult.Reject);
    const inFlight = this.inFlight.get(topic.type) ?? 0;
    if (inFlight >= maxValidationsInFlight(topic.type)) {
      metrics?.gossipOverloaded?.inc({type: topic.type});
      return report(TopicValidatorResult.Ignore);
    }
    const reportValidated = (result: TopicValidatorResult) => {
      metrics?.gossipValidation?.observe({type: topic.type}, (now() - arrived) / 1000);
      report(result);
    };
    this.inFlight.set(topic.type, inFlight + 1);
    try {
      let object: unknown;
      try {
        object = gossipSszType(topic.type, topic.boundary.fork).deserialize(msg.data);
      } catch (e) {
        log.debug({gossipTopic: msg.topic, from, err: (e as Error).message}, "gossip message does not decode");
        this.deps.onRejected(from, `${topic.type} does not decode`);
        return reportValidated(TopicValidatorResult.Reject);
      }
      // timed as it arrived, counted unless it turns out invalid
      const arrival =
        topic.type === "beacon_block"
          ? this.deps.onArrival?.((object as SignedBeaconBlock).message.slot, from)
          : topic.type === "beacon_attestation"
            ? this.deps.onArrival?.((object as {data: {slot: number}}).data.slot, from)
            : undefined;
      const outcome = await validator(topic, object, from);
      if (outcome.result !== "REJECT") arrival?.();
      if (outcome.parentUnknown && topic.type === "beacon_block") this.deps.onParentUnknown(object as SignedBeaconBlock, from);
      if (outcome.result !== "ACCEPT") log.debug({type: topic.type, from, result: outcome.result, reason: outcome.reason}, "gossip message not accepted");
      if (outcome.result === "REJECT") this.deps.onRejected(from, `${topic.type}: ${outcome.reason}`);
      reportValidated(outcome.result === "ACCEPT" ? TopicValidatorResult.Accept : outcome.result === "IGNORE" ? TopicValidatorResult.Ignore : TopicValidatorResult.Reject);
    } catch (e) {
      log.warn({gossipTopic: msg.topic, from, err: (e as Error).message}, "gossip validation failed");
      reportValidated(TopicValidatorResult.Ignore);
    } finally {
      this.inFlight.set(topic.type, (this.inFlight.get(topic.type) ?? 1) - 1);
    }
  }
}

function slotOf(message: OutgoingGossip): number | null {
  switch (message.type) {
    case "beacon_block":
      return message.data.message.slot;
    case "beacon_attestation":
      return message.data.data.slot;
    case "beacon_aggregate_and_proof":
      return message.data.message.aggregate.data.slot;
    case "sync_committee":
      return message.data.slot;
    case "sync_committee_contribution_and_proof":
      return message.data.message.contribution.slot;
    case "blob_sidecar":
    case "data_column_sidecar":
      return message.data.signedBlockHeader.message.slot;
    // the fork digest context of light-client updates is the attested header's epoch
    case "light_client_finality_update":
    case "light_client_optimistic_update":
      return message.data.attestedHeader.beacon.slot;
    default:
      return null;
  }
}


/**
 * Whether the node takes part in gossip. A node far behind the head would IGNORE what its mesh
 * peers deliver (unknown parents, old slots), and gossipsub's mesh-delivery scores would then
 * push those peers down until it stops listening to them. So, as Lighthouse and Lodestar do, the
 * node joins the topics once synced (range sync idle, head within an epoch of the clock) and
 * leaves only when it falls more than two epochs behind, so a few empty slots on the network do
 * not make every node leave.
 */
export function shouldJoinGossip(joined: boolean, slotsBehind: number, rangeSyncing: boolean): boolean {
  if (slotsBehind > 2 * SLOTS_PER_EPOCH) return false;
  if (slotsBehind <= SLOTS_PER_EPOCH && !rangeSyncing) return true;
  return joined;
}
