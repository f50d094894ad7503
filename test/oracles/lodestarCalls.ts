import {ssz} from "../../node_modules/@lodestar/api/node_modules/@lodestar/types/lib/index.js";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {fromHex, toHex} from "@lodestar/utils";
import {type Fork, type OracleNode, forkSeq} from "./lodestarApi.ts";

/**
 * What @lodestar/api 1.48.0 is asked of each route of our table, on a node of each fork: the
 * arguments in its own terms (it writes the request), and which answers must match between JSON
 * and SSZ. Routes it lacks, or that are not asked here, are listed with the reason, so that a
 * route added to the table without either fails the test.
 */

/** What the calls of one fork are built from: the node's chain, read once the fork has a few blocks. */
export interface CallContext {
  n: OracleNode;
  /** the fork of the head block */
  fork: Fork;
  headSlot: number;
  headRoot: string;
  headStateRoot: string;
  finalizedEpoch: number;
  finalizedRoot: string;
  /** the fork of the finalized checkpoint's block */
  finalizedFork: Fork;
  currentSlot(): number;
}

export interface Call {
  label: string;
  /** a function for arguments that must be fresh when each request leaves (slots, epochs of the clock) */
  args: Record<string, unknown> | (() => Record<string, unknown> | Promise<Record<string, unknown>>);
  /** the answer depends only on the arguments: JSON and SSZ must read back the same (else only each must read) */
  stable?: boolean;
  /** accepted statuses (200 unless given) */
  statuses?: number[];
  /** a refusal that a moving chain can cause: the request is sent once more (its arguments made again) */
  retryOn?: RegExp;
}

/**
 * An answer the spec allows that Lodestar's client cannot read: the call must still fail, with
 * this message (so the note goes once either side changes), and the spec's text says why ours stands.
 */
export interface KnownRefusal {
  forks?: Fork[];
  format?: "json" | "ssz";
  error: RegExp;
  spec: string;
}

export interface Entry {
  /** the first fork the route serves (the node refuses it before, as the spec says) */
  since?: Fork;
  /** the last fork it serves */
  until?: Fork;
  refusal?: KnownRefusal;
  calls(c: CallContext): Call[] | Promise<Call[]>;
}

const VALIDATORS = Array.from({length: 64}, (_, i) => i);
const G2_INFINITY = new Uint8Array(96);
G2_INFINITY[0] = 0xc0;
const epochOf = (slot: number) => computeEpochAtSlot(slot);

const state = (label: string, extra: Record<string, unknown> = {}) => (c: CallContext): Call[] => [{label, args: {stateId: c.headStateRoot, ...extra}, stable: true}];
const block = (extra: Record<string, unknown> = {}) => (c: CallContext): Call[] => [{label: "head block by root", args: {blockId: c.headRoot, ...extra}, stable: true}];
const none = (label = "no arguments", stable = false) => (): Call[] => [{label, args: {}, stable}];

