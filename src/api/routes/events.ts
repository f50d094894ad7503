import {ContainerType, type ValueOf} from "@chainsafe/ssz";
import type {ForkName} from "@lodestar/params";
import {ssz, type Attestation, type LightClientFinalityUpdate, type LightClientOptimisticUpdate} from "@lodestar/types";
import {forkType, list, parseFork, scalar, type SszLike} from "../codecs.ts";
import {badRequest} from "../errors.ts";
import {route, type EventCodec, type EventSource, type NoMeta, type ParamCodec} from "./types.ts";
import {versionedJson} from "./lightClient.ts";

/** The Events tag: the server-sent event stream, and the JSON shape of each topic's events. */

type JsonCodec<T> = Pick<SszLike<T>, "toJson" | "fromJson">;

const HeadEventType = new ContainerType(
  {
    slot: ssz.Slot,
    block: ssz.Root,
    state: ssz.Root,
    epochTransition: ssz.Boolean,
    previousDutyDependentRoot: ssz.Root,
    currentDutyDependentRoot: ssz.Root,
    executionOptimistic: ssz.Boolean,
  },
  {jsonCase: "eth2"}
);
const BlockEventType = new ContainerType({slot: ssz.Slot, block: ssz.Root, executionOptimistic: ssz.Boolean}, {jsonCase: "eth2"});
const BlockGossipEventType = new ContainerType({slot: ssz.Slot, block: ssz.Root}, {jsonCase: "eth2"});
const FinalizedCheckpointEventType = new ContainerType({block: ssz.Root, state: ssz.Root, epoch: ssz.Epoch, executionOptimistic: ssz.Boolean}, {jsonCase: "eth2"});
const ChainReorgEventType = new ContainerType(
  {
    slot: ssz.Slot,
    depth: ssz.UintNum64,
    oldHeadBlock: ssz.Root,
    newHeadBlock: ssz.Root,
    oldHeadState: ssz.Root,
    newHeadState: ssz.Root,
    epoch: ssz.Epoch,
    executionOptimistic: ssz.Boolean,
  },
  {jsonCase: "eth2"}
);

const BlobSidecarEventType = new ContainerType(
  {blockRoot: ssz.Root, index: ssz.BlobIndex, slot: ssz.Slot, kzgCommitment: ssz.deneb.KZGCommitment, versionedHash: ssz.Bytes32},
  {jsonCase: "eth2"}
);
const DataColumnSidecarEventType = new ContainerType(
  {blockRoot: ssz.Root, index: ssz.ColumnIndex, slot: ssz.Slot, kzgCommitments: ssz.deneb.BlobKzgCommitments},
  {jsonCase: "eth2"}
);

const isObject = (json: unknown): json is Record<string, unknown> => typeof json === "object" && json !== null;

/** An attestation of either format: electra's carries `committee_bits`. */
const anyAttestation: JsonCodec<Attestation> = {
  toJson: (att) => ("committeeBits" in att ? ssz.electra.Attestation.toJson(att) : ssz.phase0.Attestation.toJson(att)),
  fromJson: (json) => (isObject(json) && "committee_bits" in json ? ssz.electra.Attestation.fromJson(json) : ssz.phase0.Attestation.fromJson(json)),
};

type PayloadAttributesV3 = ValueOf<typeof ssz.deneb.PayloadAttributes>;
/** The event's data at any fork: `withdrawals` from capella on, `parent_beacon_block_root` from deneb on. */
export type SsePayloadAttributes = Omit<ValueOf<typeof ssz.deneb.SSEPayloadAttributes>, "payloadAttributes"> & {
  payloadAttributes: Omit<PayloadAttributesV3, "withdrawals" | "parentBeaconBlockRoot"> & Partial<Pick<PayloadAttributesV3, "withdrawals" | "parentBeaconBlockRoot">>;
};
export interface PayloadAttributesEventData {
  version: ForkName;
  data: SsePayloadAttributes;
}
/** `{version, data}`, the data in the shape of the version's `PayloadAttributesV<N>`. */
const versionedPayloadAttributes: JsonCodec<PayloadAttributesEventData> = {
  toJson: ({version, data}) => ({version, data: forkType<SsePayloadAttributes>(version, "SSEPayloadAttributes").toJson(data)}),
  fromJson(json) {
    const version = isObject(json) && typeof json.version === "string" ? parseFork(json.version) : undefined;
    if (!version || !isObject(json)) throw new Error("payload_attributes: missing or unknown version");
    return {version, data: forkType<SsePayloadAttributes>(version, "SSEPayloadAttributes").fromJson(json.data)};
  },
};

/** Each topic's event data, in the spec's JSON shape. */
const eventData = {
  head: HeadEventType,
  block: BlockEventType,
  block_gossip: BlockGossipEventType,
  attestation: anyAttestation,
  single_attestation: ssz.electra.SingleAttestation,
  voluntary_exit: ssz.phase0.SignedVoluntaryExit,
  proposer_slashing: ssz.phase0.ProposerSlashing,
  // electra's limits are the larger: its type reads and writes the attester slashings of every fork
  attester_slashing: ssz.electra.AttesterSlashing,
  bls_to_execution_change: ssz.capella.SignedBLSToExecutionChange,
  finalized_checkpoint: FinalizedCheckpointEventType,
  chain_reorg: ChainReorgEventType,
  contribution_and_proof: ssz.altair.SignedContributionAndProof,
  payload_attributes: versionedPayloadAttributes,
  light_client_finality_update: versionedJson<LightClientFinalityUpdate>("LightClientFinalityUpdate"),
  light_client_optimistic_update: versionedJson<LightClientOptimisticUpdate>("LightClientOptimisticUpdate"),
  blob_sidecar: BlobSidecarEventType,
  data_column_sidecar: DataColumnSidecarEventType,
};

export type EventTopic = keyof typeof eventData;
export type EventData<T extends EventTopic> = ReturnType<(typeof eventData)[T]["fromJson"]>;
/** One event of the stream: its topic and its data. */
export type BeaconEvent = {[T in EventTopic]: {topic: T; data: EventData<T>}}[EventTopic];

const isTopic = (s: string): s is EventTopic => Object.hasOwn(eventData, s);

export const beaconEventCodec: EventCodec<BeaconEvent> = {
  name: (event) => event.topic,
  toJson: (event) => (eventData[event.topic] as JsonCodec<unknown>).toJson(event.data),
  fromJson(name, json) {
    if (!isTopic(name)) throw new Error(`Unknown event: ${name}`);
    return {topic: name, data: eventData[name].fromJson(json)} as BeaconEvent;
  },
};

const topic = list(scalar<EventTopic>("topic", (s) => (isTopic(s) ? s : undefined), (t) => t), {unique: true});
/** At least one topic, each known, none twice (the spec's `uniqueItems`). */
const topics: ParamCodec<EventTopic[]> = {
  parse(raw, name) {
    const values = topic.parse(raw, name);
    if (values.length === 0) throw badRequest(`Missing required parameter ${name}`);
    return values;
  },
  format: (values) => topic.format(values),
};

export const eventRoutes = {
  /** The client reads the events as an async iterable; stopping the iteration closes the stream. */
  eventstream: route<{topics: EventTopic[]}, AsyncIterable<BeaconEvent>, NoMeta, EventSource<BeaconEvent>>({
    method: "GET",
    path: "/eth/v1/events",
    version: 1,
    tag: "Events",
    args: {topics: {in: "query", name: "topics", codec: topics}},
    response: {kind: "events", event: beaconEventCodec},
  }),
};
