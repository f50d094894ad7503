import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {getLogger, logManager} from "../../log.ts";
import {liveTasks} from "../../liveTasks.ts";
import {badRequest} from "../errors.ts";
import type {extRoutes} from "../routes/ext.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";

/** Handlers of the extension endpoints (`/ext/v1`). */

const log = getLogger("api");

export const extHandlers: Handlers<typeof extRoutes, ApiContext> = {
  async getGraffiti(_args, {node}) {
    return {data: node.graffiti()};
  },

  async setGraffiti({graffiti}, {node}) {
    await node.setGraffiti(graffiti);
    log.info({graffiti: Buffer.from(graffiti).toString("hex")}, "graffiti set");
    return {data: true};
  },

  async setLogLevel({directive, logLevel}) {
    if (directive && logLevel) throw badRequest("Give the log-level directive once: as the body or as the log_level query parameter");
    const chosen = directive ?? logLevel;
    if (!chosen) throw badRequest("Missing log-level directive: send it as a text/plain body or as the log_level query parameter");
    logManager().apply(chosen);
    log.info({directive: chosen}, "log levels changed");
    return {data: true};
  },

  async getChainHead(_args, {chain}) {
    const head = chain.getHead();
    const finalized = chain.getFinalizedCheckpoint();
    const justified = chain.getJustifiedCheckpoint();
    return {
      data: {
        headSlot: head.slot,
        headBlockRoot: head.blockRoot,
        finalizedSlot: finalized.epoch * SLOTS_PER_EPOCH,
        finalizedBlockRoot: finalized.root,
        justifiedSlot: justified.epoch * SLOTS_PER_EPOCH,
        justifiedBlockRoot: justified.root,
      },
    };
  },

  async getNetworkPeerIds(_args, {network}) {
    return {data: (network?.peers() ?? []).filter((p) => p.state === "connected").map((p) => p.peerId)};
  },

  async getNetworkPeers(_args, {network}) {
    return {data: {peers: (network?.peers() ?? []).map((p) => ({id: p.peerId, connectionState: p.state, score: p.score}))}};
  },

  async getDebugGossipPeers(_args, {network}) {
    return {data: network?.gossipView() ?? {gossipsub: {}, mesh: {}, colocationPeers: [], peerStats: [], allPeers: []}};
  },

  // The dev chain has no deposit contract: the node follows no execution chain for deposits,
  // keeps no eth1 blocks, and a block carries the state's eth1_data and no deposits.
  async getEth1Chain() {
    return {data: []};
  },

  async getEth1ProposalData(_args, {chain}) {
    return {data: {vote: chain.getHeadState().eth1Data.toValue(), deposits: []}};
  },

  async getDebugTasks() {
    return {data: liveTasks().map((task) => ({...task, childId: 0, state: "Pending"}))};
  },
};
