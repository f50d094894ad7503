import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_BEACON_ATTESTER, DOMAIN_RANDAO} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../src/chain/interface.ts";
import {JsonNumber, postRpc} from "./helpers.ts";

/**
 * For each of the 56 JSON-RPC methods (the spec's 54 and the two its list omits): the params of
 * a call, and the same query written by hand against REST, with where the removed server's
 * result is in the REST answer (not derived from the compat table, so the table's mapping is checked).
 */

/** A REST request. `text` is a text/plain body; `body` a JSON one. */
export interface RestCall {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

export interface Case {
  params: unknown[];
  rest: RestCall;
  /** where the result is in the REST answer: its `data` (default), the HTTP status, nothing (the result is `true`), or read from the body and status */
  result?: "data" | "status" | "empty" | ((body: any, status: number) => unknown);
  /** the REST status this query gets on the dev chain (200 unless told) */
  status?: number;
  /** the REST data holds text that looks like an integer (the config spec's values): it stays text */
  textNumbers?: boolean;
  /** a pattern the raw legacy reply must contain (exact uint64 numbers, for one) */
  rawContains?: string;
  /** an answer that differs from call to call: the part of each result to compare (numbers may be JsonNumbers) */
  select?: (result: any) => unknown;
}

/** What the cases read from the running chain (over REST, as a script would). */
export interface Fixture {
  chain: IBeaconChain;
  get(path: string): Promise<any>;
  post(path: string, body: unknown): Promise<any>;
  /** validators 0..3 */
  pubkeys: string[];
  /** the REST JSON of the block at slot 2, and the same block as the legacy interface gives it (integers as numbers) */
  block2: any;
  legacyBlock2: any;
  /** the signed header of that block */
  header2: any;
  peerId: string;
}

/** Reads the fixture from a running chain: REST at `restBase`, the legacy interface at `rpcUrl`. */
export async function makeFixture(chain: IBeaconChain, restBase: string, rpcUrl: string): Promise<Fixture> {
  const dataOf = async (init: RequestInit, path: string): Promise<any> => {
    const res = await fetch(restBase + path, init);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${init.method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text).data;
  };
  const get = (path: string) => dataOf({method: "GET"}, path);
  const post = (path: string, body: unknown) => dataOf({method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)}, path);
  const validators: any[] = await get("/eth/v1/beacon/states/genesis/validators?id=0,1,2,3");
  const legacyBlock = JSON.parse((await postRpc(rpcUrl, {jsonrpc: "2.0", id: 1, method: "get_v1_beacon_blocks_blockId", params: [2]})).text);
  return {
    chain,
    get,
    post,
    pubkeys: validators.map((v) => v.validator.pubkey),
    block2: await get("/eth/v2/beacon/blocks/2"),
    legacyBlock2: legacyBlock.result,
    header2: (await get("/eth/v1/beacon/headers/2")).header,
    peerId: (await get("/eth/v1/node/identity")).peer_id,
  };
}

export const BAD_SIGNATURE = "0x" + "99".repeat(96);
export const FAR_FUTURE_EPOCH = "18446744073709551615";

const get = (path: string): RestCall => ({method: "GET", path});
const post = (path: string, body: unknown): RestCall => ({method: "POST", path, body});
const postText = (path: string, text: string): RestCall => ({method: "POST", path, text});
/** a POST of a v2 route, with the fork of the dev chain's phase0 era */
const postPhase0 = (path: string, body: unknown): RestCall => ({method: "POST", path, body, headers: {"eth-consensus-version": "phase0"}});
const epochNow = (fx: Fixture) => computeEpochAtSlot(fx.chain.currentSlot());

