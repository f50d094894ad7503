import {MAX_UINT64, PAST_UINT64, UNKNOWN_ROOT, type Sample} from "../sampleContext.ts";

/** Samples of the light-client routes (Beacon tag). */

export const lightClientSamples: Record<string, Sample> = {
  getLightClientBootstrap: async (ctx) => [
    {label: "the genesis block (finalized)", params: {block_root: (await ctx.get("/eth/v1/beacon/blocks/genesis/root")).root}, status: 200},
    {label: "the finalized checkpoint", params: {block_root: (await ctx.get("/eth/v1/beacon/blocks/finalized/root")).root}, status: 200},
    {label: "unknown root", params: {block_root: UNKNOWN_ROOT}, status: 404},
    {label: "malformed root", params: {block_root: "0x12"}, status: 400},
  ],
  getLightClientUpdatesByRange: () => [
    {label: "period 0", query: {start_period: 0, count: 1}, status: 200},
    {label: "more than MAX_REQUEST_LIGHT_CLIENT_UPDATES", query: {start_period: 0, count: 1000}, status: 200},
    {label: "periods the chain has not reached", query: {start_period: MAX_UINT64, count: MAX_UINT64}, status: 200},
    {label: "count 0", query: {start_period: 0, count: 0}, status: 400},
    {label: "malformed period", query: {start_period: "first", count: 1}, status: 400},
    {label: "a period past uint64", query: {start_period: PAST_UINT64, count: 1}, status: 400},
    {label: "no count", query: {start_period: 0}, status: 400},
  ],
  getLightClientFinalityUpdate: () => [{label: "latest", status: 200}],
  getLightClientOptimisticUpdate: () => [{label: "latest", status: 200}],
};
