import type {OperationId, RouteTable} from "../src/api/routes/index.ts";
import type {ArgsOf} from "../src/api/routes/types.ts";
import {committeeOfAggregate, type Filler} from "./fillers.ts";
import {eachWith, field, within, type ResultSelector} from "./results.ts";

/**
 * The legacy JSON-RPC methods, by the route that serves each: this table is the whole mapping
 * from the removed interface to REST (the route table knows nothing of it). It is typed against
 * the route table: a key is an operationId and a param names an argument of that route. One
 * route may serve several methods, each with its own params, result selector and adapters.
 *
 * Routes are the ones that serve the current fork (v2 where v1 refuses newer objects), so a
 * legacy method answers on today's chain with today's objects.
 */

/** A route argument a positional param fills, or the same marked required where the route alone would take it absent. */
export type ParamSpec<A> = (keyof A & string) | {arg: keyof A & string; required: true};

export interface LegacyEntry<A> {
  method: string;
  /** the route arguments the positional params fill, in order */
  params: readonly ParamSpec<A>[];
  /** what of the REST answer is the result; all of `data` (the status, `true` for no body) when absent */
  result?: ResultSelector;
  /** the legacy method took one item where the route takes a list: one item is sent as a list of one */
  oneItemOfList?: true;
  /** the route's `fork` argument (Eth-Consensus-Version) is the fork at the slot this reads from the JSON body */
  forkOfBody?: A extends {fork: unknown} ? (body: any) => unknown : never;
  /** error statuses of a status route that are answers, not failures (the health of an unhealthy node: 503) */
  statusResults?: readonly number[];
  /** route arguments a call may leave out (its trailing params), and how compat finds each then */
  fill?: {[K in keyof A & string]?: Filler};
}

export type LegacyTable = {[K in OperationId]?: readonly LegacyEntry<ArgsOf<RouteTable[K]>>[]};

const firstItem = (body: any): any => (Array.isArray(body) ? body[0] : body);

