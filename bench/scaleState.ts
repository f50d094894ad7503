// A synthetic mainnet-preset genesis state with many validators (`npm run bench:scale`,
// `bench:gossip`): the interop dev genesis of 64 validators (bellatrix, mainnet preset), grown to
// `count` validators, each with its interop key (so a bench can sign for any of them:
// `interopSecretKey(index)`), active from epoch 0 with 32 ETH. The state stays valid for the
// state transition: every list that follows the validators grows with them, the deposit
// counters match, the validators root is the grown list's, and the sync committees are drawn
// from all of them as the spec's genesis draws them (not from the first 64). Made once and kept as
// an SSZ file; its genesis time is set at each use (the first 8 bytes), so that the bench runs
// at epoch 0.
import {existsSync, readFileSync, renameSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";

/**
 * Mainnet's 12-second slots: both nodes are measured at genesis, before any block, and a node
 * whose head is more than an epoch (32 slots, 6.4 minutes here) behind the clock counts itself
 * as syncing (Lodestar then answers duties 503). The head moves afterwards wait for the next
 * epoch's first slot, about 6.4 minutes after genesis.
 */
export const SCALE_SECONDS_PER_SLOT = 12;

/**
 * Where the state of `count` validators is kept: `BENCH_SCALE_STATE`, or a file in the temp
 * folder named after the builder's version (a file of an older builder is not reused).
 */
export function scaleStateFile(count: number): string {
  return process.env.BENCH_SCALE_STATE ?? join(tmpdir(), `beacon-gateway-scale-v2-${count}.ssz`);
}

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
  // genesis drew its sync committees from its 64 validators: draw them again from all of them
  // (initialize_beacon_state_from_eth1: current and next are both get_next_sync_committee)
  const {ForkSeq} = await import("@lodestar/params");
  const {getNextSyncCommittee} = await import("@lodestar/state-transition");
  const {ssz} = await import("@lodestar/types");
  const indices = Uint32Array.from({length: count}, (_, i) => i);
  // effective balance increments of 1 ETH: 32 each
  const increments = new Uint16Array(count).fill(32);
  const {syncCommittee} = getNextSyncCommittee(ForkSeq.bellatrix, genesis, indices, increments);
  const synced = genesis as unknown as {currentSyncCommittee: unknown; nextSyncCommittee: unknown};
  synced.currentSyncCommittee = ssz.altair.SyncCommittee.toViewDU(syncCommittee);
  synced.nextSyncCommittee = ssz.altair.SyncCommittee.toViewDU(syncCommittee);
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
