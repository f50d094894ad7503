import {DOMAIN_APPLICATION_BUILDER} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import {BAD_SIGNATURE, FEE_RECIPIENT, G2_INFINITY, UNKNOWN_ROOT, type Json, type Sample, type SampleContext} from "../sampleContext.ts";

/** Samples of the Validator tag: duties, block and attestation production, aggregation, subscriptions. */

const ALL_INDICES = Array.from({length: 64}, (_, i) => String(i));

/** A block request for the slot after the current one, early in a slot so the clock does not pass it meanwhile. */
const produceBlockSample: Sample = async (ctx) => {
  const slot = (await ctx.nextSlotAt(0.05)) + 1;
  return [
    {label: "next slot", params: {slot}, query: {randao_reveal: G2_INFINITY, skip_randao_verification: "", graffiti: "conformance"}, status: 200},
    {label: "slot already past", params: {slot: 1}, query: {randao_reveal: G2_INFINITY, skip_randao_verification: ""}, status: 400},
    {label: "no randao reveal", params: {slot}, status: 400},
  ];
};

/** The aggregate the pool holds for the submitted attestation (JSON, electra `Attestation`). */
const poolAggregate = (ctx: SampleContext): Promise<Json> =>
  ctx.once("aggregate", async () => {
    const {slot, dataRoot, committeeIndex} = await ctx.submittedAttestation();
    return ctx.get(`/eth/v2/validator/aggregate_attestation?attestation_data_root=${dataRoot}&slot=${slot}&committee_index=${committeeIndex}`);
  });

/** A contribution the pool can make now: the head's sync committee messages, well into a slot. */
/**
 * A slot, subcommittee and block root the pool holds a contribution for: the node's validators
 * sign the head of each slot a third into it, but on a loaded machine their messages (or the
 * slot's block) can come late, so a few slots are tried, each for its head and its parent.
 */
async function contributionQuery(ctx: SampleContext): Promise<Record<string, string | number>> {
  let query: Record<string, string | number> = {};
  for (let attempt = 0; attempt < 6; attempt++) {
    const slot = await ctx.nextSlotAt(0.6);
    const head = await ctx.head();
    const parent = (await ctx.get(`/eth/v1/beacon/headers/${head.root}`)) as {header: {message: {parent_root: string}}};
    for (const root of [head.root, parent.header.message.parent_root]) {
      query = {slot, subcommittee_index: 0, beacon_block_root: root};
      const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
      if ((await fetch(`${ctx.baseUrl}/eth/v1/validator/sync_committee_contribution?${search}`)).status === 200) return query;
    }
  }
  return query;
}