export const LEGACY_TABLE: LegacyTable = {
  getGenesis: [{method: "get_v1_beacon_genesis", params: []}],
  getStateRoot: [{method: "get_v1_beacon_states_root", params: ["stateId"], result: field("root")}],
  getStateFork: [{method: "get_v1_beacon_states_fork", params: ["stateId"]}],
  getStateFinalityCheckpoints: [{method: "get_v1_beacon_states_finality_checkpoints", params: ["stateId"]}],
  getStateValidators: [{method: "get_v1_beacon_states_stateId_validators", params: ["stateId", "id", "status"]}],
  getStateValidator: [{method: "get_v1_beacon_states_stateId_validators_validatorId", params: ["stateId", "validatorId"]}],
  getStateValidatorBalances: [{method: "get_v1_beacon_states_stateId_validator_balances", params: ["stateId", "id"]}],
  getEpochCommittees: [{method: "get_v1_beacon_states_stateId_committees_epoch", params: ["stateId", "epoch", "index", "slot"]}],
  getBlockHeaders: [{method: "get_v1_beacon_headers", params: ["slot", "parentRoot"]}],
  getBlockHeader: [{method: "get_v1_beacon_headers_blockId", params: ["blockId"]}],
  publishBlock: [{method: "post_v1_beacon_blocks", params: ["signedBlockContents"]}],
  getBlockV2: [{method: "get_v1_beacon_blocks_blockId", params: ["blockId"]}],
  getBlockRoot: [{method: "get_v1_beacon_blocks_blockId_root", params: ["blockId"], result: field("root")}],
  getBlockAttestationsV2: [{method: "get_v1_beacon_blocks_blockId_attestations", params: ["blockId"]}],
  getPoolAttestationsV2: [{method: "get_v1_beacon_pool_attestations", params: ["slot", "committeeIndex"]}],
  submitPoolAttestationsV2: [
    {method: "post_v1_beacon_pool_attestations", params: ["attestations"], oneItemOfList: true, forkOfBody: (body) => firstItem(body)?.data?.slot},
  ],
  getPoolAttesterSlashingsV2: [{method: "get_v1_beacon_pool_attester_slashings", params: []}],
  submitPoolAttesterSlashingsV2: [{method: "post_v1_beacon_pool_attester_slashings", params: ["slashing"], forkOfBody: (body) => body?.attestation_1?.data?.slot}],
  getPoolProposerSlashings: [{method: "get_v1_beacon_pool_proposer_slashings", params: []}],
  submitPoolProposerSlashings: [{method: "post_v1_beacon_pool_proposer_slashings", params: ["slashing"]}],
  getPoolVoluntaryExits: [{method: "get_v1_beacon_pool_voluntary_exits", params: []}],
  submitPoolVoluntaryExit: [{method: "post_v1_beacon_pool_voluntary_exits", params: ["exit"]}],
  getNetworkIdentity: [
    {method: "get_v1_node_identity", params: []},
    {method: "getNetworkPeerId", params: [], result: field("peer_id")},
    {method: "getNetworkEnr", params: [], result: field("enr")},
  ],
  getPeers: [{method: "get_v1_node_peers", params: []}],
  getPeer: [{method: "get_v1_node_peers_peerId", params: ["peerId"]}],
  getPeerCount: [{method: "get_v1_node_peer_count", params: []}],
  getNodeVersion: [
    {method: "get_v1_node_version", params: []},
    {method: "getNodeVersion", params: [], result: field("version")},
  ],
  getSyncingStatus: [
    {method: "get_v1_node_syncing", params: []},
    {method: "getBeaconHead", params: [], result: field("head_slot")},
    {method: "getSyncing", params: [], result: field("is_syncing")},
  ],
  getHealth: [{method: "get_v1_node_health", params: [], result: within("health"), statusResults: [503]}],
  getAttesterDuties: [{method: "get_v1_validator_duties_attester", params: ["epoch", "validators"]}],
  getProposerDuties: [{method: "get_v1_validator_duties_proposer", params: ["epoch"]}],
  produceBlockV2: [{method: "get_v1_validator_block", params: ["slot", "randaoReveal", "graffiti"]}],
  produceAttestationData: [{method: "get_v1_validator_attestation_data", params: ["slot", "committeeIndex"]}],
  getAggregatedAttestationV2: [
    {method: "get_v1_validator_aggregate_attestation", params: ["slot", "attestationDataRoot", "committeeIndex"], fill: {committeeIndex: committeeOfAggregate}},
  ],
  publishAggregateAndProofsV2: [
    {
      method: "post_v1_validator_aggregate_and_proofs",
      params: ["signedAggregateAndProofs"],
      oneItemOfList: true,
      forkOfBody: (body) => firstItem(body)?.message?.aggregate?.data?.slot,
    },
  ],
  prepareBeaconCommitteeSubnet: [{method: "post_v1_validator_beacon_committee_subscriptions", params: ["subscriptions"]}],
  getForkSchedule: [{method: "get_v1_config_fork_schedule", params: []}],
  getSpec: [{method: "get_v1_config_spec", params: []}],
  getDepositContract: [{method: "get_v1_config_deposit_contract", params: []}],
  getStateV2: [{method: "get_v1_debug_beacon_states_stateId", params: ["stateId"]}],
  getDebugChainHeadsV2: [
    {method: "get_v2_debug_beacon_heads", params: []},
    {method: "get_v1_debug_beacon_heads", params: [], result: eachWith("root", "slot")},
  ],
  getChainHead: [{method: "getChainHead", params: []}],
  getNetworkPeers: [{method: "peers", params: []}],
  getNetworkPeerIds: [{method: "getNetworkPeers", params: []}],
  setLogLevel: [{method: "setLogLevel", params: [{arg: "directive", required: true}]}],
  setGraffiti: [{method: "setGraffiti", params: ["graffiti"]}],
  getEth1Chain: [{method: "getEth1Chain", params: []}],
  getEth1ProposalData: [{method: "getEth1ProposalData", params: []}],
  getDebugTasks: [{method: "debug_getChronosFutures", params: []}],
  getDebugGossipPeers: [{method: "debug_getGossipSubPeers", params: []}],
};