export const CALLS: Record<string, Entry> = {
  // beacon: genesis, states
  getGenesis: {calls: none("genesis", true)},
  getStateRoot: {calls: state("head state by root")},
  getStateFork: {calls: state("head state by root")},
  getStateFinalityCheckpoints: {calls: state("head state by root")},
  getStateRandao: {calls: state("head state by root")},
  getStateValidators: {calls: (c) => [...state("two validators", {validatorIds: [0, 1]})(c), ...state("all")(c)]},
  postStateValidators: {calls: state("two validators, a status", {validatorIds: [0, 1], statuses: ["active_ongoing"]})},
  getStateValidator: {calls: state("validator 1", {validatorId: 1})},
  getStateValidatorBalances: {calls: state("two validators", {validatorIds: [0, 1]})},
  postStateValidatorBalances: {calls: state("two validators", {validatorIds: [0, 1]})},
  postStateValidatorIdentities: {calls: state("two validators", {validatorIds: [0, 1]})},
  getEpochCommittees: {calls: state("head state by root")},
  getEpochSyncCommittees: {since: "altair", calls: state("head state by root")},
  getPendingDeposits: {since: "electra", calls: state("head state by root")},
  getPendingPartialWithdrawals: {since: "electra", calls: state("head state by root")},
  getPendingConsolidations: {since: "electra", calls: state("head state by root")},
  getProposerLookahead: {since: "fulu", calls: state("head state by root")},
  // beacon: blocks
  getBlockRoot: {calls: block()},
  getBlockHeader: {calls: block()},
  getBlockHeaders: {calls: (c) => [{label: "at the head's slot", args: {slot: c.headSlot}, stable: true}, {label: "no filter (the head)", args: {}}]},
  getBlockV2: {calls: block()},
  getBlindedBlock: {calls: block()},
  getBlockAttestationsV2: {calls: block()},
  // from fulu a node that does not custody half the columns has no blob sidecars to give (404); getBlobs is the fulu form
  getBlobSidecars: {since: "deneb", until: "electra", calls: block()},
  getBlobs: {since: "deneb", calls: block()},
  getBlockRewards: {since: "altair", calls: block()},
  getAttestationsRewards: {
    refusal: {
      error: /JSON expected key inclusion_delay is undefined/,
      spec: "beacon-APIs rewards.yaml: AttestationRewards and IdealAttestationRewards require [validator_index|effective_balance, head, target, source, inactivity]; inclusion_delay is 'phase0 only' (Lodestar's type requires it on every fork)",
    },
    // an epoch is rewarded at the end of the next: two epochs back is the fork before the last
    calls: (c) => {
      const epoch = epochOf(c.headSlot) - 2;
      return epoch < 0 ? [] : [{label: `epoch ${epoch} (${c.n.forkAt(epoch * 8)}), two validators`, args: {epoch, validatorIds: [0, 1]}, stable: true}];
    },
  },
  getSyncCommitteeRewards: {since: "altair", calls: block({validatorIds: [0, 1]})},
  // beacon: pools
  getPoolAttestationsV2: {calls: none()},
  getPoolAttesterSlashingsV2: {calls: none()},
  getPoolProposerSlashings: {calls: none()},
  getPoolVoluntaryExits: {calls: none()},
  getPoolBLSToExecutionChanges: {calls: none()},
  // config
  getSpec: {calls: none("the spec", true)},
  getForkSchedule: {calls: none("the schedule", true)},
  getDepositContract: {calls: none("the contract", true)},
  // debug
  getStateV2: {calls: (c) => [...state("head state by root")(c), {label: "finalized", args: {stateId: "finalized"}}]},
  getDebugChainHeadsV2: {calls: none()},
  getDebugForkChoice: {calls: none()},
  getDebugDataColumnSidecars: {since: "fulu", calls: block()},
  // node
  getNetworkIdentity: {
    refusal: {
      forks: ["phase0"],
      error: /JSON expected key syncnets is undefined/,
      spec: "beacon-APIs p2p.yaml MetaData requires [seq_number, attnets]; syncnets 'is not present in phase0' (Lodestar's type requires it)",
    },
    calls: none(),
  },
  getPeers: {calls: none()},
  getPeerCount: {calls: none()},
  getNodeVersion: {calls: none("version", true)},
  getSyncingStatus: {calls: none()},
  getHealth: {calls: () => [{label: "health", args: {}, statuses: [200, 206]}]},
  // validator
  getProposerDuties: {calls: (c) => [{label: "the head's epoch", args: {epoch: epochOf(c.headSlot)}}]},
  getAttesterDuties: {calls: (c) => [{label: "the head's epoch, every validator", args: {epoch: epochOf(c.headSlot), indices: VALIDATORS}}]},
  getSyncCommitteeDuties: {since: "altair", calls: (c) => [{label: "the head's epoch, every validator", args: {epoch: epochOf(c.headSlot), indices: VALIDATORS}}]},
  produceBlockV3: {
    // on a loaded machine the head can reach the next slot before the block is made (a 400)
    calls: (c) => [
      {
        label: "next slot",
        args: () => ({slot: c.currentSlot() + 1, randaoReveal: G2_INFINITY, graffiti: "oracle", skipRandaoVerification: true}),
        retryOn: /is not after the head slot/,
      },
    ],
  },
  produceAttestationData: {calls: (c) => [{label: "current slot, committee 0", args: () => ({slot: c.currentSlot(), committeeIndex: 0})}]},
  getAggregatedAttestationV2: {
    // the aggregate of the first attestation of the latest block that has one (the node's validators made it)
    async calls(c) {
      type Attestation = {data: {slot: number; index: number}; committeeBits?: {getTrueBitIndexes(): number[]}};
      let attestation: Attestation | undefined;
      for (let blockId = c.headRoot, i = 0; !attestation && i < 4; i++) {
        const block: {parentRoot: Uint8Array; body: unknown} = (await c.n.api.beacon.getBlockV2({blockId})).value().message;
        attestation = (block.body as {attestations: Attestation[]}).attestations[0];
        blockId = toHex(block.parentRoot);
      }
      if (!attestation) throw new Error(`no attestation in the ${c.fork} head block or its 3 ancestors`);
      const committeeIndex = attestation.committeeBits ? attestation.committeeBits.getTrueBitIndexes()[0] : attestation.data.index;
      const attestationDataRoot = ssz.phase0.AttestationData.hashTreeRoot(attestation.data as never);
      return [{label: "of the head block's first attestation", args: {attestationDataRoot, slot: attestation.data.slot, committeeIndex}}];
    },
  },
  produceSyncCommitteeContribution: {
    since: "altair",
    // found again before each request: pools keep a slot's messages for two slots
    calls: (c) => [{label: "one the pool holds", args: () => heldContribution(c)}],
  },
  prepareBeaconCommitteeSubnet: {
    calls: (c) => [{label: "one subscription", args: {subscriptions: [{validatorIndex: 1, committeeIndex: 0, committeesAtSlot: 1, slot: c.currentSlot() + 1, isAggregator: false}]}}],
  },
  prepareSyncCommitteeSubnets: {
    since: "altair",
    calls: (c) => [{label: "one subscription", args: {subscriptions: [{validatorIndex: 1, syncCommitteeIndices: [0], untilEpoch: epochOf(c.currentSlot()) + 1}]}}],
  },
  prepareBeaconProposer: {calls: () => [{label: "one proposer", args: {proposers: [{validatorIndex: "1", feeRecipient: "0x" + "fe".repeat(20)}]}}]},
  getLiveness: {calls: (c) => [{label: "the current epoch, two validators", args: () => ({epoch: epochOf(c.currentSlot()), indices: [0, 1]})}]},
  // light client
  getLightClientBootstrap: {
    since: "altair",
    calls: (c) => [
      {label: "head block", args: {blockRoot: c.headRoot}, stable: true},
      ...(c.finalizedEpoch > 0 && forkSeq(c.finalizedFork) >= forkSeq("altair") ? [{label: "finalized block", args: {blockRoot: c.finalizedRoot}, stable: true}] : []),
    ],
  },
  getLightClientUpdatesByRange: {
    since: "altair",
    refusal: {
      format: "ssz",
      error: /Unknown forkDigest/,
      spec: "beacon-APIs light_client updates: each SSZ item is prefixed by compute_fork_digest(fork_version, genesis_validators_root); Lodestar's client knows the genesis_validators_root of the public networks only (zero for any other): a dev chain's digests are unknown to it",
    },
    calls: () => [{label: "period 0", args: {startPeriod: 0, count: 1}}],
  },
  // before the chain finalizes, with the zero finalized header of full-node.md
  getLightClientFinalityUpdate: {since: "altair", calls: none()},
  getLightClientOptimisticUpdate: {since: "altair", calls: none()},
};