export const validatorSamples: Record<string, Sample> = {
  getProposerDuties: (ctx) => [
    {label: "current epoch", params: {epoch: ctx.currentEpoch()}, status: 200},
    {label: "next epoch", params: {epoch: ctx.currentEpoch() + 1}, status: 200},
    {label: "far future epoch", params: {epoch: ctx.currentEpoch() + 100}, status: 400},
    {label: "malformed epoch", params: {epoch: "one"}, status: 400},
  ],
  getAttesterDuties: (ctx) => [
    {label: "current epoch, all validators", params: {epoch: ctx.currentEpoch()}, body: ALL_INDICES, status: 200},
    {label: "previous epoch, one validator", params: {epoch: ctx.currentEpoch() - 1}, body: ["7"], status: 200},
    {label: "far future epoch", params: {epoch: ctx.currentEpoch() + 100}, body: ["7"], status: 400},
    {label: "indices as numbers", params: {epoch: ctx.currentEpoch()}, body: [7], status: 400},
  ],
  getSyncCommitteeDuties: (ctx) => [
    {label: "current epoch, all validators", params: {epoch: ctx.currentEpoch()}, body: ALL_INDICES, status: 200},
    {label: "far future epoch", params: {epoch: ctx.currentEpoch() + 10000}, body: ["7"], status: 400},
    {label: "not a list", params: {epoch: ctx.currentEpoch()}, body: {indices: ["7"]}, status: 400},
  ],
  produceBlockV3: produceBlockSample,
  produceBlockV2: produceBlockSample,
  produceBlindedBlock: produceBlockSample,
  produceAttestationData: (ctx) => [
    {label: "current slot", query: {slot: ctx.currentSlot(), committee_index: 0}, status: 200},
    {label: "no committee index", query: {slot: ctx.currentSlot()}, status: 400},
    {label: "far future slot", query: {slot: ctx.currentSlot() + 100, committee_index: 0}, status: 400},
  ],
  getAggregatedAttestationV2: async (ctx) => {
    const {slot, dataRoot, committeeIndex} = await ctx.submittedAttestation();
    return [
      {label: "of the submitted attestation", query: {attestation_data_root: dataRoot, slot, committee_index: committeeIndex}, status: 200},
      {label: "unknown data root", query: {attestation_data_root: UNKNOWN_ROOT, slot, committee_index: committeeIndex}, status: 404},
      {label: "no committee index", query: {attestation_data_root: dataRoot, slot}, status: 400},
    ];
  },
  getAggregatedAttestation: async (ctx) => {
    const {slot, dataRoot} = await ctx.submittedAttestation();
    return [{label: "pre-electra form on an electra chain", query: {attestation_data_root: dataRoot, slot}, status: 400}];
  },
  publishAggregateAndProofsV2: async (ctx) => {
    const aggregate = await poolAggregate(ctx);
    const fork = ctx.chain.config.getForkName(Number(aggregate.data.slot));
    const proof = {message: {aggregator_index: "100000", aggregate, selection_proof: BAD_SIGNATURE}, signature: BAD_SIGNATURE};
    return [
      {label: "aggregator not in the committee", headers: {"Eth-Consensus-Version": fork}, body: [proof], status: 400, failures: true},
      {label: "nothing", headers: {"Eth-Consensus-Version": fork}, body: [], status: 200},
    ];
  },
  publishAggregateAndProofs: async (ctx) => {
    const aggregate = await poolAggregate(ctx);
    const phase0Aggregate = {aggregation_bits: aggregate.aggregation_bits, data: aggregate.data, signature: aggregate.signature};
    const proof = {message: {aggregator_index: "0", aggregate: phase0Aggregate, selection_proof: BAD_SIGNATURE}, signature: BAD_SIGNATURE};
    return [{label: "pre-electra aggregate on an electra chain", body: [proof], status: 400, failures: true}];
  },
  prepareBeaconCommitteeSubnet: (ctx) => [
    {
      label: "one subscription",
      body: [{validator_index: "1", committee_index: "0", committees_at_slot: "1", slot: String(ctx.currentSlot() + 1), is_aggregator: false}],
      status: 200,
    },
    {label: "missing fields", body: [{validator_index: "1"}], status: 400},
  ],
  prepareSyncCommitteeSubnets: (ctx) => [
    {label: "one subscription", body: [{validator_index: "1", sync_committee_indices: ["0"], until_epoch: String(ctx.currentEpoch() + 1)}], status: 200},
    {label: "not a list", body: {validator_index: "1"}, status: 400},
  ],
  produceSyncCommitteeContribution: async (ctx) => {
    const query = await contributionQuery(ctx);
    return [
      {label: "head of this slot", query, status: 200},
      {label: "unknown block root", query: {...query, beacon_block_root: UNKNOWN_ROOT}, status: 404},
      {label: "subcommittee out of range", query: {...query, subcommittee_index: 9}, status: 400},
    ];
  },
  publishContributionAndProofs: async (ctx) => {
    const {root} = await ctx.head();
    const contribution = {slot: "1", beacon_block_root: root, subcommittee_index: "0", aggregation_bits: "0x01", signature: BAD_SIGNATURE};
    const signed = {message: {aggregator_index: "0", contribution, selection_proof: BAD_SIGNATURE}, signature: BAD_SIGNATURE};
    return [
      {label: "long-past slot", body: [signed], status: 400, failures: true},
      {label: "nothing", body: [], status: 200},
    ];
  },
  prepareBeaconProposer: () => [
    {label: "a fee recipient", body: [{validator_index: "63", fee_recipient: FEE_RECIPIENT}], status: 200},
    {label: "short address", body: [{validator_index: "63", fee_recipient: "0x1234"}], status: 400},
  ],
  getLiveness: (ctx) => [
    {label: "previous epoch", params: {epoch: ctx.currentEpoch() - 1}, body: ["0", "1"], status: 200},
    {label: "current epoch", params: {epoch: ctx.currentEpoch()}, body: ALL_INDICES, status: 200},
    {label: "far future epoch", params: {epoch: ctx.currentEpoch() + 100}, body: ["0"], status: 400},
    {label: "malformed index", params: {epoch: ctx.currentEpoch()}, body: ["zero"], status: 400},
  ],
  registerValidator: (ctx) => {
    const registration = signedRegistration(ctx, 62);
    return [
      {label: "a signed registration", body: [registration], status: 200},
      {label: "signed by nobody", body: [{...registration, signature: BAD_SIGNATURE}], status: 400, failures: true},
    ];
  },
  submitBeaconCommitteeSelections: (ctx) => [
    {label: "a selection", body: [{validator_index: "1", slot: String(ctx.currentSlot()), selection_proof: BAD_SIGNATURE}], status: 501},
    {label: "no body: 501 before the body is read", status: 501},
  ],
  submitSyncCommitteeSelections: (ctx) => [
    {label: "a selection", body: [{validator_index: "1", slot: String(ctx.currentSlot()), subcommittee_index: "0", selection_proof: BAD_SIGNATURE}], status: 501},
  ],
};

/** A builder registration of an interop validator, signed with its key. */
function signedRegistration(ctx: SampleContext, index: number): Json {
  const sk = interopSecretKey(index);
  const message = {feeRecipient: fromHex(FEE_RECIPIENT), gasLimit: 30_000_000, timestamp: Math.floor(Date.now() / 1000), pubkey: sk.toPublicKey().toBytes()};
  const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, ctx.chain.config.GENESIS_FORK_VERSION, new Uint8Array(32));
  const signature = sk.sign(computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, message, domain)).toBytes();
  return ssz.bellatrix.SignedValidatorRegistrationV1.toJson({message, signature});
}
