import {createChainForkConfig, type ChainConfig, type ChainForkConfig} from "@lodestar/config";

import {DEV_FORKS, type DevFork} from "./forks.ts";

export {DEV_FORKS, type DevFork};

const FORK_EPOCH_KEY: Record<Exclude<DevFork, "phase0">, keyof ChainConfig> = {
  altair: "ALTAIR_FORK_EPOCH",
  bellatrix: "BELLATRIX_FORK_EPOCH",
  capella: "CAPELLA_FORK_EPOCH",
  deneb: "DENEB_FORK_EPOCH",
  electra: "ELECTRA_FORK_EPOCH",
  fulu: "FULU_FORK_EPOCH",
};

export interface DevChainOptions {
  secondsPerSlot: number;
  /** Every fork up to and including this one is active at epoch 0. */
  genesisFork: DevFork;
  /** Explicit activation epochs; they override genesisFork for the forks they name. */
  forkEpochs: Partial<Record<DevFork, number>>;
}

/**
 * Chain config of the local dev network. Forks after the last scheduled one stay
 * unscheduled (Infinity); gloas and later are never scheduled here.
 */
export function devChainConfig(opts: DevChainOptions): ChainForkConfig {
  const overrides: Partial<ChainConfig> = {
    SECONDS_PER_SLOT: opts.secondsPerSlot,
    SLOT_DURATION_MS: opts.secondsPerSlot * 1000,
    MIN_GENESIS_ACTIVE_VALIDATOR_COUNT: 1,
    GENESIS_DELAY: 0,
    // The dev chain is post-merge from the first bellatrix block: no PoW terminal block to wait for.
    TERMINAL_TOTAL_DIFFICULTY: 0n,
    DEPOSIT_CHAIN_ID: 1337,
    DEPOSIT_NETWORK_ID: 1337,
    CONFIG_NAME: "dev",
    GLOAS_FORK_EPOCH: Infinity,
    HEZE_FORK_EPOCH: Infinity,
  } as Partial<ChainConfig>;
  const genesisIndex = DEV_FORKS.indexOf(opts.genesisFork);
  let previous = 0;
  for (const fork of DEV_FORKS.slice(1) as Exclude<DevFork, "phase0">[]) {
    const key = FORK_EPOCH_KEY[fork];
    let epoch = opts.forkEpochs[fork] ?? (DEV_FORKS.indexOf(fork) <= genesisIndex ? 0 : Infinity);
    if (epoch < previous) throw new Error(`fork epoch of ${fork} (${epoch}) is before the previous fork's (${previous})`);
    (overrides as Record<string, unknown>)[key] = epoch;
    previous = epoch;
  }
  return createChainForkConfig(overrides);
}

/** The fork active at epoch 0. */
export function genesisForkOf(config: ChainForkConfig): string {
  return config.getForkName(0);
}
