import type {SignedBeaconBlock} from "@lodestar/types";
import type {BeaconChain} from "../chain/beaconChain.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import type {Backfill} from "../sync/backfill.ts";
import {RangeSync} from "../sync/rangeSync.ts";
import {SidecarSync} from "../sync/sidecarSync.ts";
import {StatusRefreshAfterRounds} from "../sync/statusRefresh.ts";
import {UnknownBlockSync} from "../sync/unknownBlockSync.ts";
import {createBackfill} from "./backfillService.ts";
import type {PeerManager} from "./peers/peerManager.ts";
import type {ReqResp} from "./reqresp/reqResp.ts";

export interface SyncDeps {
  chain: BeaconChain;
  reqResp: ReqResp;
  peers: PeerManager;
  /** after checkpoint sync, backfill down to genesis */
  backfillToGenesis: boolean;
  metrics?: NodeMetrics["backfill"];
}

/** The node's syncing, over req/resp with the peer manager's peers. */
export interface SyncServices {
  /** head sync: batches of blocks by range from peers ahead of us */
  rangeSync: RangeSync;
  /** the parents of gossip blocks we do not know, by root */
  unknownBlockSync: UnknownBlockSync;
  /** the blob and column sidecars a block needs, from peers */
  sidecarSync: SidecarSync;
  /** blocks before a checkpoint-synced node's anchor, in the background while head sync is idle */
  backfill: Backfill;
  start(): void;
  stop(): Promise<void>;
}

/** Builds the sync services and wires them to the peer manager's statuses (loads backfill's progress). */
export async function createSync(deps: SyncDeps): Promise<SyncServices> {
  const {chain, reqResp, peers} = deps;
  const sidecarSync = new SidecarSync({
    config: chain.config,
    dataAvailability: chain.dataAvailability,
    peers: () => peers.syncPeers().map((p) => p.peerId),
    report: (peer, action, reason) => peers.report(peer, action, reason),
    blobSidecarsByRange: (peer, req) => reqResp.blobSidecarsByRange(peer, req),
    blobSidecarsByRoot: (peer, ids) => reqResp.blobSidecarsByRoot(peer, ids),
    dataColumnSidecarsByRange: (peer, req) => reqResp.dataColumnSidecarsByRange(peer, req),
    dataColumnSidecarsByRoot: (peer, ids) => reqResp.dataColumnSidecarsByRoot(peer, ids),
  });
  chain.dataAvailability.setFetcher((block, root, missing) => sidecarSync.fetchMissing(block, root, missing));

  const rangeSync = new RangeSync({
    chain,
    syncPeers: () => peers.syncPeers(),
    report: (peer, action, reason) => peers.report(peer, action, reason),
    hasBlock: (root) => chain.forkChoice.hasBlock(root),
    fetchBlocksByRange: async (peer, startSlot, count): Promise<SignedBeaconBlock[]> => {
      const blocks = await reqResp.beaconBlocksByRange(peer, {startSlot, count, step: 1});
      await sidecarSync.fetchForBlocks(peer, blocks);
      return blocks;
    },
  });
  // status v2's earliest_available_slot (read from backfill) follows it down
  const backfill = createBackfill({chain, reqResp, peers, headSyncing: () => rangeSync.isSyncing(), toGenesis: deps.backfillToGenesis, metrics: deps.metrics});
  await backfill.load();
  peers.on("status", (_peer, status) => {
    rangeSync.onPeerStatus(status);
    backfill.wake();
  });
  const statusRefresh = new StatusRefreshAfterRounds();
  rangeSync.on("done", (head, progressed) => {
    // peers may have moved on while we imported: go again if one is still ahead (and the
    // round got somewhere: a peer whose status claims more than it serves waits for its next status)
    if (progressed) for (const p of peers.syncPeers()) rangeSync.onPeerStatus(p.status);
    // still behind the clock: ask the peers where they are now (their answers start the next round)
    if (!rangeSync.isSyncing() && statusRefresh.shouldRefresh(head, progressed, chain.currentSlot())) peers.refreshStatuses();
    backfill.wake();
  });

  const unknownBlockSync = new UnknownBlockSync({
    chain,
    hasBlock: (root) => chain.forkChoice.hasBlock(root),
    fetchBlocksByRoot: (peer, roots) => reqResp.beaconBlocksByRoot(peer, roots),
    report: (peer, action, reason) => peers.report(peer, action, reason),
    // a branch longer than lookups by root follow, though perhaps no higher than ours (a healed split)
    tooFarBehind: () => rangeSync.onUnknownBranch(),
    fetchSidecars: (peer, ancestors) => sidecarSync.fetchByRoot(peer, ancestors),
  });

  return {
    rangeSync,
    unknownBlockSync,
    sidecarSync,
    backfill,
    start: () => backfill.start(),
    async stop() {
      chain.dataAvailability.setFetcher(null);
      await rangeSync.stop();
      await backfill.stop();
    },
  };
}
