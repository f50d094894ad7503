import {type ChainConfig, chainConfigFromJson, createChainConfig, createChainForkConfig, type ChainForkConfig} from "@lodestar/config";
import {genesisData, networksChainConfig} from "@lodestar/config/networks";
import {ACTIVE_PRESET} from "@lodestar/params";
import {toRootHex} from "@lodestar/utils";
import {readFileSync} from "node:fs";
import {parse} from "yaml";
import {HOLESKY_GENESIS, holeskyChainConfig} from "./holesky.ts";
import type {PublicNetwork} from "./networkNames.ts";

/**
 * The chains the node can join besides its dev chain: the public networks (configurations from
 * @lodestar/config) and a custom network described by a config.yaml (the layout the public
 * testnets publish, beside their genesis.ssz).
 */

export interface NetworkDefinition {
  config: ChainForkConfig;
  /** the genesis validators root the chain must have (0x hex); null for a custom network (its genesis state says) */
  genesisValidatorsRoot: string | null;
}

/** The configuration and genesis validators root of a public network. */
export function publicNetwork(name: PublicNetwork): NetworkDefinition {
  const chainConfig = name === "holesky" ? holeskyChainConfig : networksChainConfig[name];
  checkPreset(chainConfig, `--network ${name}`);
  const genesisValidatorsRoot = name === "holesky" ? HOLESKY_GENESIS.genesisValidatorsRoot : genesisData[name].genesisValidatorsRoot;
  return {config: createChainForkConfig(chainConfig), genesisValidatorsRoot};
}

/** A network from its config.yaml (every value as the specs write it: numbers, 0x hex, the blob schedule). */
export function customNetwork(configFile: string): NetworkDefinition {
  let json: unknown;
  try {
    // failsafe: every scalar a string, as chainConfigFromJson reads them (0x00000000 stays bytes, not the number 0)
    json = parse(readFileSync(configFile, "utf8"), {schema: "failsafe"});
  } catch (e) {
    throw new Error(`cannot read the network configuration ${configFile}: ${(e as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error(`${configFile} is not a YAML mapping of configuration values`);
  checkPreset(json as {PRESET_BASE?: unknown}, configFile);
  let chainConfig: ChainConfig;
  try {
    chainConfig = createChainConfig(chainConfigFromJson(json as Record<string, unknown>));
  } catch (e) {
    throw new Error(`${configFile}: ${(e as Error).message}`);
  }
  return {config: createChainForkConfig(chainConfig), genesisValidatorsRoot: null};
}

/** The preset is fixed when the process starts (bin/beacon-gateway.js picks it from the network): a mismatch is a bug or a bad file. */
function checkPreset(config: {PRESET_BASE?: unknown}, what: string): void {
  if ((config.PRESET_BASE ?? "mainnet") !== ACTIVE_PRESET) {
    throw new Error(`${what} uses the ${String(config.PRESET_BASE ?? "mainnet")} preset, but this process runs the ${ACTIVE_PRESET} preset (--preset ${String(config.PRESET_BASE ?? "mainnet")})`);
  }
}

/**
 * The starting state must be the network's: its genesis validators root (public networks), and,
 * from a genesis state (its header: `readStateBytesHeader`), a note of what syncing from genesis means.
 */
export function checkNetworkAnchor(
  name: string,
  network: NetworkDefinition,
  genesisState: {genesisValidatorsRoot: Uint8Array} | undefined,
  checkpoint: {state: {genesisValidatorsRoot: Uint8Array}} | undefined,
  log: {info(obj: object, msg: string): void}
): void {
  const root = genesisState ? genesisState.genesisValidatorsRoot : checkpoint?.state.genesisValidatorsRoot;
  if (root && network.genesisValidatorsRoot !== null && toRootHex(root) !== network.genesisValidatorsRoot) {
    const from = genesisState ? "--genesis-state" : "--checkpoint-sync-url";
    throw new Error(`the state from ${from} has genesis validators root ${toRootHex(root)}, not ${name}'s ${network.genesisValidatorsRoot}: it is another network's`);
  }
  if (genesisState) {
    log.info(
      {network: name},
      "starting from genesis: the node range-syncs every block since genesis from its peers before it follows the head (days on mainnet, hours on a testnet); --checkpoint-sync-url starts from a recent finalized state instead"
    );
  }
}