/**
 * A contribution the pool holds: of the head or its parent, in the first subcommittee that has
 * one (the node's validators sign in each slot, but on a loaded machine some messages come late).
 */
async function heldContribution(c: CallContext): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const head = (await c.n.api.beacon.getBlockHeader({blockId: "head"})).value().header.message;
    const parentSlot = (await c.n.api.beacon.getBlockHeader({blockId: toHex(head.parentRoot)})).value().header.message.slot;
    const headRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(head);
    for (const [slot, root] of [[head.slot, headRoot], [parentSlot, head.parentRoot]] as const) {
      for (let subcommitteeIndex = 0; subcommitteeIndex < 4; subcommitteeIndex++) {
        const query = `slot=${slot}&subcommittee_index=${subcommitteeIndex}&beacon_block_root=${toHex(root)}`;
        if ((await fetch(`${c.n.baseUrl}/eth/v1/validator/sync_committee_contribution?${query}`)).status === 200) return {slot, subcommitteeIndex, beaconBlockRoot: root};
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("the pool held no sync committee contribution of the head or its parent for 4 s");
}

/** Routes of both tables not asked above, and why. */
export const NOT_CALLED: Record<string, string> = {
  eventstream: "read in its own test (an event stream, not a request)",
  getPeer: "needs a connected peer: the node runs alone (getPeers reads the empty list)",
  publishBlockV2: "takes a signed block and answers with no body",
  publishBlindedBlockV2: "takes a signed block and answers with no body",
  submitPoolAttestationsV2: "takes signed attestations and answers with no body",
  submitPoolAttesterSlashingsV2: "takes a signed slashing and answers with no body",
  submitPoolProposerSlashings: "takes a signed slashing and answers with no body",
  submitPoolVoluntaryExit: "takes a signed exit and answers with no body",
  submitPoolBLSToExecutionChange: "takes signed changes and answers with no body",
  submitPoolSyncCommitteeSignatures: "takes signed messages and answers with no body",
  publishAggregateAndProofsV2: "takes signed aggregates and answers with no body",
  publishContributionAndProofs: "takes signed contributions and answers with no body",
  registerValidator: "takes signed registrations and answers with no body",
  submitBeaconCommitteeSelections: "answers 501: distributed-validator selections are not served",
  submitSyncCommitteeSelections: "answers 501: distributed-validator selections are not served",
};

/** Our routes @lodestar/api 1.48.0 does not define, and why. */
export const NOT_IN_LODESTAR: Record<string, string> = {
  publishBlock: "v1, removed from the spec: Lodestar keeps only v2",
  publishBlindedBlock: "v1, removed from the spec: Lodestar keeps only v2",
  produceBlindedBlock: "v1 blinded block production, removed from the spec (produceBlockV3 replaces it): Lodestar no longer defines it",
  getBlockAttestations: "v1, removed from the spec: Lodestar keeps only v2",
  getPoolAttestations: "v1, removed from the spec: Lodestar keeps only v2",
  submitPoolAttestations: "v1, removed from the spec: Lodestar keeps only v2",
  getPoolAttesterSlashings: "v1, removed from the spec: Lodestar keeps only v2",
  submitPoolAttesterSlashings: "v1, removed from the spec: Lodestar keeps only v2",
  getState: "v1, removed from the spec: Lodestar keeps only v2",
  getDebugChainHeads: "v1, removed from the spec: Lodestar keeps only v2",
  produceBlockV2: "v2, removed from the spec: Lodestar keeps only v3",
  getAggregatedAttestation: "v1, removed from the spec: Lodestar keeps only v2",
  publishAggregateAndProofs: "v1, removed from the spec: Lodestar keeps only v2",
  getGraffiti: "our extension (/ext/v1), outside the Beacon API",
  setGraffiti: "our extension (/ext/v1), outside the Beacon API",
  setLogLevel: "our extension (/ext/v1), outside the Beacon API",
  getChainHead: "our extension (/ext/v1), outside the Beacon API",
  getNetworkPeerIds: "our extension (/ext/v1), outside the Beacon API",
  getNetworkPeers: "our extension (/ext/v1), outside the Beacon API",
  getEth1Chain: "our extension (/ext/v1), outside the Beacon API",
  getEth1ProposalData: "our extension (/ext/v1), outside the Beacon API",
  getDebugTasks: "our extension (/ext/v1), outside the Beacon API",
  getDebugGossipPeers: "our extension (/ext/v1), outside the Beacon API",
};

export const servedOn = (entry: Entry, fork: Fork) =>
  (entry.since === undefined || forkSeq(fork) >= forkSeq(entry.since)) && (entry.until === undefined || forkSeq(fork) <= forkSeq(entry.until));
