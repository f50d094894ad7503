import {BooleanType, ContainerType, type ValueOf} from "@chainsafe/ssz";
import {ssz, stringType, type BeaconState, type fulu, type phase0} from "@lodestar/types";
import {
  type BlockId,
  type ChainMeta,
  type StateId,
  blockId,
  chainMeta,
  forkType,
  list,
  listData,
  sszData,
  stateId,
  uint,
  versionedChainMeta,
  type VersionedChainMeta,
} from "../codecs.ts";
import {type SszView, viewData} from "../streaming.ts";
import {route, type DataCodec, type NoArgs, type NoMeta} from "./types.ts";

export const ChainHeadType = new ContainerType({root: ssz.Root, slot: ssz.Slot, executionOptimistic: new BooleanType()}, {jsonCase: "eth2"});
export type ChainHead = ValueOf<typeof ChainHeadType>;
const ChainHeadV1Type = new ContainerType({root: ssz.Root, slot: ssz.Slot}, {jsonCase: "eth2"});

/** A fork choice node (the spec's `Node`, weight in Gwei) and the client's own `extra_data` about it. */
export const ForkChoiceNodeType = new ContainerType(
  {
    slot: ssz.Slot,
    blockRoot: ssz.Root,
    parentRoot: ssz.Root,
    justifiedEpoch: ssz.Epoch,
    finalizedEpoch: ssz.Epoch,
    weight: ssz.UintBn64,
    validity: stringType,
    executionBlockHash: ssz.Root,
  },
  {jsonCase: "eth2"}
);
export type ForkChoiceNode = ValueOf<typeof ForkChoiceNodeType> & {extraData: Record<string, string>};

export interface ForkChoiceDump {
  justifiedCheckpoint: phase0.Checkpoint;
  finalizedCheckpoint: phase0.Checkpoint;
  nodes: ForkChoiceNode[];
}

type ForkChoiceJson = {justified_checkpoint: unknown; finalized_checkpoint: unknown; fork_choice_nodes: Array<Record<string, unknown>>};

/** getDebugForkChoice's body is the dump itself, not `{data}` (the route is `unwrapped`). */
const forkChoiceData: DataCodec<ForkChoiceDump, NoMeta> = {
  toJson: (dump) => ({
    justified_checkpoint: ssz.phase0.Checkpoint.toJson(dump.justifiedCheckpoint),
    finalized_checkpoint: ssz.phase0.Checkpoint.toJson(dump.finalizedCheckpoint),
    fork_choice_nodes: dump.nodes.map((node) => ({...(ForkChoiceNodeType.toJson(node) as object), extra_data: node.extraData})),
  }),
  fromJson(json) {
    const body = json as ForkChoiceJson;
    if (!Array.isArray(body?.fork_choice_nodes)) throw new Error("fork_choice_nodes must be an array");
    return {
      justifiedCheckpoint: ssz.phase0.Checkpoint.fromJson(body.justified_checkpoint),
      finalizedCheckpoint: ssz.phase0.Checkpoint.fromJson(body.finalized_checkpoint),
      nodes: body.fork_choice_nodes.map((node) => ({...ForkChoiceNodeType.fromJson(node), extraData: (node.extra_data ?? {}) as Record<string, string>})),
    };
  },
};

/** Routes of the Debug tag. */
export const debugRoutes = {
  /** the handler gives the state's tree view: JSON is written field by field, SSZ is the view's serialization */
  getStateV2: route<{stateId: StateId}, BeaconState, VersionedChainMeta, SszView>({
    method: "GET",
    path: "/eth/v2/debug/beacon/states/{state_id}",
    version: 2,
    tag: "Debug",
    args: {stateId: {in: "path", name: "state_id", codec: stateId}},
    response: {kind: "data", data: viewData((meta) => forkType(meta.version, "BeaconState"), {ssz: true}), meta: versionedChainMeta},
  }),
  /** Removed from the standard API (phase0 states only); kept for the product spec's clients. */
  getState: route<{stateId: StateId}, phase0.BeaconState, ChainMeta>({
    method: "GET",
    path: "/eth/v1/debug/beacon/states/{state_id}",
    version: 1,
    tag: "Debug",
    args: {stateId: {in: "path", name: "state_id", codec: stateId}},
    response: {kind: "data", data: sszData(() => ssz.phase0.BeaconState, {ssz: true}), meta: chainMeta},
  }),
  getDebugChainHeadsV2: route<NoArgs, ChainHead[]>({
    method: "GET",
    path: "/eth/v2/debug/beacon/heads",
    version: 2,
    tag: "Debug",
    args: {},
    response: {kind: "data", data: listData(ChainHeadType), meta: {}},
  }),
  /** Removed from the standard API; the v2 form without `execution_optimistic`. */
  getDebugChainHeads: route<NoArgs, ValueOf<typeof ChainHeadV1Type>[]>({
    method: "GET",
    path: "/eth/v1/debug/beacon/heads",
    version: 1,
    tag: "Debug",
    args: {},
    response: {kind: "data", data: listData(ChainHeadV1Type), meta: {}},
  }),
  getDebugForkChoice: route<NoArgs, ForkChoiceDump>({
    method: "GET",
    path: "/eth/v1/debug/fork_choice",
    version: 1,
    tag: "Debug",
    args: {},
    response: {kind: "data", data: forkChoiceData, meta: {}, unwrapped: true},
  }),
  getDebugDataColumnSidecars: route<{blockId: BlockId; indices?: number[]}, fulu.DataColumnSidecars, VersionedChainMeta>({
    method: "GET",
    path: "/eth/v1/debug/beacon/data_column_sidecars/{block_id}",
    version: 1,
    tag: "Debug",
    args: {blockId: {in: "path", name: "block_id", codec: blockId}, indices: {in: "query", name: "indices", codec: list(uint, {unique: true})}},
    response: {kind: "data", data: sszData(() => ssz.fulu.DataColumnSidecars, {ssz: true}), meta: versionedChainMeta},
  }),
};
