import {Tree, toGindex} from "@chainsafe/persistent-merkle-tree";
import {createBeaconConfig, type ChainForkConfig} from "@lodestar/config";
import {BLS_WITHDRAWAL_PREFIX, DOMAIN_DEPOSIT, FAR_FUTURE_EPOCH, ForkSeq, MAX_EFFECTIVE_BALANCE} from "@lodestar/params";
import {
  type BeaconStateAllForks,
  type CachedBeaconStateAllForks,
  type CachedBeaconStateFulu,
  computeDomain,
  computeEpochShuffling,
  computeProposerIndices,
  getActiveValidatorIndices,
  createCachedBeaconState,
  createPubkeyCache,
  computeSigningRoot,
  createEmptyEpochCacheImmutableData,
  initializeBeaconStateFromEth1,
  interopSecretKey,
} from "@lodestar/state-transition";
import {ssz, type phase0} from "@lodestar/types";
import {byteArrayEquals, toHex} from "@lodestar/utils";
import {createHash} from "node:crypto";
import {readFileSync} from "node:fs";
import {readUint64LE} from "../db/keys.ts";
import {slotOfStateBytes} from "../db/stateArchive.ts";
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

/**
 * Appends interop validators `state.validators.length .. count-1`, each active from genesis with
 * 32 ETH, and grows every list that follows the validators (balances; from altair on,
 * participation and inactivity scores) with them: much faster than a genesis from that many
 * deposits, for large synthetic states. The caller sets what else must agree (deposit counts,
 * the validators root) and rebuilds the epoch cache.
 */
export function appendInteropValidators(state: CachedBeaconStateAllForks, count: number, onProgress?: (done: number) => void): void {
  const altair = state.config.getForkSeq(state.slot) >= ForkSeq.altair;
  const grown = state as unknown as {
    previousEpochParticipation: {push(v: number): void};
    currentEpochParticipation: {push(v: number): void};
    inactivityScores: {push(v: number): void};
  };
  for (let i = state.validators.length; i < count; i++) {
    const pubkey = interopSecretKey(i).toPublicKey().toBytes();
    const withdrawalCredentials = sha256(pubkey);
    withdrawalCredentials[0] = BLS_WITHDRAWAL_PREFIX;
    state.validators.push(
      ssz.phase0.Validator.toViewDU({
        pubkey,
        withdrawalCredentials,
        effectiveBalance: MAX_EFFECTIVE_BALANCE,
        slashed: false,
        activationEligibilityEpoch: 0,
        activationEpoch: 0,
        exitEpoch: FAR_FUTURE_EPOCH,
        withdrawableEpoch: FAR_FUTURE_EPOCH,
      })
    );
    state.balances.push(MAX_EFFECTIVE_BALANCE);
    if (altair) {
      grown.previousEpochParticipation.push(0);
      grown.currentEpochParticipation.push(0);
      grown.inactivityScores.push(0);
    }
    if (onProgress && i % 100_000 === 0) onProgress(i);
  }
  state.commit();
}

/** Reads the SSZ BeaconState file of `--genesis-state`; a missing or unreadable file is a clear error. */
export function readGenesisStateFile(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(`cannot read the genesis state file "${path}": ${err.code ?? err.message}`);
  }
}

/**
 * The fields at the head of a serialized BeaconState, read without deserializing it:
 * genesis_time (u64 @0), genesis_validators_root (@8), slot (u64 @40), fork (@48:
 * previous_version, current_version @52, epoch).
 */
export interface StateBytesHeader {
  genesisTime: number;
  genesisValidatorsRoot: Uint8Array;
  slot: number;
  forkVersion: Uint8Array;
}

const HEADER_BYTES = 64;

export function readStateBytesHeader(bytes: Uint8Array): StateBytesHeader {
  if (bytes.length < HEADER_BYTES) throw new Error(`the genesis state is ${bytes.length} bytes: too short for an SSZ BeaconState`);
  return {
    genesisTime: readUint64LE(bytes, 0),
    genesisValidatorsRoot: bytes.slice(8, 40),
    slot: slotOfStateBytes(bytes),
    forkVersion: bytes.slice(52, 56),
  };
}

/**
 * A genesis state given as SSZ bytes (`--genesis-state`), read with the config's types of the
 * fork at its slot. Refused when it is not at slot 0, or when its fork version is not the one
 * the config has there: then it is a state of another chain, preset or fork schedule.
 */
export function genesisStateFromBytes(config: ChainForkConfig, bytes: Uint8Array): CachedBeaconStateAllForks {
  const header = readStateBytesHeader(bytes);
  if (header.slot !== 0) {
    throw new Error(`the genesis state is at slot ${header.slot}, not 0: it is a later state, not a chain's genesis`);
  }
  const fork = config.getForkInfo(header.slot);
  if (!byteArrayEquals(header.forkVersion, fork.version)) {
    const known = config.forksAscendingEpochOrder.find((f) => byteArrayEquals(f.version, header.forkVersion));
    const which = known ? `${known.name}'s version, scheduled here at epoch ${known.epoch}` : "no fork of this node's schedule";
    throw new Error(
      `the genesis state has fork version ${toHex(header.forkVersion)} (${which}), but this node's chain starts in ${fork.name} ` +
        `(${toHex(fork.version)}): the state belongs to another chain or fork schedule (see --genesis-fork, --fork-epochs, --preset)`
    );
  }
  let state: BeaconStateAllForks;
  try {
    state = config.getForkTypes(header.slot).BeaconState.deserializeToViewDU(bytes) as BeaconStateAllForks;
  } catch (e) {
    throw new Error(`the genesis state is not a valid ${fork.name} BeaconState of this preset: ${(e as Error).message}`);
  }
  const beaconConfig = createBeaconConfig(config, state.genesisValidatorsRoot);
  return createCachedBeaconState(state, {config: beaconConfig, pubkeyCache: createPubkeyCache()});
}
