import {chainConfigFromJson, createBeaconConfig, type BeaconConfig, type ChainConfig} from "@lodestar/config";
import {chainConfig as presetDefaults} from "@lodestar/config/default";
import {ACTIVE_PRESET, ForkName, activePreset, forkAll, presetToJson} from "@lodestar/params";
import type {phase0} from "@lodestar/types";
import {byteArrayEquals, toHex} from "@lodestar/utils";
import type {TopicLogger} from "../log.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";

/**
 * The chain the validator client signs for, as the beacon node describes it, and the checks that
 * decide whether signing for it is safe. Hard (start-up refused): the preset, and the fork
 * schedule, because every signing domain and epoch boundary depends on them. (The genesis
 * validators root is bound to the slashing protection records, SlashingProtection.bindToChain.)
 * Warnings: what only differs in how a node reports it, such as Lodestar 1.5.1 giving its state's
 * current fork version as `genesis_fork_version` in /eth/v1/beacon/genesis.
 */

/** The keys of each fork's preset file (consensus-specs `presets/*`/`<fork>.yaml`). */
const PRESET_KEYS: Partial<Record<ForkName, string[]>> = {
  phase0: [
    "MAX_COMMITTEES_PER_SLOT", "TARGET_COMMITTEE_SIZE", "MAX_VALIDATORS_PER_COMMITTEE", "SHUFFLE_ROUND_COUNT", "HYSTERESIS_QUOTIENT",
    "HYSTERESIS_DOWNWARD_MULTIPLIER", "HYSTERESIS_UPWARD_MULTIPLIER", "MIN_DEPOSIT_AMOUNT", "MAX_EFFECTIVE_BALANCE", "EFFECTIVE_BALANCE_INCREMENT",
    "MIN_ATTESTATION_INCLUSION_DELAY", "SLOTS_PER_EPOCH", "MIN_SEED_LOOKAHEAD", "MAX_SEED_LOOKAHEAD", "EPOCHS_PER_ETH1_VOTING_PERIOD",
    "SLOTS_PER_HISTORICAL_ROOT", "MIN_EPOCHS_TO_INACTIVITY_PENALTY", "EPOCHS_PER_HISTORICAL_VECTOR", "EPOCHS_PER_SLASHINGS_VECTOR",
    "HISTORICAL_ROOTS_LIMIT", "VALIDATOR_REGISTRY_LIMIT", "BASE_REWARD_FACTOR", "WHISTLEBLOWER_REWARD_QUOTIENT", "PROPOSER_REWARD_QUOTIENT",
    "INACTIVITY_PENALTY_QUOTIENT", "MIN_SLASHING_PENALTY_QUOTIENT", "PROPORTIONAL_SLASHING_MULTIPLIER", "MAX_PROPOSER_SLASHINGS",
    "MAX_ATTESTER_SLASHINGS", "MAX_ATTESTATIONS", "MAX_DEPOSITS", "MAX_VOLUNTARY_EXITS",
  ],
  altair: [
    "INACTIVITY_PENALTY_QUOTIENT_ALTAIR", "MIN_SLASHING_PENALTY_QUOTIENT_ALTAIR", "PROPORTIONAL_SLASHING_MULTIPLIER_ALTAIR", "SYNC_COMMITTEE_SIZE",
    "EPOCHS_PER_SYNC_COMMITTEE_PERIOD", "MIN_SYNC_COMMITTEE_PARTICIPANTS", "UPDATE_TIMEOUT",
  ],
  bellatrix: [
    "INACTIVITY_PENALTY_QUOTIENT_BELLATRIX", "MIN_SLASHING_PENALTY_QUOTIENT_BELLATRIX", "PROPORTIONAL_SLASHING_MULTIPLIER_BELLATRIX",
    "MAX_BYTES_PER_TRANSACTION", "MAX_TRANSACTIONS_PER_PAYLOAD", "BYTES_PER_LOGS_BLOOM", "MAX_EXTRA_DATA_BYTES",
  ],
  capella: ["MAX_BLS_TO_EXECUTION_CHANGES", "MAX_WITHDRAWALS_PER_PAYLOAD", "MAX_VALIDATORS_PER_WITHDRAWALS_SWEEP"],
  deneb: ["MAX_BLOB_COMMITMENTS_PER_BLOCK", "KZG_COMMITMENT_INCLUSION_PROOF_DEPTH", "FIELD_ELEMENTS_PER_BLOB"],
  electra: [
    "MIN_ACTIVATION_BALANCE", "MAX_EFFECTIVE_BALANCE_ELECTRA", "MIN_SLASHING_PENALTY_QUOTIENT_ELECTRA", "WHISTLEBLOWER_REWARD_QUOTIENT_ELECTRA",
    "PENDING_DEPOSITS_LIMIT", "PENDING_PARTIAL_WITHDRAWALS_LIMIT", "PENDING_CONSOLIDATIONS_LIMIT", "MAX_ATTESTER_SLASHINGS_ELECTRA",
    "MAX_ATTESTATIONS_ELECTRA", "MAX_DEPOSIT_REQUESTS_PER_PAYLOAD", "MAX_WITHDRAWAL_REQUESTS_PER_PAYLOAD", "MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD",
    "MAX_PENDING_PARTIALS_PER_WITHDRAWALS_SWEEP", "MAX_PENDING_DEPOSITS_PER_EPOCH",
  ],
  fulu: ["KZG_COMMITMENTS_INCLUSION_PROOF_DEPTH", "FIELD_ELEMENTS_PER_CELL", "FIELD_ELEMENTS_PER_EXT_BLOB", "CELLS_PER_EXT_BLOB", "NUMBER_OF_COLUMNS"],
  gloas: ["PTC_SIZE", "MAX_PAYLOAD_ATTESTATIONS", "BUILDER_PENDING_WITHDRAWALS_LIMIT"],
};

