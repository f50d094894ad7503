import type {BeaconLibp2p} from "./libp2p.ts";
import type {CustodyService} from "./custodyService.ts";
import type {GossipRouter} from "./gossipRouter.ts";
import type {NetworkContext, NetworkPeer} from "./networkContext.ts";
import type {PeerManager} from "./peers/peerManager.ts";
import type {PeerScores} from "./peers/peerScore.ts";
import type {SubnetService} from "./subnets.ts";
import {getLogger} from "../log.ts";

const log = getLogger("network");

export interface NetworkApiDeps {
  libp2p: BeaconLibp2p;
  gossip: GossipRouter;
  peers: PeerManager;
  scores: PeerScores;
  subnets: SubnetService;
  custody: CustodyService;
}

/** What the REST API sees of the network: publishing, peers, gossipsub's view, subnet subscriptions. */
export function networkApi(deps: NetworkApiDeps): NetworkContext {
  const {libp2p, gossip, peers, scores, subnets, custody} = deps;
  return {
    publish: (message) => void gossip.publish(message).catch((e: Error) => log.debug({type: message.type, err: e.message}, "publish failed")),
    peers: () =>
      peers.all().map((p): NetworkPeer => ({
        peerId: p.peerId,
        enr: null,
        lastSeenP2pAddress: p.address,
        state: p.state,
        direction: p.direction,
        score: scores.score(p.peerId),
        agentVersion: p.agentVersion,
      })),
    gossipView: () => {
      const gs = libp2p.services.gossipsub;
      const gossipsub: Record<string, string[]> = {};
      const mesh: Record<string, string[]> = {};
      for (const topic of gs.getTopics()) {
        gossipsub[topic] = gs.getSubscribers(topic).map(String);
        mesh[topic] = gs.getMeshPeers(topic);
      }
      const allPeers = gs.getPeers().map(String);
      return {gossipsub, mesh, colocationPeers: [], peerStats: allPeers.map((peerId) => ({peerId, score: gs.getScore(peerId)})), allPeers};
    },
    addCommitteeSubscriptions: (subs) => {
      custody.attachValidators(subs.map((s) => s.validatorIndex));
      subnets.addCommitteeSubscriptions(subs);
    },
    addSyncCommitteeSubscriptions: (subs) => subnets.addSyncCommitteeSubscriptions(subs),
  };
}