/** An attestation of the node's pool (its own validators attest every slot); waits for one. */
export async function poolAttestation(fx: Fixture): Promise<any> {
  for (let i = 0; i < 20; i++) {
    const pool: any[] = await fx.get("/eth/v2/beacon/pool/attestations");
    if (pool.length > 0) return pool[pool.length - 1];
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("no attestation in the pool");
}

/** A phase0 attestation of the current slot with one bit set, signed by its attester's interop key; from electra on, a SingleAttestation. */
export async function singleAttestation(fx: Fixture, electra = false): Promise<any> {
  const slot = fx.chain.currentSlot();
  const duties: any[] = await fx.post(`/eth/v1/validator/duties/attester/${computeEpochAtSlot(slot)}`, Array.from({length: 64}, (_, i) => String(i)));
  const duty = duties.find((d) => Number(d.slot) === slot);
  const dataJson = await fx.get(`/eth/v1/validator/attestation_data?slot=${slot}&committee_index=${duty.committee_index}`);
  const data = ssz.phase0.AttestationData.fromJson(dataJson);
  const domain = fx.chain.config.getDomain(slot, DOMAIN_BEACON_ATTESTER);
  const signature = interopSecretKey(Number(duty.validator_index)).sign(computeSigningRoot(ssz.phase0.AttestationData, data, domain)).toBytes();
  if (electra) return {committee_index: duty.committee_index, attester_index: duty.validator_index, data: dataJson, signature: toHex(signature)};
  const bits = BitArray.fromSingleBit(Number(duty.committee_length), Number(duty.validator_committee_index));
  return {aggregation_bits: ssz.phase0.CommitteeBits.toJson(bits), data: dataJson, signature: toHex(signature)};
}

/** A block request for the next slot, with its proposer's real RANDAO reveal. */
async function nextBlockRequest(fx: Fixture): Promise<{slot: number; randao: string}> {
  const slot = fx.chain.currentSlot() + 1;
  const epoch = computeEpochAtSlot(slot);
  const duties: any[] = await fx.get(`/eth/v1/validator/duties/proposer/${epoch}`);
  const duty = duties.find((d) => Number(d.slot) === slot);
  const domain = fx.chain.config.getDomain(slot, DOMAIN_RANDAO);
  const randao = interopSecretKey(Number(duty.validator_index)).sign(computeSigningRoot(ssz.Epoch, epoch, domain)).toBytes();
  return {slot, randao: toHex(randao)};
}

export const cases: Record<string, (fx: Fixture) => Promise<Case> | Case> = {
  get_v1_beacon_genesis: () => ({params: [], rest: get("/eth/v1/beacon/genesis"), rawContains: '"genesis_time":1'}),
  get_v1_beacon_states_root: () => ({params: [2], rest: get("/eth/v1/beacon/states/2/root"), result: (body) => body.data.root}),
  get_v1_beacon_states_fork: () => ({params: ["genesis"], rest: get("/eth/v1/beacon/states/genesis/fork")}),
  get_v1_beacon_states_finality_checkpoints: () => ({params: [3], rest: get("/eth/v1/beacon/states/3/finality_checkpoints")}),
  get_v1_beacon_states_stateId_validators: (fx) => ({
    params: ["genesis", [0, "1", fx.pubkeys[2]], ["active_ongoing"]],
    rest: get(`/eth/v1/beacon/states/genesis/validators?id=0,1,${fx.pubkeys[2]}&status=active_ongoing`),
    rawContains: `"exit_epoch":${FAR_FUTURE_EPOCH},"withdrawable_epoch":${FAR_FUTURE_EPOCH}`,
  }),
  get_v1_beacon_states_stateId_validators_validatorId: (fx) => ({params: [2, fx.pubkeys[3]], rest: get("/eth/v1/beacon/states/2/validators/3")}),
  get_v1_beacon_states_stateId_validator_balances: () => ({params: [3, [0, 1]], rest: get("/eth/v1/beacon/states/3/validator_balances?id=0&id=1")}),
  get_v1_beacon_states_stateId_committees_epoch: () => ({
    params: ["genesis", 0, 0, 1],
    rest: get("/eth/v1/beacon/states/genesis/committees?epoch=0&index=0&slot=1"),
  }),
  get_v1_beacon_headers: () => ({params: [2], rest: get("/eth/v1/beacon/headers?slot=2")}),
  get_v1_beacon_headers_blockId: () => ({params: [2], rest: get("/eth/v1/beacon/headers/2")}),
  // republishing a known block is accepted (200); the legacy call sends the block with integers as numbers
  post_v1_beacon_blocks: (fx) => ({params: [fx.legacyBlock2], rest: post("/eth/v1/beacon/blocks", fx.block2), result: "status"}),
  get_v1_beacon_blocks_blockId: () => ({params: [2], rest: get("/eth/v2/beacon/blocks/2")}),
  get_v1_beacon_blocks_blockId_root: () => ({params: ["head"], rest: get("/eth/v1/beacon/blocks/head/root"), result: (body) => body.data.root}),
  get_v1_beacon_blocks_blockId_attestations: () => ({params: [3], rest: get("/eth/v2/beacon/blocks/3/attestations")}),
  get_v1_beacon_pool_attestations: (fx) => {
    const slot = fx.chain.currentSlot() - 1;
    return {params: [slot, 0], rest: get(`/eth/v2/beacon/pool/attestations?slot=${slot}&committee_index=0`)};
  },
  // one attestation (not a list), as the legacy method took it; whichever call comes second is a duplicate the pool ignores
  post_v1_beacon_pool_attestations: async (fx) => {
    const attestation = await singleAttestation(fx);
    return {params: [attestation], rest: postPhase0("/eth/v2/beacon/pool/attestations", [attestation]), result: "empty"};
  },
  get_v1_beacon_pool_attester_slashings: () => ({params: [], rest: get("/eth/v2/beacon/pool/attester_slashings")}),
  // the same attestation twice is no slashing: 400 on both protocols
  post_v1_beacon_pool_attester_slashings: async (fx) => {
    const {data} = await poolAttestation(fx);
    const indexed = {attesting_indices: ["0"], data, signature: BAD_SIGNATURE};
    const slashing = {attestation_1: indexed, attestation_2: indexed};
    return {params: [slashing], rest: postPhase0("/eth/v2/beacon/pool/attester_slashings", slashing), result: "empty", status: 400};
  },
  get_v1_beacon_pool_proposer_slashings: () => ({params: [], rest: get("/eth/v1/beacon/pool/proposer_slashings")}),
  post_v1_beacon_pool_proposer_slashings: (fx) => {
    // the same header twice is no slashing
    const slashing = {signed_header_1: fx.header2, signed_header_2: fx.header2};
    return {params: [slashing], rest: post("/eth/v1/beacon/pool/proposer_slashings", slashing), result: "empty", status: 400};
  },
  get_v1_beacon_pool_voluntary_exits: () => ({params: [], rest: get("/eth/v1/beacon/pool/voluntary_exits")}),
  post_v1_beacon_pool_voluntary_exits: () => {
    const exit = {message: {epoch: "0", validator_index: "5"}, signature: BAD_SIGNATURE};
    return {params: [exit], rest: post("/eth/v1/beacon/pool/voluntary_exits", exit), result: "empty", status: 400};
  },
  get_v1_node_identity: () => ({params: [], rest: get("/eth/v1/node/identity")}),
  get_v1_node_peers: () => ({params: [], rest: get("/eth/v1/node/peers")}),
  // no networking yet: the node knows no peer, not even by its own id
  get_v1_node_peers_peerId: (fx) => ({params: [fx.peerId], rest: get(`/eth/v1/node/peers/${fx.peerId}`), status: 404}),
  get_v1_node_peer_count: () => ({params: [], rest: get("/eth/v1/node/peer_count")}),
  get_v1_node_version: () => ({params: [], rest: get("/eth/v1/node/version")}),
  get_v1_node_syncing: () => ({params: [], rest: get("/eth/v1/node/syncing")}),
  get_v1_node_health: () => ({params: [], rest: get("/eth/v1/node/health"), result: (_body, status) => ({health: status})}),
  // public keys in the legacy call, indices in the REST one: the same duties
  get_v1_validator_duties_attester: (fx) => ({
    params: [epochNow(fx), fx.pubkeys.slice(0, 2)],
    rest: post(`/eth/v1/validator/duties/attester/${epochNow(fx)}`, ["0", "1"]),
  }),
  get_v1_validator_duties_proposer: (fx) => ({params: [epochNow(fx)], rest: get(`/eth/v1/validator/duties/proposer/${epochNow(fx)}`)}),
  get_v1_validator_block: async (fx) => {
    const {slot, randao} = await nextBlockRequest(fx);
    return {params: [slot, randao, "compat test"], rest: get(`/eth/v2/validator/blocks/${slot}?randao_reveal=${randao}&graffiti=compat%20test`)};
  },
  get_v1_validator_attestation_data: (fx) => {
    const slot = fx.chain.currentSlot();
    return {params: [slot, 0], rest: get(`/eth/v1/validator/attestation_data?slot=${slot}&committee_index=0`)};
  },
  get_v1_validator_aggregate_attestation: async (fx) => {
    const {data} = await poolAttestation(fx);
    const root = toHex(ssz.phase0.AttestationData.hashTreeRoot(ssz.phase0.AttestationData.fromJson(data)));
    // the legacy call names no committee: before electra it is the data's index
    const rest = get(`/eth/v2/validator/aggregate_attestation?attestation_data_root=${root}&slot=${data.slot}&committee_index=${data.index}`);
    return {params: [Number(data.slot), root], rest};
  },
  // one aggregate (not a list) with signatures that sign nothing: 400 on both protocols
  post_v1_validator_aggregate_and_proofs: async (fx) => {
    const aggregate = await poolAttestation(fx);
    const proof = {message: {aggregator_index: "1", aggregate, selection_proof: BAD_SIGNATURE}, signature: BAD_SIGNATURE};
    return {params: [proof], rest: postPhase0("/eth/v2/validator/aggregate_and_proofs", [proof]), result: "empty", status: 400};
  },
  post_v1_validator_beacon_committee_subscriptions: (fx) => {
    const slot = fx.chain.currentSlot() + 1;
    const legacy = [{validator_index: 1, committee_index: 0, committees_at_slot: 1, slot, is_aggregator: false}];
    const rest = [{validator_index: "1", committee_index: "0", committees_at_slot: "1", slot: String(slot), is_aggregator: false}];
    return {params: [legacy], rest: post("/eth/v1/validator/beacon_committee_subscriptions", rest), result: "empty"};
  },
  get_v1_config_fork_schedule: () => ({params: [], rest: get("/eth/v1/config/fork_schedule"), rawContains: `"epoch":${FAR_FUTURE_EPOCH}`}),
  get_v1_config_spec: () => ({params: [], rest: get("/eth/v1/config/spec"), textNumbers: true}),
  get_v1_config_deposit_contract: () => ({params: [], rest: get("/eth/v1/config/deposit_contract")}),
  get_v1_debug_beacon_states_stateId: () => ({params: [2], rest: get("/eth/v2/debug/beacon/states/2")}),
  // the removed server's form is the v1 endpoint's: [{root, slot}]
  get_v1_debug_beacon_heads: () => ({params: [], rest: get("/eth/v1/debug/beacon/heads")}),
  get_v2_debug_beacon_heads: () => ({params: [], rest: get("/eth/v2/debug/beacon/heads")}),
  getBeaconHead: () => ({params: [], rest: get("/eth/v1/beacon/headers/head"), result: (body) => body.data.header.message.slot}),
  getChainHead: () => ({params: [], rest: get("/ext/v1/chain/head")}),
  getNodeVersion: () => ({params: [], rest: get("/eth/v1/node/version"), result: (body) => body.data.version}),
  peers: () => ({params: [], rest: get("/ext/v1/network/peers")}),
  getSyncing: () => ({params: [], rest: get("/eth/v1/node/syncing"), result: (body) => body.data.is_syncing}),
  getNetworkPeerId: () => ({params: [], rest: get("/eth/v1/node/identity"), result: (body) => body.data.peer_id}),
  getNetworkPeers: () => ({params: [], rest: get("/ext/v1/network/ids")}),
  getNetworkEnr: () => ({params: [], rest: get("/eth/v1/node/identity"), result: (body) => body.data.enr}),
  setLogLevel: () => ({params: ["WARN"], rest: postText("/ext/v1/chronicles/settings", "WARN")}),
  setGraffiti: () => ({params: ["compat test"], rest: postText("/ext/v1/graffiti", "compat test")}),
  getEth1Chain: () => ({params: [], rest: get("/ext/v1/eth1/chain")}),
  getEth1ProposalData: () => ({params: [], rest: get("/ext/v1/eth1/proposal_data")}),
  // the tasks include each call's own request and sockets: compare the first resources Node keeps alive (id 0)
  debug_getChronosFutures: () => ({
    params: [],
    rest: get("/ext/v1/debug/tasks"),
    select: (tasks: any[]) => tasks.filter((t) => (t.id instanceof JsonNumber ? t.id.text : t.id) === "0").slice(0, 3),
  }),
  debug_getGossipSubPeers: () => ({params: [], rest: get("/ext/v1/debug/gossip/peers")}),
};
