import type {Attestation, AttesterSlashing, SignedAggregateAndProof, SignedBeaconBlock, altair, capella, deneb, electra, fulu, phase0, LightClientFinalityUpdate, LightClientOptimisticUpdate} from "@lodestar/types";

/*
 * What the network offers the layers above it (the REST API's handlers): broadcasting what
 * clients submit, and what it shows of its peers. The network owns these types; the API reads them.
 */

/** What the node accepted from an API client and now broadcasts to its peers, by gossip topic. */
export type OutgoingGossip =
  | {type: "beacon_block"; data: SignedBeaconBlock}
  | {type: "beacon_attestation"; data: Attestation | electra.SingleAttestation}
  | {type: "beacon_aggregate_and_proof"; data: SignedAggregateAndProof}
  | {type: "voluntary_exit"; data: phase0.SignedVoluntaryExit}
  | {type: "proposer_slashing"; data: phase0.ProposerSlashing}
  | {type: "attester_slashing"; data: AttesterSlashing}
  | {type: "bls_to_execution_change"; data: capella.SignedBLSToExecutionChange}
  | {type: "sync_committee"; data: altair.SyncCommitteeMessage}
  | {type: "sync_committee_contribution_and_proof"; data: altair.SignedContributionAndProof}
  | {type: "blob_sidecar"; data: deneb.BlobSidecar}
  | {type: "data_column_sidecar"; data: fulu.DataColumnSidecar}
  | {type: "light_client_finality_update"; data: LightClientFinalityUpdate}
  | {type: "light_client_optimistic_update"; data: LightClientOptimisticUpdate};

/** The network's side of the API: broadcasting what clients submit, and what it shows of peers. */
export interface NetworkContext {
  /** broadcasts an accepted object (errors are the network's to log) */
  publish(message: OutgoingGossip): void;
  peers(): NetworkPeer[];
  /** gossipsub's view: subscribed peers and mesh by topic, scores */
  gossipView(): {gossipsub: Record<string, string[]>; mesh: Record<string, string[]>; colocationPeers: string[]; peerStats: Array<{peerId: string; score: number}>; allPeers: string[]};
  /** joins the subnets validators will need (POST beacon_committee_subscriptions) */
  addCommitteeSubscriptions(subscriptions: Array<{validatorIndex: number; committeeIndex: number; committeesAtSlot: number; slot: number; isAggregator: boolean}>): void;
  addSyncCommitteeSubscriptions(subscriptions: Array<{validatorIndex: number; syncCommitteeIndices: number[]; untilEpoch: number}>): void;
}

export interface NetworkPeer {
  peerId: string;
  enr: string | null;
  lastSeenP2pAddress: string;
  state: "connecting" | "connected" | "disconnecting" | "disconnected";
  direction: "inbound" | "outbound";
  score: number;
  agentVersion: string | null;
}
