import type {nodeRoutes} from "../routes/node.ts";
import type {Handlers} from "../routes/types.ts";
import {type ApiContext, isNodeSyncing} from "./context.ts";

/** Handlers of the Node tag. */

export const nodeHandlers: Handlers<typeof nodeRoutes, ApiContext> = {
  async getNodeVersion(_args, {node}) {
    return {data: {version: node.version}};
  },

  async getSyncingStatus(_args, ctx) {
    const headSlot = ctx.chain.getHead().slot;
    return {
      data: {
        headSlot,
        syncDistance: Math.max(0, ctx.chain.currentSlot() - headSlot),
        isSyncing: isNodeSyncing(ctx),
        isOptimistic: false,
        elOffline: ctx.node.isElOffline?.() ?? false,
      },
    };
  },

  async getHealth({syncingStatus}, ctx) {
    return {data: isNodeSyncing(ctx) ? (syncingStatus ?? 206) : 200};
  },
};
