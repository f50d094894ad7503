import {MAX_UINT64, PAST_UINT64, UNKNOWN_ROOT, type Json, type Sample, type SampleContext, type SampleRequest} from "../sampleContext.ts";

/** Samples of the Beacon tag: genesis, states and their validators, blocks. (Pools: pool.ts; state contents and rewards: states.ts.) */

/** The head block as published (`SignedBlockContents` from deneb on), with its fork. */
async function headBlockContents(ctx: SampleContext): Promise<{fork: string; contents: Json}> {
  const {version, data} = await ctx.getBody("/eth/v2/beacon/blocks/head");
  const withBlobs = !["phase0", "altair", "bellatrix", "capella"].includes(version);
  return {fork: version, contents: withBlobs ? {signed_block: data, kzg_proofs: [], blobs: []} : data};
}


/** A route about one block: a few ids that name one, one that names none, one malformed. */
function blockSample(): SampleRequest[] {
  return [
    {label: "head", params: {block_id: "head"}, status: 200},
    {label: "finalized", params: {block_id: "finalized"}, status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
    {label: "the largest uint64 slot", params: {block_id: MAX_UINT64}, status: 404},
    {label: "malformed id", params: {block_id: "0x12"}, status: 400},
    {label: "a slot past uint64", params: {block_id: PAST_UINT64}, status: 400},
  ];
}

const stateSample =
  (extra: (ctx: SampleContext) => Promise<{label: string; params: Record<string, string>; status: number}[]> = async () => []): Sample =>
  async (ctx) => [
    {label: "head", params: {state_id: "head"}, status: 200},
    {label: "finalized", params: {state_id: "finalized"}, status: 200},
    {label: "by slot", params: {state_id: (await ctx.head()).slot}, status: 200},
    {label: "unknown state root", params: {state_id: UNKNOWN_ROOT}, status: 404},
    {label: "the largest uint64 slot", params: {state_id: MAX_UINT64}, status: 404},
    {label: "malformed id", params: {state_id: "current"}, status: 400},
    ...(await extra(ctx)),
  ];

export const beaconSamples: Record<string, Sample> = {
  getGenesis: () => [{label: "genesis", status: 200}],
  getStateRoot: stateSample(async () => [{label: "justified", params: {state_id: "justified"}, status: 200}]),
  getStateFork: stateSample(async () => [{label: "genesis", params: {state_id: "genesis"}, status: 200}]),
  getStateFinalityCheckpoints: stateSample(),
  getStateValidators: async (ctx) => [
    {label: "all", params: {state_id: "head"}, status: 200},
    {
      label: "by index and key, active",
      params: {state_id: "head"},
      query: {id: ["0", await ctx.pubkey(1)], status: ["active_ongoing", "active"]},
      status: 200,
    },
    {label: "unknown status", params: {state_id: "head"}, query: {status: "sleeping"}, status: 400},
    {label: "too many ids", params: {state_id: "head"}, query: {id: Array.from({length: 65}, (_, i) => String(i)).join(",")}, status: 414},
    {label: "unknown state", params: {state_id: UNKNOWN_ROOT}, status: 404},
  ],
  postStateValidators: async (ctx) => [
    {label: "ids and statuses", params: {state_id: "head"}, body: {ids: ["2", await ctx.pubkey(3)], statuses: ["active"]}, status: 200},
    {label: "no filter", params: {state_id: "finalized"}, body: {}, status: 200},
    {label: "ids not a list", params: {state_id: "head"}, body: {ids: "2"}, status: 400},
    {label: "unknown state", params: {state_id: UNKNOWN_ROOT}, body: {}, status: 404},
  ],
  getStateValidator: async (ctx) => [
    {label: "by index", params: {state_id: "head", validator_id: 5}, status: 200},
    {label: "by key", params: {state_id: "finalized", validator_id: await ctx.pubkey(6)}, status: 200},
    {label: "unknown index", params: {state_id: "head", validator_id: 100000}, status: 404},
    {label: "malformed id", params: {state_id: "head", validator_id: "0x1234"}, status: 400},
  ],
  getBlockRoot: async (ctx) => [
    {label: "head", params: {block_id: "head"}, status: 200},
    {label: "finalized", params: {block_id: "finalized"}, status: 200},
    {label: "by root", params: {block_id: (await ctx.head()).root}, status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
    {label: "justified is no block id", params: {block_id: "justified"}, status: 400},
  ],
  getBlockHeader: () => [
    {label: "head", params: {block_id: "head"}, status: 200},
    {label: "genesis", params: {block_id: "genesis"}, status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
    {label: "malformed id", params: {block_id: "tip"}, status: 400},
  ],
  getBlockHeaders: async (ctx) => {
    const head = await ctx.get("/eth/v1/beacon/headers/head");
    return [
      {label: "head", status: 200},
      {label: "by slot", query: {slot: head.header.message.slot}, status: 200},
      {label: "by parent root", query: {parent_root: head.header.message.parent_root}, status: 200},
      {label: "the largest uint64 slot: none", query: {slot: MAX_UINT64}, status: 200},
      {label: "malformed slot", query: {slot: "-1"}, status: 400},
    ];
  },
  getBlockV2: async (ctx) => [
    ...blockSample(),
    {label: "genesis", params: {block_id: "genesis"}, status: 200},
    {label: "by slot", params: {block_id: (await ctx.head()).slot}, status: 200},
  ],
  publishBlockV2: async (ctx) => {
    const {fork, contents} = await headBlockContents(ctx);
    return [
      {label: "the head block again", query: {broadcast_validation: "gossip"}, headers: {"Eth-Consensus-Version": fork}, body: contents, status: 200},
      {label: "not a block", headers: {"Eth-Consensus-Version": fork}, body: {signed_block: {}}, status: 400},
      {label: "unknown consensus version", headers: {"Eth-Consensus-Version": "gloas"}, body: contents, status: 400},
      {label: "unsupported content type", headers: {"Eth-Consensus-Version": fork, "content-type": "text/plain"}, rawBody: "block", status: 415},
    ];
  },
  publishBlock: async (ctx) => [
    {label: "the head block again", body: (await headBlockContents(ctx)).contents, status: 200},
    {label: "not JSON", rawBody: "{", status: 400},
  ],
  getBlockAttestationsV2: blockSample,
  getBlockAttestations: () => [
    {label: "the head block, in its fork's JSON form", params: {block_id: "head"}, status: 200},
    {label: "an electra block as SSZ of the pre-electra type", params: {block_id: "head"}, headers: {accept: "application/octet-stream"}, status: 406},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
  ],
  getBlindedBlock: blockSample,
  publishBlindedBlockV2: async (ctx) => {
    const {version, data} = await ctx.getBody("/eth/v1/beacon/blinded_blocks/head");
    return [
      {label: "the head block again, blinded", query: {broadcast_validation: "consensus"}, headers: {"Eth-Consensus-Version": version}, body: data, status: 200},
      {label: "not a block", headers: {"Eth-Consensus-Version": version}, body: {message: {}}, status: 400},
    ];
  },
  publishBlindedBlock: async (ctx) => [
    {label: "the head block again, blinded", body: (await ctx.getBody("/eth/v1/beacon/blinded_blocks/head")).data, status: 200},
    {label: "not a block", body: [], status: 400},
  ],
  // The deprecated route has no fulu form in the spec: on the fulu dev chain it names getBlobs.
  getBlobSidecars: () => [
    ...blockSample().map((req) => (req.status === 200 ? {...req, status: 400} : req)),
    {label: "some indices", params: {block_id: "head"}, query: {indices: "0,1"}, status: 400},
    {label: "malformed index", params: {block_id: "head"}, query: {indices: "first"}, status: 400},
  ],
  getBlobs: () => [
    ...blockSample(),
    {label: "by versioned hash", params: {block_id: "head"}, query: {versioned_hashes: "0x01" + "ab".repeat(31)}, status: 200},
  ],
};
