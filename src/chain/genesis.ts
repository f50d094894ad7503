import {Tree, toGindex} from "@chainsafe/persistent-merkle-tree";
import {createBeaconConfig, type ChainForkConfig} from "@lodestar/config";
import {BLS_WITHDRAWAL_PREFIX, DOMAIN_DEPOSIT, ForkSeq, MAX_EFFECTIVE_BALANCE} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type CachedBeaconStateFulu,
  computeDomain,
  computeEpochShuffling,
  computeProposerIndices,
  getActiveValidatorIndices,
  createCachedBeaconState,
  computeSigningRoot,
  createEmptyEpochCacheImmutableData,
  initializeBeaconStateFromEth1,
  interopSecretKey,
} from "@lodestar/state-transition";
import {ssz, type phase0} from "@lodestar/types";
import {createHash} from "node:crypto";
import {genesisExecutionHeader, GENESIS_EXECUTION_BLOCK_HASH} from "../execution/mockEngine.ts";

const ZERO_HASH = new Uint8Array(32);

function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/** Deposits of the interop validators 0..count-1, each with its proof against the growing deposit tree. */
function interopDeposits(config: ChainForkConfig, count: number): {deposits: phase0.Deposit[]; rootList: ReturnType<typeof ssz.phase0.DepositDataRootList.defaultViewDU>} {
  const rootList = ssz.phase0.DepositDataRootList.defaultViewDU();
  const domain = computeDomain(DOMAIN_DEPOSIT, config.GENESIS_FORK_VERSION, ZERO_HASH);
  const deposits: phase0.Deposit[] = [];
  for (let i = 0; i < count; i++) {
    const sk = interopSecretKey(i);
    const pubkey = sk.toPublicKey().toBytes();
    const withdrawalCredentials = sha256(pubkey);
    withdrawalCredentials[0] = BLS_WITHDRAWAL_PREFIX;
    const data: phase0.DepositData = {pubkey, withdrawalCredentials, amount: MAX_EFFECTIVE_BALANCE, signature: new Uint8Array(96)};
    data.signature = sk.sign(computeSigningRoot(ssz.phase0.DepositMessage, data, domain)).toBytes();
    rootList.push(ssz.phase0.DepositData.hashTreeRoot(data));
    rootList.commit();
    const proof = new Tree(rootList.node).getSingleProof(toGindex(rootList.type.depth, BigInt(i)));
    deposits.push({proof, data});
  }
  return {deposits, rootList};
}

/**
 * The genesis state of the dev chain: `count` interop validators, all active at epoch 0.
 * From bellatrix on, genesis carries the mock engine's genesis payload header, so the chain
 * is post-merge from its first block.
 */
export function createInteropGenesisState(config: ChainForkConfig, count: number, genesisTime: number): CachedBeaconStateAllForks {
  const {deposits, rootList} = interopDeposits(config, count);
  const fork = config.getForkSeq(0);
  const executionHeader = fork >= ForkSeq.bellatrix ? genesisExecutionHeader(config, genesisTime) : undefined;
  const state = initializeBeaconStateFromEth1(
    config,
    createEmptyEpochCacheImmutableData(config, {genesisValidatorsRoot: ZERO_HASH}),
    fork >= ForkSeq.bellatrix ? GENESIS_EXECUTION_BLOCK_HASH : new Uint8Array(32).fill(0x42),
    genesisTime,
    deposits,
    rootList,
    executionHeader as never
  );
  state.genesisTime = genesisTime;
  state.genesisValidatorsRoot = state.validators.hashTreeRoot();
  state.commit();
  // The epoch cache was built before the deposits and the validators root existed: rebuild
  // it, or shufflings would be empty and every signature domain from state.config wrong.
  const immutable = {config: createBeaconConfig(config, state.genesisValidatorsRoot), pubkeyCache: state.epochCtx.pubkeyCache};
  let cached = createCachedBeaconState(state, immutable);
  if (fork >= ForkSeq.fulu) {
    // Fulu's genesis carries the proposer lookahead (initialize_proposer_lookahead), which
    // lodestar's genesis helper leaves zero; the epoch cache reads proposers from it.
    const lookahead: number[] = [];
    for (const epoch of [0, 1]) {
      const shuffling = computeEpochShuffling(cached, getActiveValidatorIndices(cached, epoch), epoch);
      lookahead.push(...computeProposerIndices(ForkSeq.fulu, cached, shuffling, epoch));
    }
    (cached as CachedBeaconStateFulu).proposerLookahead = ssz.fulu.ProposerLookahead.toViewDU(lookahead);
    cached.commit();
    cached = createCachedBeaconState(cached, immutable);
  }
  return cached;
}
