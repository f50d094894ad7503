import type {nodeRoutes} from "../routes/node.ts";
import type {Handlers} from "../routes/types.ts";
import {notFound} from "../errors.ts";
import type {NetworkPeer} from "../../network/networkContext.ts";
import {type ApiContext, isNodeSyncing, syncState} from "./context.ts";

function toApiPeer(p: NetworkPeer) {
  return {peerId: p.peerId, enr: p.enr, lastSeenP2pAddress: p.lastSeenP2pAddress, state: p.state, direction: p.direction};
}

/** Handlers of the Node tag. */

export const nodeHandlers: Handlers<typeof nodeRoutes, ApiContext> = {
  async getNodeVersion(_args, {node}) {
    return {data: {version: node.version}};
  },

  async getSyncingStatus(_args, ctx) {
    return {data: {...syncState(ctx), isOptimistic: ctx.chain.isHeadOptimistic(), elOffline: ctx.node.isElOffline?.() ?? false}};
  },

  async getNetworkIdentity(_args, {node: {identity}}) {
    return {
      data: {
        peerId: identity.peerId,
        enr: identity.enr(),
        p2pAddresses: identity.p2pAddresses(),
        discoveryAddresses: identity.discoveryAddresses(),
        metadata: identity.metadataForApi(),
      },
    };
  },

  async getPeers({state, direction}, {network}) {
    const peers = (network?.peers() ?? [])
      .filter((p) => !state?.length || state.includes(p.state))
      .filter((p) => !direction?.length || direction.includes(p.direction))
      .map(toApiPeer);
    return {data: peers, meta: {count: peers.length}};
  },

  async getPeer({peerId}, {network}) {
    const peer = network?.peers().find((p) => p.peerId === peerId);
    if (!peer) throw notFound(`Peer not found: ${peerId}`);
    return {data: toApiPeer(peer)};
  },

  async getPeerCount(_args, {network}) {
    const count = {disconnected: 0, connecting: 0, connected: 0, disconnecting: 0};
    for (const peer of network?.peers() ?? []) count[peer.state]++;
    return {data: count};
  },

  async getHealth({syncingStatus}, ctx) {
    return {data: isNodeSyncing(ctx) ? (syncingStatus ?? 206) : 200};
  },
};
