// A synthetic mainnet-preset genesis state with many validators (`npm run bench:scale`): the
// interop dev genesis of 64 validators (bellatrix, mainnet preset), grown to `count` validators,
// each with its interop key, active from epoch 0 with 32 ETH. The state stays valid for the state
// transition: every list that follows the validators grows with them, the deposit counters
// match, and the validators root is the grown list's. Made once and kept as an SSZ file; its
// genesis time is set at each use (the first 8 bytes), so that the bench runs at epoch 0.
import {existsSync, readFileSync, renameSync, writeFileSync} from "node:fs";

/**
 * Mainnet's 12-second slots: both nodes are measured at genesis, before any block, and a node
 * whose head is more than an epoch (32 slots, 6.4 minutes here) behind the clock counts itself
 * as syncing (Lodestar then answers duties 503). The head moves afterwards wait for the next
 * epoch's first slot, about 6.4 minutes after genesis.
 */
export const SCALE_SECONDS_PER_SLOT = 12;

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
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {appendInteropValidators, createInteropGenesisState} = await import("../src/chain/genesis.ts");
  const config = devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}});
  const started = Date.now();
  const genesis = createInteropGenesisState(config, 64, Math.floor(Date.now() / 1000));
  appendInteropValidators(genesis, count, (done) => log(`  ${done} validators (${((Date.now() - started) / 1000).toFixed(0)} s)`));
  const state = genesis as unknown as {
    validators: {hashTreeRoot(): Uint8Array};
    eth1Data: {depositCount: bigint};
    eth1DepositIndex: number;
    genesisValidatorsRoot: Uint8Array;
    commit(): void;
    serialize(): Uint8Array;
  };
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
