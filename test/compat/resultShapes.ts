import {JsonNumber} from "./helpers.ts";

/**
 * The result of each legacy method as the removed server returned it, written from
 * ../shared/legacy-jsonrpc.md ("Results of the standard methods", "Results of the extension
 * methods": integers as JSON numbers, hex as 0x strings, the REST `data` objects otherwise) and,
 * for the field names of those objects, from the Beacon API's schemas. Objects list the fields
 * a script relies on; `exact` ones have no others. The objects are the current fork's (fulu):
 * electra attestations carry `committee_bits`.
 */

export type Shape =
  | {kind: "integer"; values?: readonly number[]}
  | {kind: "hex"}
  | {kind: "string"; pattern?: RegExp}
  | {kind: "boolean"}
  | {kind: "true"}
  | {kind: "list"; item: Shape}
  | {kind: "object"; fields: Record<string, Shape>; exact: boolean}
  | {kind: "map"; value: Shape}
  | {kind: "nullable"; shape: Shape}
  | {kind: "any"};

const int: Shape = {kind: "integer"};
const hex: Shape = {kind: "hex"};
const str: Shape = {kind: "string"};
const bool: Shape = {kind: "boolean"};
const TRUE: Shape = {kind: "true"};
const any: Shape = {kind: "any"};
const list = (item: Shape): Shape => ({kind: "list", item});
const obj = (fields: Record<string, Shape>): Shape => ({kind: "object", fields, exact: false});
const exact = (fields: Record<string, Shape>): Shape => ({kind: "object", fields, exact: true});
const oneOf = (...values: number[]): Shape => ({kind: "integer", values});
const matching = (pattern: RegExp): Shape => ({kind: "string", pattern});
const nullable = (shape: Shape): Shape => ({kind: "nullable", shape});
const mapOf = (value: Shape): Shape => ({kind: "map", value});

const checkpoint = exact({epoch: int, root: hex});
const validatorRecord = exact({
  pubkey: hex,
  withdrawal_credentials: hex,
  effective_balance: int,
  slashed: bool,
  activation_eligibility_epoch: int,
  activation_epoch: int,
  exit_epoch: int,
  withdrawable_epoch: int,
});
const validator = exact({index: int, balance: int, status: str, validator: validatorRecord});
const headerMessage = exact({slot: int, proposer_index: int, parent_root: hex, state_root: hex, body_root: hex});
const signedHeader = exact({message: headerMessage, signature: hex});
const header = exact({root: hex, canonical: bool, header: signedHeader});
const attestationData = exact({slot: int, index: int, beacon_block_root: hex, source: checkpoint, target: checkpoint});
const electraAttestation = exact({aggregation_bits: hex, data: attestationData, signature: hex, committee_bits: hex});
const indexedAttestation = exact({attesting_indices: list(int), data: attestationData, signature: hex});
const fork = exact({previous_version: hex, current_version: hex, epoch: int});
const peer = exact({peer_id: str, enr: nullable(str), last_seen_p2p_address: str, state: str, direction: str});
const blockMessage = obj({slot: int, proposer_index: int, parent_root: hex, state_root: hex, body: obj({randao_reveal: hex, graffiti: hex, attestations: list(electraAttestation)})});
const eth1Data = exact({deposit_root: hex, deposit_count: int, block_hash: hex});

