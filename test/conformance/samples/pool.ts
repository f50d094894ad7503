import {BAD_SIGNATURE, FEE_RECIPIENT, MAX_UINT64, type Sample, type SampleContext} from "../sampleContext.ts";

/** Samples of the Beacon tag's operation pools: reads, real submissions where cheap, and rejected ones. */

const forkNow = (ctx: SampleContext): string => ctx.chain.config.getForkName(ctx.currentSlot());

/** An IndexedAttestation (electra) of the submitted attestation's data, signed by nobody. */
async function indexedAttestation(ctx: SampleContext) {
  const {json} = await ctx.submittedAttestation();
  return {attesting_indices: [json.attester_index], data: json.data, signature: BAD_SIGNATURE};
}

/** The head block's header, signed by nobody. */
async function signedHeader(ctx: SampleContext) {
  const {header} = await ctx.get("/eth/v1/beacon/headers/head");
  return {message: header.message, signature: BAD_SIGNATURE};
}

export const poolSamples: Record<string, Sample> = {
  getPoolAttestationsV2: (ctx) => [
    {label: "all", status: 200},
    {label: "this slot, committee 0", query: {slot: ctx.currentSlot(), committee_index: 0}, status: 200},
    {label: "the largest uint64 slot: none", query: {slot: MAX_UINT64}, status: 200},
    {label: "malformed slot", query: {slot: "now"}, status: 400},
  ],
  getPoolAttestations: () => [
    {label: "pre-electra form on an electra chain: none it can carry", status: 200},
    {label: "the largest uint64 slot", query: {slot: MAX_UINT64}, status: 200},
  ],
  submitPoolAttestationsV2: async (ctx) => {
    const {json, slot} = await ctx.submittedAttestation();
    const fork = ctx.chain.config.getForkName(slot);
    return [
      {label: "a signed single attestation", headers: {"Eth-Consensus-Version": fork}, body: [json], status: 200},
      {label: "attester not in the committee", headers: {"Eth-Consensus-Version": fork}, body: [{...json, attester_index: "100000"}], status: 400, failures: true},
      {label: "no consensus version", body: [json], status: 400},
    ];
  },
  submitPoolAttestations: async (ctx) => {
    const {json} = await ctx.submittedAttestation();
    const phase0Attestation = {aggregation_bits: "0x03", data: json.data, signature: json.signature};
    return [{label: "a pre-electra attestation on an electra chain", body: [phase0Attestation], status: 400, failures: true}];
  },

  getPoolAttesterSlashingsV2: () => [{label: "all", status: 200}],
  getPoolAttesterSlashings: () => [{label: "pre-electra form on an electra chain: none it can carry", status: 200}],
  submitPoolAttesterSlashingsV2: async (ctx) => {
    const attestation = await indexedAttestation(ctx);
    return [
      {label: "the same vote twice", headers: {"Eth-Consensus-Version": forkNow(ctx)}, body: {attestation_1: attestation, attestation_2: attestation}, status: 400},
      {label: "not a slashing", headers: {"Eth-Consensus-Version": forkNow(ctx)}, body: {attestation_1: attestation}, status: 400},
    ];
  },
  submitPoolAttesterSlashings: async (ctx) => {
    const attestation = await indexedAttestation(ctx);
    return [{label: "pre-electra form on an electra chain", body: {attestation_1: attestation, attestation_2: attestation}, status: 400}];
  },
  getPoolProposerSlashings: () => [{label: "all", status: 200}],
  submitPoolProposerSlashings: async (ctx) => {
    const header = await signedHeader(ctx);
    return [
      {label: "the same header twice", body: {signed_header_1: header, signed_header_2: header}, status: 400},
      {label: "not a slashing", body: [header], status: 400},
    ];
  },
  getPoolVoluntaryExits: () => [{label: "all", status: 200}],
  submitPoolVoluntaryExit: () => [
    {label: "unsigned exit", body: {message: {epoch: "0", validator_index: "5"}, signature: BAD_SIGNATURE}, status: 400},
    {label: "no signature", body: {message: {epoch: "0", validator_index: "5"}}, status: 400},
  ],
  getPoolBLSToExecutionChanges: () => [{label: "all", status: 200}],
  submitPoolBLSToExecutionChange: async (ctx) => {
    const change = {message: {validator_index: "5", from_bls_pubkey: await ctx.pubkey(5), to_execution_address: FEE_RECIPIENT}, signature: BAD_SIGNATURE};
    return [
      {label: "unsigned change", body: [change], status: 400, failures: true},
      {label: "not a list", body: change, status: 400},
    ];
  },
  submitPoolSyncCommitteeSignatures: async (ctx) => {
    const {slot, root} = await ctx.head();
    const message = {slot: String(slot), beacon_block_root: root, validator_index: "100000", signature: BAD_SIGNATURE};
    return [
      {label: "nothing", body: [], status: 200},
      {label: "validator not in the sync committee", body: [message], status: 400, failures: true},
      {label: "long-past slot", body: [{...message, slot: "1", validator_index: "0"}], status: 400, failures: true},
      {label: "not a list", body: message, status: 400},
    ];
  },
};
