import {MAX_UINT64, PAST_UINT64, UNKNOWN_ROOT, type Sample, type SampleRequest} from "../sampleContext.ts";

/** Samples of the Beacon tag's state contents (balances, committees, queues…) and of the Rewards tag. */


/** A route about one state: ids that name one, one that names none, one malformed; `extra` adds to each request. */
function stateRequests(extra: Partial<SampleRequest> = {}): SampleRequest[] {
  return [
    {label: "head", params: {state_id: "head"}, status: 200, ...extra},
    {label: "finalized", params: {state_id: "finalized"}, status: 200, ...extra},
    {label: "unknown state root", params: {state_id: UNKNOWN_ROOT}, status: 404, ...extra},
    {label: "the largest uint64 slot", params: {state_id: MAX_UINT64}, status: 404, ...extra},
    {label: "malformed id", params: {state_id: "latest"}, status: 400, ...extra},
    {label: "a slot past uint64", params: {state_id: PAST_UINT64}, status: 400, ...extra},
  ];
}

const validatorIdsSample: Sample = () => [
  ...stateRequests({body: ["0", "1"]}),
  {label: "no body: every validator", params: {state_id: "head"}, status: 200},
  {label: "all, by empty list", params: {state_id: "justified"}, body: [], status: 200},
  {label: "unknown index", params: {state_id: "head"}, body: ["100000"], status: 200},
  {label: "malformed id", params: {state_id: "head"}, body: ["0x12"], status: 400},
];

export const stateSamples: Record<string, Sample> = {
  getStateValidatorBalances: () => [
    ...stateRequests(),
    {label: "by index", params: {state_id: "head"}, query: {id: ["0", "1"]}, status: 200},
    {label: "malformed id", params: {state_id: "head"}, query: {id: "0x12"}, status: 400},
  ],
  postStateValidatorBalances: validatorIdsSample,
  postStateValidatorIdentities: validatorIdsSample,
  getEpochCommittees: (ctx) => [
    ...stateRequests(),
    {label: "this epoch, committee 0, one slot", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch(), index: 0, slot: ctx.currentSlot()}, status: 200},
    {label: "far future epoch", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch() + 100}, status: 400},
    {label: "a past epoch the RANDAO mixes cover", params: {state_id: "head"}, query: {epoch: 0}, status: 200},
    {label: "slot outside the epoch: no committee", params: {state_id: "head"}, query: {epoch: 0, slot: ctx.currentSlot()}, status: 200},
    {label: "the largest uint64 slot: no committee", params: {state_id: "head"}, query: {slot: MAX_UINT64}, status: 200},
  ],
  getEpochSyncCommittees: (ctx) => [
    ...stateRequests(),
    {label: "this epoch", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch()}, status: 200},
    {label: "far future epoch", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch() + 10000}, status: 400},
  ],
  getStateRandao: (ctx) => [
    ...stateRequests(),
    {label: "previous epoch", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch() - 1}, status: 200},
    {label: "future epoch", params: {state_id: "head"}, query: {epoch: ctx.currentEpoch() + 100}, status: 400},
  ],
  getPendingDeposits: () => stateRequests(),
  getPendingPartialWithdrawals: () => stateRequests(),
  getPendingConsolidations: () => stateRequests(),
  getProposerLookahead: () => stateRequests(),

  getBlockRewards: () => [
    {label: "head", params: {block_id: "head"}, status: 200},
    {label: "genesis: zeros", params: {block_id: "genesis"}, status: 200},
    {label: "the largest uint64 slot", params: {block_id: MAX_UINT64}, status: 404},
    {label: "finalized", params: {block_id: "finalized"}, status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, status: 404},
    {label: "malformed id", params: {block_id: "0x12"}, status: 400},
  ],
  getAttestationsRewards: (ctx) => [
    {label: "two epochs ago, two validators", params: {epoch: ctx.currentEpoch() - 2}, body: ["0", "1"], status: 200},
    {label: "two epochs ago, everyone", params: {epoch: ctx.currentEpoch() - 2}, body: [], status: 200},
    {label: "current epoch (not yet rewarded)", params: {epoch: ctx.currentEpoch()}, body: [], status: 404},
    {label: "malformed id", params: {epoch: ctx.currentEpoch() - 2}, body: ["zero"], status: 400},
  ],
  getSyncCommitteeRewards: () => [
    {label: "head, two validators", params: {block_id: "head"}, body: ["0", "1"], status: 200},
    {label: "head, everyone", params: {block_id: "head"}, body: [], status: 200},
    {label: "genesis: zeros", params: {block_id: "genesis"}, body: [], status: 200},
    {label: "unknown root", params: {block_id: UNKNOWN_ROOT}, body: [], status: 404},
    {label: "malformed id", params: {block_id: "head"}, body: ["zero"], status: 400},
  ],
};