type SpecMap = Record<string, unknown>;

/**
 * The chain config of a node's spec map. A node built to an older spec version names fewer keys:
 * the forks it does not name are not scheduled on its chain, a slot length given only in
 * seconds is taken as such, and every other missing value is the preset's default.
 */
export function chainConfigOfSpec(spec: SpecMap): ChainConfig {
  const fromNode = chainConfigFromJson(spec);
  const config: Record<string, unknown> = {...presetDefaults, ...fromNode};
  for (const fork of forkAll) {
    const key = `${fork.toUpperCase()}_FORK_EPOCH`;
    if (fork !== ForkName.phase0 && spec[key] === undefined) config[key] = Infinity;
  }
  if (spec.SLOT_DURATION_MS === undefined && fromNode.SECONDS_PER_SLOT !== undefined) config.SLOT_DURATION_MS = fromNode.SECONDS_PER_SLOT * 1000;
  return config as unknown as ChainConfig;
}

/** Hard: the node's preset is this process's, in every value of the forks its chain schedules. */
export function checkPreset(spec: SpecMap, config: ChainConfig): void {
  if (spec.PRESET_BASE !== undefined && spec.PRESET_BASE !== ACTIVE_PRESET) {
    throw new Error(`the beacon node runs the ${String(spec.PRESET_BASE)} preset and this validator client the ${ACTIVE_PRESET} preset`);
  }
  const ours = presetToJson(activePreset) as Record<string, unknown>;
  for (const fork of forkAll) {
    if (fork !== ForkName.phase0 && !Number.isFinite((config as unknown as Record<string, number>)[`${fork.toUpperCase()}_FORK_EPOCH`])) continue;
    for (const key of PRESET_KEYS[fork] ?? []) {
      if (spec[key] !== undefined && ours[key] !== undefined && String(spec[key]) !== String(ours[key])) {
        throw new Error(`the beacon node's preset has ${key} ${String(spec[key])}, this validator client's ${String(ours[key])}`);
      }
    }
  }
}

const forkText = (fork: {currentVersion: Uint8Array; epoch: number}) => `${toHex(fork.currentVersion)}@${fork.epoch}`;

/** Hard: the node's fork schedule is the one its spec gives, fork for fork (versions and epochs; unscheduled forks aside). */
export function checkForkSchedule(config: BeaconConfig, schedule: phase0.Fork[]): void {
  const fromSchedule = schedule.filter((f) => Number.isFinite(f.epoch)).map(forkText);
  const fromSpec = config.forksAscendingEpochOrder.filter((f) => Number.isFinite(f.epoch)).map((f) => forkText({currentVersion: f.version, epoch: f.epoch}));
  const missing = fromSpec.filter((f) => !fromSchedule.includes(f));
  const extra = fromSchedule.filter((f) => !fromSpec.includes(f));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`the beacon node's fork schedule [${fromSchedule.join(", ")}] differs from its spec's [${fromSpec.join(", ")}]`);
  }
}

/**
 * The genesis fork version /eth/v1/beacon/genesis reports. The spec's GENESIS_FORK_VERSION is the
 * one that counts (it is in the config). Another version of the same schedule is a reporting
 * quirk (Lodestar 1.5.1 reports its state's current fork version): a warning. A version of no
 * fork of the chain means another chain: refused.
 */
export function checkGenesisForkVersion(config: BeaconConfig, reported: Uint8Array, log: TopicLogger): void {
  if (byteArrayEquals(config.GENESIS_FORK_VERSION, reported)) return;
  const fork = config.forksAscendingEpochOrder.find((f) => Number.isFinite(f.epoch) && byteArrayEquals(f.version, reported));
  const message = `beacon node genesis fork version ${toHex(reported)} differs from its spec's GENESIS_FORK_VERSION ${toHex(config.GENESIS_FORK_VERSION)}`;
  if (!fork) throw new Error(`${message}, and is no fork version of its chain`);
  log.warn({reported: toHex(reported), genesisForkVersion: toHex(config.GENESIS_FORK_VERSION), fork: fork.name}, `${message}: it is the ${fork.name} fork's version, a reporting quirk; using the spec's`);
}

/** Reads the node's genesis, spec and fork schedule, checks them as above and gives the chain's config. */
export async function readNodeChain(api: ValidatorBeaconApi, log: TopicLogger): Promise<{config: BeaconConfig; genesisTime: number}> {
  const [genesis, spec, schedule] = await Promise.all([api.getGenesis(), api.getSpec(), api.getForkSchedule()]);
  const chainConfig = chainConfigOfSpec(spec);
  checkPreset(spec, chainConfig);
  const config = createBeaconConfig(chainConfig, genesis.genesisValidatorsRoot);
  checkForkSchedule(config, schedule);
  checkGenesisForkVersion(config, genesis.genesisForkVersion, log);
  return {config, genesisTime: genesis.genesisTime};
}
