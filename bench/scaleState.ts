// A synthetic mainnet-preset genesis state with many validators (`npm run bench:scale`): the
// interop dev genesis of 64 validators (bellatrix, mainnet preset), grown to `count` validators,
// each with its interop key, active from epoch 0 with 32 ETH. The state stays valid for the state
// transition: every list that follows the validators grows with them, the deposit counters
// match, and the validators root is the grown list's. Made once and kept as an SSZ file; its
// genesis time is set at each use (the first 8 bytes), so that the bench runs at epoch 0.
import {existsSync, readFileSync, renameSync, writeFileSync} from "node:fs";

/** Short slots, so that the bench reaches an epoch boundary (32 slots) in about two minutes. */
export const SCALE_SECONDS_PER_SLOT = 4;

/** The file's state, with `genesisTime` written in. */
export function withGenesisTime(state: Uint8Array, genesisTime: number): Uint8Array {
  const copy = new Uint8Array(state);
  new DataView(copy.buffer, copy.byteOffset, copy.byteLength).setBigUint64(0, BigInt(genesisTime), true);
  return copy;
}

/**
 * The state of `count` validators from `path`, made and written there first when missing.
 * Needs LODESTAR_PRESET=mainnet before any lodestar module is loaded.
 */
export async function scaleState(path: string, count: number, log: (line: string) => void): Promise<Uint8Array> {
  if (existsSync(path)) return new Uint8Array(readFileSync(path));
  if (process.env.LODESTAR_PRESET !== "mainnet") throw new Error("the scale state is of the mainnet preset: set LODESTAR_PRESET=mainnet");
  const {BLS_WITHDRAWAL_PREFIX, FAR_FUTURE_EPOCH, MAX_EFFECTIVE_BALANCE} = await import("@lodestar/params");
  const {interopSecretKey} = await import("@lodestar/state-transition");
  const {ssz} = await import("@lodestar/types");
  const {createHash} = await import("node:crypto");
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {createInteropGenesisState} = await import("../src/chain/genesis.ts");
  const config = devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}});
  const started = Date.now();
  const state = createInteropGenesisState(config, 64, Math.floor(Date.now() / 1000)) as unknown as {
    validators: {length: number; push(v: unknown): void; hashTreeRoot(): Uint8Array};
    balances: {push(v: number): void};
    previousEpochParticipation: {push(v: number): void};
    currentEpochParticipation: {push(v: number): void};
    inactivityScores: {push(v: number): void};
    eth1Data: {depositCount: bigint};
    eth1DepositIndex: number;
    genesisValidatorsRoot: Uint8Array;
    commit(): void;
    serialize(): Uint8Array;
  };
  for (let i = state.validators.length; i < count; i++) {
    const pubkey = interopSecretKey(i).toPublicKey().toBytes();
    const withdrawalCredentials = new Uint8Array(createHash("sha256").update(pubkey).digest());
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
    state.previousEpochParticipation.push(0);
    state.currentEpochParticipation.push(0);
    state.inactivityScores.push(0);
    if (i % 100_000 === 0) log(`  ${i} validators (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  state.eth1Data.depositCount = BigInt(count);
  state.eth1DepositIndex = count;
  state.commit();
  state.genesisValidatorsRoot = state.validators.hashTreeRoot();
  state.commit();
  const bytes = state.serialize();
  // written whole or not at all: a killed run leaves no half file to load next time
  writeFileSync(`${path}.partial`, bytes);
  renameSync(`${path}.partial`, path);
  log(`  ${count} validators, ${(bytes.length / 1e6).toFixed(0)} MB, in ${((Date.now() - started) / 1000).toFixed(0)} s: ${path}`);
  return bytes;
}
