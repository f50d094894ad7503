import type {BeaconChain} from "../chain/beaconChain.ts";
import {blocksByRange, blocksByRoot} from "./blockProvider.ts";
import type {NodeIdentity} from "./identity.ts";
import {lightClientBootstrap, lightClientFinalityUpdate, lightClientOptimisticUpdate, lightClientUpdatesByRange} from "./lightClientProvider.ts";
import type {PeerManager} from "./peers/peerManager.ts";
import type {ReqRespServing} from "./reqresp/types.ts";
import {blobSidecarsByRange, blobSidecarsByRoot, dataColumnSidecarsByRange, dataColumnSidecarsByRoot} from "./sidecarProvider.ts";

/**
 * What the node serves its peers over req/resp: the handshake and goodbyes go to the peer
 * manager (which reports misbehaving peers too), blocks, sidecars and light-client data come
 * from the chain's read side.
 */
export function reqRespServing(chain: BeaconChain, identity: NodeIdentity, peers: PeerManager): ReqRespServing {
  return {
    handlers: {
      onStatus: (peer, status) => peers.onStatusRequest(peer, status),
      onGoodbye: (peer, reason) => peers.onGoodbye(peer, reason),
      onPing: () => identity.metadata().seqNumber,
      onMetadata: () => identity.metadata(),
      onBeaconBlocksByRange: (_peer, req) => blocksByRange(chain, req.startSlot, req.count, req.step),
      onBeaconBlocksByRoot: (_peer, roots) => blocksByRoot(chain, roots),
      onBlobSidecarsByRange: (_peer, req) => blobSidecarsByRange(chain, req),
      onBlobSidecarsByRoot: (_peer, ids) => blobSidecarsByRoot(chain, ids),
      onDataColumnSidecarsByRange: (_peer, req) => dataColumnSidecarsByRange(chain, req),
      onDataColumnSidecarsByRoot: (_peer, ids) => dataColumnSidecarsByRoot(chain, ids),
      onLightClientBootstrap: (_peer, root) => lightClientBootstrap(chain.lightClient, root),
      onLightClientUpdatesByRange: (_peer, req) => lightClientUpdatesByRange(chain.lightClient, req),
      onLightClientFinalityUpdate: () => lightClientFinalityUpdate(chain.lightClient),
      onLightClientOptimisticUpdate: () => lightClientOptimisticUpdate(chain.lightClient),
    },
    onPeerMisbehaved: (peer, reason, severity) => peers.report(peer, severity, reason),
  };
}
