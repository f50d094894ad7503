import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {BeaconChain} from "../chain/beaconChain.ts";
import {getLogger} from "../log.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import type {OperationPools} from "../pools/index.ts";
import type {UnknownBlockSync} from "../sync/unknownBlockSync.ts";
import {createGossipValidators} from "./gossip/validation/index.ts";
import {blockErrorOutcome} from "./gossip/validation/outcomes.ts";
import {GossipRouter} from "./gossipRouter.ts";
import type {ClockWatch} from "./clockWatch.ts";
import type {BeaconLibp2p} from "./libp2p.ts";
import type {PeerManager} from "./peers/peerManager.ts";

const log = getLogger("network");

export interface GossipDeps {
  libp2p: BeaconLibp2p;
  chain: BeaconChain;
  pools: OperationPools;
  peers: Pick<PeerManager, "report">;
  /** where a gossip block whose parent we lack goes */
  unknownBlockSync: Pick<UnknownBlockSync, "onUnknownParent">;
  /** times peers' gossip blocks and attestations against our slots (clockWatch.ts) */
  clockWatch?: Pick<ClockWatch, "onArrival">;
  currentEpoch(): number;
  /** whether one of the node's validators aggregates on `subnet` at `slot` (subnets.ts) */
  aggregatesOn(subnet: number, slot: number): boolean;
  metrics?: Pick<NodeMetrics, "gossipReceived" | "gossipPublished" | "gossipValidation" | "gossipOverloaded">;
}

/**
 * Gossip: each topic's validation against the chain and the pools, blocks imported after they
 * are forwarded, senders of rejected messages reported to the peer manager; and the columns the
 * chain builds or rebuilds published as if they had come over gossip.
 */
export function createGossip(deps: GossipDeps): GossipRouter {
  const {chain, peers} = deps;
  const config = chain.config;
  /** A gossip block, forwarded already, imported now; a sender of a block the import finds invalid is scored down. */
  const importGossipBlock = (block: SignedBeaconBlock, from: string): void => {
    chain.importBlock(block).catch((e: Error) => {
      const outcome = blockErrorOutcome(e, toRootHex(block.message.parentRoot));
      log.debug({slot: block.message.slot, from, result: outcome.result, reason: outcome.reason}, "gossip block not imported");
      if (outcome.result === "REJECT") peers.report(from, "low", `gossip block: ${outcome.reason}`);
    });
  };
  const gossip = new GossipRouter({
    gossipsub: deps.libp2p.services.gossipsub,
    config,
    currentEpoch: deps.currentEpoch,
    validators: createGossipValidators({config, chain, pools: deps.pools, clock: chain.clock, importBlock: importGossipBlock, aggregatesOn: deps.aggregatesOn}),
    stateAtEpoch: (epoch) => chain.getHeadStateAtEpoch(epoch),
    committeesPerSlot: async (target) => (await chain.targetShufflings.get(target)).committeesPerSlot,
    onParentUnknown: (block, from) => deps.unknownBlockSync.onUnknownParent(block, from),
    // gossipsub scores a REJECT on its own; the node's score counts it too, so a peer that keeps
    // sending invalid messages is disconnected and banned
    onRejected: (from, reason) => peers.report(from, "low", `gossip: ${reason}`),
    onArrival: deps.clockWatch ? (slot, from) => deps.clockWatch!.onArrival(from, slot) : undefined,
    metrics: deps.metrics,
  });
  // columns built from the execution engine's blobs or rebuilt from half of them, published as if
  // they had come over gossip (on the subnets of the columns the node samples, those it joins)
  chain.dataAvailability.columnSources.setPublisher((sidecars) => {
    for (const data of sidecars) void gossip.publish({type: "data_column_sidecar", data}).catch((e: Error) => log.debug({err: e.message}, "column publish failed"));
  });
  return gossip;
}
