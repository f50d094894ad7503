import type {nodeRoutes} from "../routes/node.ts";
import type {Handlers} from "../routes/types.ts";
import {notFound} from "../errors.ts";
import {type ApiContext, isNodeSyncing, syncState} from "./context.ts";

/** Handlers of the Node tag. */

export const nodeHandlers: Handlers<typeof nodeRoutes, ApiContext> = {
  async getNodeVersion(_args, {node}) {
    return {data: {version: node.version}};
  },

  async getSyncingStatus(_args, ctx) {
    return {data: {...syncState(ctx), isOptimistic: false, elOffline: ctx.node.isElOffline?.() ?? false}};
  },

  async getNetworkIdentity(_args, {node: {identity}}) {
    return {
      data: {
        peerId: identity.peerId,
        enr: identity.enr(),
        p2pAddresses: identity.p2pAddresses(),
        discoveryAddresses: identity.discoveryAddresses(),
        metadata: identity.metadata(),
      },
    };
  },

  // No networking yet: the node has no peers, known or connected.
  async getPeers() {
    return {data: [], meta: {count: 0}};
  },

  async getPeer({peerId}) {
    throw notFound(`Peer not found: ${peerId}`);
  },

  async getPeerCount() {
    return {data: {disconnected: 0, connecting: 0, connected: 0, disconnecting: 0}};
  },

  async getHealth({syncingStatus}, ctx) {
    return {data: isNodeSyncing(ctx) ? (syncingStatus ?? 206) : 200};
  },
};
