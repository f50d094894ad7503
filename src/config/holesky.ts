import type {ChainConfig} from "@lodestar/config";
import {networksChainConfig} from "@lodestar/config/networks";
import {fromHex} from "@lodestar/utils";

/**
 * Holesky, the deprecated testnet that @lodestar/config 1.46 no longer ships: its values as
 * eth-clients/holesky publishes them (metadata/config.yaml), taken from @lodestar/config 1.36.0,
 * the last release that carried them, on top of mainnet's.
 */
export const holeskyChainConfig: ChainConfig = {
  ...networksChainConfig.mainnet,
  CONFIG_NAME: "holesky",
  MIN_GENESIS_ACTIVE_VALIDATOR_COUNT: 16384,
  MIN_GENESIS_TIME: 1695902100,
  GENESIS_DELAY: 300,
  GENESIS_FORK_VERSION: fromHex("0x01017000"),
  ALTAIR_FORK_VERSION: fromHex("0x02017000"),
  ALTAIR_FORK_EPOCH: 0,
  BELLATRIX_FORK_VERSION: fromHex("0x03017000"),
  BELLATRIX_FORK_EPOCH: 0,
  TERMINAL_TOTAL_DIFFICULTY: BigInt(0),
  CAPELLA_FORK_VERSION: fromHex("0x04017000"),
  CAPELLA_FORK_EPOCH: 256,
  DENEB_FORK_VERSION: fromHex("0x05017000"),
  DENEB_FORK_EPOCH: 29696,
  ELECTRA_FORK_VERSION: fromHex("0x06017000"),
  ELECTRA_FORK_EPOCH: 115968,
  FULU_FORK_VERSION: fromHex("0x07017000"),
  FULU_FORK_EPOCH: 165120,
  GLOAS_FORK_VERSION: fromHex("0x08017000"),
  GLOAS_FORK_EPOCH: Infinity,
  EJECTION_BALANCE: 28000000000,
  DEPOSIT_CHAIN_ID: 17000,
  DEPOSIT_NETWORK_ID: 17000,
  DEPOSIT_CONTRACT_ADDRESS: fromHex("0x4242424242424242424242424242424242424242"),
  BLOB_SCHEDULE: [
    {EPOCH: 166400, MAX_BLOBS_PER_BLOCK: 15},
    {EPOCH: 167936, MAX_BLOBS_PER_BLOCK: 21},
  ],
};

export const HOLESKY_GENESIS = {genesisTime: 1695902400, genesisValidatorsRoot: "0x9143aa7c615a7f7115e2b6aac319c03529df8242ae705fba9df39b79c59fa8b1"};
