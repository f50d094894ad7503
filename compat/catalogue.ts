/**
 * The removed JSON-RPC interface's method catalogue: the product spec's list (section 4.3), in
 * its order, and the two methods the removed server had that the list omits
 * (../shared/legacy-jsonrpc.md). This is the legacy side only; what each method maps to is
 * compat's table (table.ts).
 */

export interface CatalogueEntry {
  method: string;
  /** the spec's "Extension methods of the removed interface" */
  extension: boolean;
  /** the spec lists the method without a parameter shape: compat takes its REST endpoint's parameters, in order */
  unshaped?: true;
  /** the removed server had it, the spec's list omits it */
  outsideSpec?: true;
}

const standard = (method: string, unshaped?: true): CatalogueEntry => ({method, extension: false, ...(unshaped ? {unshaped} : {})});
const extension = (method: string, unshaped?: true): CatalogueEntry => ({method, extension: true, ...(unshaped ? {unshaped} : {})});

export const LEGACY_CATALOGUE: readonly CatalogueEntry[] = [
  standard("get_v1_beacon_genesis"),
  standard("get_v1_beacon_states_root"),
  standard("get_v1_beacon_states_fork"),
  standard("get_v1_beacon_states_finality_checkpoints"),
  standard("get_v1_beacon_states_stateId_validators"),
  standard("get_v1_beacon_states_stateId_validators_validatorId"),
  standard("get_v1_beacon_states_stateId_validator_balances"),
  standard("get_v1_beacon_states_stateId_committees_epoch"),
  standard("get_v1_beacon_headers", true),
  standard("get_v1_beacon_headers_blockId"),
  standard("post_v1_beacon_blocks"),
  standard("get_v1_beacon_blocks_blockId"),
  standard("get_v1_beacon_blocks_blockId_root"),
  standard("get_v1_beacon_blocks_blockId_attestations"),
  {method: "get_v1_beacon_pool_attestations", extension: false, outsideSpec: true},
  standard("post_v1_beacon_pool_attestations"),
  standard("get_v1_beacon_pool_attester_slashings"),
  standard("post_v1_beacon_pool_attester_slashings"),
  standard("get_v1_beacon_pool_proposer_slashings"),
  standard("post_v1_beacon_pool_proposer_slashings"),
  standard("get_v1_beacon_pool_voluntary_exits"),
  standard("post_v1_beacon_pool_voluntary_exits"),
  standard("get_v1_node_identity"),
  standard("get_v1_node_peers"),
  standard("get_v1_node_peers_peerId"),
  standard("get_v1_node_peer_count"),
  standard("get_v1_node_version"),
  standard("get_v1_node_syncing"),
  standard("get_v1_node_health"),
  standard("get_v1_validator_duties_attester"),
  standard("get_v1_validator_duties_proposer"),
  standard("get_v1_validator_block"),
  standard("get_v1_validator_attestation_data"),
  standard("get_v1_validator_aggregate_attestation"),
  standard("post_v1_validator_aggregate_and_proofs"),
  standard("post_v1_validator_beacon_committee_subscriptions", true),
  standard("get_v1_config_fork_schedule"),
  standard("get_v1_config_spec"),
  standard("get_v1_config_deposit_contract"),
  standard("get_v1_debug_beacon_states_stateId"),
  {method: "get_v1_debug_beacon_heads", extension: false, outsideSpec: true},
  standard("get_v2_debug_beacon_heads", true),
  extension("getBeaconHead"),
  extension("getChainHead"),
  extension("getNodeVersion"),
  extension("peers"),
  extension("getSyncing"),
  extension("getNetworkPeerId"),
  extension("getNetworkPeers"),
  extension("getNetworkEnr", true),
  extension("setLogLevel"),
  extension("setGraffiti"),
  extension("getEth1Chain"),
  extension("getEth1ProposalData"),
  extension("debug_getChronosFutures"),
  extension("debug_getGossipSubPeers"),
];
