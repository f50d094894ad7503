import {EFFECTIVE_BALANCE_INCREMENT, ForkName, NUMBER_OF_COLUMNS} from "@lodestar/params";
import type {phase0} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {ProtoNodeView} from "../../forkchoice/index.ts";
import type {ChainHead, ForkChoiceNode, debugRoutes} from "../routes/debug.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";
import {useNewerRoute} from "./newerRoute.ts";
import {resolveState} from "./resolve.ts";
import {dataColumnSidecars} from "./sidecars.ts";

/** Handlers of the Debug tag: states, fork choice, data column sidecars. */

const ZERO_HASH = new Uint8Array(32);

/** The leaves of fork choice, viable or not. */
function chainHeads(chain: IBeaconChain): ChainHead[] {
  const validity = new Map(chain.forkChoice.getAllNodes().map((node) => [node.blockRoot, node.validity]));
  return chain.forkChoice.getHeads().map((head) => ({
    root: fromHex(head.blockRoot),
    slot: head.slot,
    executionOptimistic: validity.get(head.blockRoot) === "optimistic",
  }));
}

function forkChoiceNode(node: ProtoNodeView): ForkChoiceNode {
  return {
    slot: node.slot,
    blockRoot: fromHex(node.blockRoot),
    parentRoot: fromHex(node.parentRoot),
    justifiedEpoch: node.justifiedCheckpoint.epoch,
    finalizedEpoch: node.finalizedCheckpoint.epoch,
    // proto-array weights are in effective balance increments
    weight: BigInt(node.weight) * BigInt(EFFECTIVE_BALANCE_INCREMENT),
    validity: node.validity,
    executionBlockHash: node.executionBlockHash ? fromHex(node.executionBlockHash) : ZERO_HASH,
    extraData: {
      state_root: node.stateRoot,
      target_root: node.targetRoot,
      justified_root: node.justifiedCheckpoint.root,
      finalized_root: node.finalizedCheckpoint.root,
      unrealized_justified_epoch: String(node.unrealizedJustifiedCheckpoint.epoch),
      unrealized_justified_root: node.unrealizedJustifiedCheckpoint.root,
      unrealized_finalized_epoch: String(node.unrealizedFinalizedCheckpoint.epoch),
      unrealized_finalized_root: node.unrealizedFinalizedCheckpoint.root,
    },
  };
}

export const debugHandlers: Handlers<typeof debugRoutes, ApiContext> = {
  async getStateV2({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: state, meta: {version: chain.config.getForkName(state.slot), ...meta}};
  },

  async getState({stateId}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    const fork = chain.config.getForkName(state.slot);
    if (fork !== ForkName.phase0) throw useNewerRoute(`getState serves phase0 states only, and the state at slot ${state.slot} is ${fork}`, "getStateV2");
    return {data: state.toValue() as phase0.BeaconState, meta};
  },

  async getDebugChainHeadsV2(_args, {chain}) {
    return {data: chainHeads(chain)};
  },

  async getDebugChainHeads(_args, {chain}) {
    return {data: chainHeads(chain).map(({root, slot}) => ({root, slot}))};
  },

  async getDebugForkChoice(_args, {chain}) {
    return {
      data: {
        justifiedCheckpoint: chain.getJustifiedCheckpoint(),
        finalizedCheckpoint: chain.getFinalizedCheckpoint(),
        nodes: chain.forkChoice.getAllNodes().map(forkChoiceNode),
      },
    };
  },

  async getDebugDataColumnSidecars({blockId, indices}, {chain}) {
    return dataColumnSidecars(chain, {blockId, indices: indices ?? [], limitAt: () => NUMBER_OF_COLUMNS, what: "column index"});
  },
};
