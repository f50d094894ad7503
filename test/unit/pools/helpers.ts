import {verifyOnThisThread} from "../../../src/bls/verifier.ts";
import {BitArray} from "@chainsafe/ssz";
import {type BeaconConfig, createBeaconConfig} from "@lodestar/config";
import {
  BLS_WITHDRAWAL_PREFIX,
  DOMAIN_BEACON_ATTESTER,
  DOMAIN_BEACON_PROPOSER,
  DOMAIN_RANDAO,
  FAR_FUTURE_EPOCH,
  ForkSeq,
  MAX_EFFECTIVE_BALANCE,
  SYNC_COMMITTEE_SIZE,
} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  computeEpochAtSlot,
  computeSigningRoot,
  computeStartSlotAtEpoch,
  createCachedBeaconState,
  createPubkeyCache,
  getBlockRootAtSlot,
  interopSecretKey,
  processSlots,
  stateTransition,
} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {createHash} from "node:crypto";
import {appendInteropValidators, createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {type DevFork, devChainConfig} from "../../../src/config/chainConfig.ts";
import {OperationPools, type PoolDeps, type PoolEvents} from "../../../src/pools/index.ts";
import {G2_POINT_AT_INFINITY} from "../../../src/pools/signatures.ts";

export interface TestEnv {
  config: BeaconConfig;
  genesis: CachedBeaconStateAllForks;
  /** the root of the genesis block: the head (and every block root) of this empty chain */
  headRoot: Uint8Array;
  /** the head state: genesis advanced to the current slot */
  state: CachedBeaconStateAllForks;
  pools: OperationPools;
  deps: PoolDeps;
  votes: {indices: number[]; root: string; targetEpoch: number}[];
  events: {topic: keyof PoolEvents; value: unknown}[];
  setSlot(slot: number): void;
  /** the state at `slot` (empty slots from genesis) */
  stateAt(slot: number): CachedBeaconStateAllForks;
}

const genesisCache = new Map<string, CachedBeaconStateAllForks>();

/**
 * A chain of `count` interop validators with only its genesis block, the clock at `slot`.
 * The cached state is rebuilt with a config that knows the genesis validators root, so
 * state-transition's own signature checks use the same domains as the pools.
 */
export function createEnv(fork: DevFork, slot: number, opts: {count?: number; overrides?: Record<string, number>} = {}): TestEnv {
  const count = opts.count ?? 64;
  const chainConfig = {...devChainConfig({secondsPerSlot: 6, genesisFork: fork, forkEpochs: {}}), ...opts.overrides};
  const cacheKey = `${fork}:${count}:${JSON.stringify(opts.overrides ?? {})}`;
  let genesis = genesisCache.get(cacheKey);
  if (!genesis) {
    const raw = createInteropGenesisState(chainConfig, Math.min(count, 64), 0);
    if (count > 64) appendInteropValidators(raw, count);
    const config = createBeaconConfig(chainConfig, raw.genesisValidatorsRoot);
    genesis = createCachedBeaconState(raw, {config, pubkeyCache: createPubkeyCache()});
    genesisCache.set(cacheKey, genesis);
  }
  const config = genesis.config;
  const headRoot = getBlockRootAtSlot(processSlots(genesis, 1), 0);
  const states = new Map<number, CachedBeaconStateAllForks>();
  const stateAt = (s: number) => {
    let state = states.get(s);
    if (!state) {
      state = s === 0 ? genesis : processSlots(genesis, s);
      states.set(s, state);
    }
    return state;
  };
  let currentSlot = slot;
  const votes: TestEnv["votes"] = [];
  const deps: PoolDeps = {
    config,
    currentSlot: () => currentSlot,
    getStateForEpoch: async (epoch) => stateAt(Math.max(currentSlot, computeStartSlotAtEpoch(epoch))),
    // one chain (genesis and empty slots): every target's checkpoint state is that chain's
    getTargetShuffling: async ({epoch}) => stateAt(Math.max(currentSlot, computeStartSlotAtEpoch(epoch))).epochCtx.getShufflingAtEpoch(epoch),
    pubkeyCache: () => genesis.epochCtx.pubkeyCache,
    hasBlock: (rootHex) => rootHex === toRootHex(headRoot),
    onAttestationVotes: (indices, root, targetEpoch) => votes.push({indices, root, targetEpoch}),
    verifier: verifyOnThisThread,
  };
  const pools = new OperationPools(deps);
  const events: TestEnv["events"] = [];
  for (const topic of ["attestation", "single_attestation", "voluntary_exit", "proposer_slashing", "attester_slashing", "bls_to_execution_change", "contribution_and_proof"] as const) {
    pools.emitter.on(topic, (value: unknown) => events.push({topic, value}));
  }
  return {
    config,
    genesis,
    headRoot,
    get state() {
      return stateAt(currentSlot);
    },
    pools,
    deps,
    votes,
    events,
    setSlot: (s) => {
      currentSlot = s;
    },
    stateAt,
  };
}

/** The attestation data an honest attester of this empty chain signs at `slot`. */
export function attestationData(env: TestEnv, slot: number, index: number): phase0.AttestationData {
  const state = env.stateAt(slot);
  const source = state.currentJustifiedCheckpoint.toValue();
  return {slot, index, beaconBlockRoot: env.headRoot, source, target: {epoch: computeEpochAtSlot(slot), root: env.headRoot}};
}

export function signAttestationData(env: TestEnv, data: phase0.AttestationData, validatorIndex: number): Uint8Array {
  const domain = env.config.getDomain(data.slot, DOMAIN_BEACON_ATTESTER, computeStartSlotAtEpoch(data.target.epoch));
  return interopSecretKey(validatorIndex).sign(computeSigningRoot(ssz.phase0.AttestationData, data, domain)).toBytes();
}

export function committeeAt(env: TestEnv, slot: number, index: number): number[] {
  return Array.from(env.stateAt(slot).epochCtx.getBeaconCommittee(slot, index));
}

export function sign(env: TestEnv, validatorIndex: number, signingRoot: Uint8Array): Uint8Array {
  return interopSecretKey(validatorIndex).sign(signingRoot).toBytes();
}

/**
 * Builds a block at `slot` on this empty chain with `body` fields set, signs it (randao and
 * proposer) and runs the full state transition with signature verification. Phase0 and altair only
 * (no execution payload). Returns the post-state; throws what state-transition throws.
 */
export function applyBlock(env: TestEnv, slot: number, body: Record<string, unknown>): CachedBeaconStateAllForks {
  const {config} = env;
  const preState = env.stateAt(slot);
  const fork = config.getForkSeq(slot);
  if (fork >= ForkSeq.bellatrix) throw new Error("applyBlock builds phase0/altair blocks only");
  const proposerIndex = preState.epochCtx.getBeaconProposer(slot);
  const epoch = computeEpochAtSlot(slot);
  const randaoReveal = sign(env, proposerIndex, computeSigningRoot(ssz.Epoch, epoch, config.getDomain(slot, DOMAIN_RANDAO)));
  const blockType = fork >= ForkSeq.altair ? ssz.altair.BeaconBlock : ssz.phase0.BeaconBlock;
  const block = blockType.defaultValue() as BeaconBlock;
  block.slot = slot;
  block.proposerIndex = proposerIndex;
  block.parentRoot = env.headRoot;
  const emptySyncAggregate = {syncCommitteeBits: BitArray.fromBitLen(SYNC_COMMITTEE_SIZE), syncCommitteeSignature: G2_POINT_AT_INFINITY};
  Object.assign(block.body, {randaoReveal, eth1Data: preState.eth1Data.toValue()}, fork >= ForkSeq.altair ? {syncAggregate: emptySyncAggregate} : {}, body);
  const signature = sign(env, proposerIndex, computeSigningRoot(blockType as typeof ssz.phase0.BeaconBlock, block, config.getDomain(slot, DOMAIN_BEACON_PROPOSER)));
  return stateTransition(env.stateAt(slot - 1), {message: block, signature} as never, {
    verifyStateRoot: false,
    verifyProposer: true,
    verifySignatures: true,
  } as never);
}