export const RESULT_SHAPES: Record<string, Shape> = {
  get_v1_beacon_genesis: exact({genesis_time: int, genesis_validators_root: hex, genesis_fork_version: hex}),
  get_v1_beacon_states_root: hex,
  get_v1_beacon_states_fork: fork,
  get_v1_beacon_states_finality_checkpoints: exact({previous_justified: checkpoint, current_justified: checkpoint, finalized: checkpoint}),
  get_v1_beacon_states_stateId_validators: list(validator),
  get_v1_beacon_states_stateId_validators_validatorId: validator,
  get_v1_beacon_states_stateId_validator_balances: list(exact({index: int, balance: int})),
  get_v1_beacon_states_stateId_committees_epoch: list(exact({index: int, slot: int, validators: list(int)})),
  get_v1_beacon_headers: list(header),
  get_v1_beacon_headers_blockId: header,
  post_v1_beacon_blocks: oneOf(200, 202),
  get_v1_beacon_blocks_blockId: exact({message: blockMessage, signature: hex}),
  get_v1_beacon_blocks_blockId_root: hex,
  get_v1_beacon_blocks_blockId_attestations: list(electraAttestation),
  get_v1_beacon_pool_attestations: list(electraAttestation),
  post_v1_beacon_pool_attestations: TRUE,
  get_v1_beacon_pool_attester_slashings: list(exact({attestation_1: indexedAttestation, attestation_2: indexedAttestation})),
  post_v1_beacon_pool_attester_slashings: TRUE,
  get_v1_beacon_pool_proposer_slashings: list(exact({signed_header_1: signedHeader, signed_header_2: signedHeader})),
  post_v1_beacon_pool_proposer_slashings: TRUE,
  get_v1_beacon_pool_voluntary_exits: list(exact({message: exact({epoch: int, validator_index: int}), signature: hex})),
  post_v1_beacon_pool_voluntary_exits: TRUE,
  get_v1_node_identity: exact({peer_id: str, enr: matching(/^enr:/), p2p_addresses: list(str), discovery_addresses: list(str), metadata: obj({seq_number: int, attnets: hex})}),
  get_v1_node_peers: list(peer),
  get_v1_node_peers_peerId: peer,
  get_v1_node_peer_count: exact({disconnected: int, connecting: int, connected: int, disconnecting: int}),
  get_v1_node_version: exact({version: str}),
  get_v1_node_syncing: obj({head_slot: int, sync_distance: int, is_syncing: bool, is_optimistic: bool}),
  get_v1_node_health: exact({health: oneOf(200, 206, 503)}),
  get_v1_validator_duties_attester: list(
    exact({pubkey: hex, validator_index: int, committee_index: int, committee_length: int, committees_at_slot: int, validator_committee_index: int, slot: int})
  ),
  get_v1_validator_duties_proposer: list(exact({pubkey: hex, validator_index: int, slot: int})),
  // since deneb the REST data of a produced block is its contents
  get_v1_validator_block: exact({block: blockMessage, kzg_proofs: list(hex), blobs: list(hex)}),
  get_v1_validator_attestation_data: attestationData,
  get_v1_validator_aggregate_attestation: electraAttestation,
  post_v1_validator_aggregate_and_proofs: TRUE,
  post_v1_validator_beacon_committee_subscriptions: TRUE,
  get_v1_config_fork_schedule: list(fork),
  // the spec's values are text in its schema, whatever they look like
  get_v1_config_spec: obj({PRESET_BASE: str, SECONDS_PER_SLOT: str, SLOTS_PER_EPOCH: str, FAR_FUTURE_EPOCH: str, FULU_FORK_EPOCH: str}),
  get_v1_config_deposit_contract: exact({chain_id: int, address: hex}),
  get_v1_debug_beacon_states_stateId: obj({genesis_time: int, slot: int, fork, latest_block_header: headerMessage, validators: list(validatorRecord), balances: list(int)}),
  get_v1_debug_beacon_heads: list(exact({root: hex, slot: int})),
  get_v2_debug_beacon_heads: list(exact({root: hex, slot: int, execution_optimistic: bool})),
  getBeaconHead: int,
  getChainHead: exact({head_slot: int, head_block_root: hex, finalized_slot: int, finalized_block_root: hex, justified_slot: int, justified_block_root: hex}),
  getNodeVersion: str,
  peers: exact({peers: list(exact({id: str, connectionState: str, score: any}))}),
  getSyncing: bool,
  getNetworkPeerId: matching(/^16Uiu2/),
  getNetworkPeers: list(str),
  getNetworkEnr: matching(/^enr:/),
  setLogLevel: TRUE,
  setGraffiti: TRUE,
  getEth1Chain: list(obj({timestamp: int, deposit_root: hex, deposit_count: int})),
  getEth1ProposalData: exact({vote: eth1Data, deposits: list(any)}),
  debug_getChronosFutures: list(exact({id: int, child_id: int, procname: str, filename: str, line: int, state: str})),
  debug_getGossipSubPeers: exact({gossipsub: mapOf(list(str)), mesh: mapOf(list(str)), colocationPeers: list(any), peerStats: list(any), allPeers: list(str)}),
};

const HEX = /^0x([0-9a-f]{2})*$/;
const INTEGER = /^[0-9]+$/;

/** Where a result (parsed with parseExact: numbers as JsonNumber) departs from a shape; [] when it fits. */
export function shapeProblems(value: unknown, shape: Shape, at = "result"): string[] {
  const text = () => (value instanceof JsonNumber ? value.text : JSON.stringify(value)?.slice(0, 80));
  switch (shape.kind) {
    case "any":
      return [];
    case "integer":
      if (!(value instanceof JsonNumber) || !INTEGER.test(value.text)) return [`${at}: ${text()} is not an integer JSON number`];
      return shape.values && !shape.values.includes(Number(value.text)) ? [`${at}: ${value.text} is not one of ${shape.values.join(", ")}`] : [];
    case "hex":
      return typeof value === "string" && HEX.test(value) ? [] : [`${at}: ${text()} is not 0x hex`];
    case "string":
      if (typeof value !== "string") return [`${at}: ${text()} is not a string`];
      return shape.pattern && !shape.pattern.test(value) ? [`${at}: ${text()} does not match ${shape.pattern}`] : [];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: ${text()} is not a boolean`];
    case "true":
      return value === true ? [] : [`${at}: ${text()} is not true`];
    case "nullable":
      return value === null ? [] : shapeProblems(value, shape.shape, at);
    case "list":
      if (!Array.isArray(value)) return [`${at}: ${text()} is not a list`];
      return value.flatMap((item, i) => shapeProblems(item, shape.item, `${at}[${i}]`)).slice(0, 5);
    case "map":
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof JsonNumber) return [`${at}: ${text()} is not an object`];
      const record = value as Record<string, unknown>;
      if (shape.kind === "map") return Object.entries(record).flatMap(([k, v]) => shapeProblems(v, shape.value, `${at}.${k}`));
      const missing = Object.keys(shape.fields).filter((k) => !(k in record)).map((k) => `${at}.${k}: missing`);
      const extra = shape.exact ? Object.keys(record).filter((k) => !(k in shape.fields)).map((k) => `${at}.${k}: not a field of the result`) : [];
      const inner = Object.entries(shape.fields).flatMap(([k, s]) => (k in record ? shapeProblems(record[k], s, `${at}.${k}`) : []));
      return [...missing, ...extra, ...inner];
    }
  }
}
