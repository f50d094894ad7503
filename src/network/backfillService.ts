import type {BeaconChain} from "../chain/beaconChain.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import {Backfill} from "../sync/backfill.ts";
import {BackfillSidecars} from "../sync/backfillSidecars.ts";
import type {PeerManager} from "./peers/peerManager.ts";
import type {ReqResp} from "./reqresp/reqResp.ts";

export interface BackfillServiceDeps {
  chain: BeaconChain;
  reqResp: ReqResp;
  /** the peers asked, and told of their faults */
  peers: Pick<PeerManager, "syncPeers" | "report">;
  /** head sync is under way: backfill waits */
  headSyncing(): boolean;
  toGenesis: boolean;
  metrics?: NodeMetrics["backfill"];
}

/**
 * Backfill wired to the node: blocks and sidecars asked of the connected peers over req/resp,
 * proposer signatures checked by the chain's verifier against the head state's registry.
 */
export function createBackfill(deps: BackfillServiceDeps): Backfill {
  const {chain, reqResp} = deps;
  const sidecars = new BackfillSidecars({
    config: chain.config,
    db: chain.db,
    currentSlot: () => chain.currentSlot(),
    samplingColumns: () => chain.dataAvailability.samplingColumns(),
    peers: () => deps.peers.syncPeers().map((p) => p.peerId),
    report: (peer, action, reason) => deps.peers.report(peer, action, reason),
    blobSidecarsByRange: (peer, req) => reqResp.blobSidecarsByRange(peer, req),
    blobSidecarsByRoot: (peer, ids) => reqResp.blobSidecarsByRoot(peer, ids),
    dataColumnSidecarsByRange: (peer, req) => reqResp.dataColumnSidecarsByRange(peer, req),
    dataColumnSidecarsByRoot: (peer, ids) => reqResp.dataColumnSidecarsByRoot(peer, ids),
  });
  return new Backfill({
    config: chain.config,
    db: chain.db,
    verifier: chain.verifier,
    validators: () => {
      const state = chain.getHeadState();
      return {pubkeyCache: state.epochCtx.pubkeyCache, count: state.validators.length};
    },
    currentSlot: () => chain.currentSlot(),
    toGenesis: deps.toGenesis,
    syncPeers: () => deps.peers.syncPeers(),
    report: (peer, action, reason) => deps.peers.report(peer, action, reason),
    fetchBlocksByRange: (peer, startSlot, count, signal) => reqResp.beaconBlocksByRange(peer, {startSlot, count, step: 1}, signal),
    fetchSidecars: (peer, blocks) => sidecars.fetch(peer, blocks),
    busy: () => deps.headSyncing(),
    metrics: deps.metrics,
  });
}
