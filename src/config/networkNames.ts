import {readFileSync} from "node:fs";

/**
 * Network names and the preset each implies, without lodestar: the launcher reads them before
 * the preset is fixed (bin/beacon-gateway.js), and so does the command line's parser.
 */

export const PUBLIC_NETWORKS = ["mainnet", "sepolia", "holesky", "hoodi"] as const;
export type PublicNetwork = (typeof PUBLIC_NETWORKS)[number];
export const NETWORK_NAMES = ["dev", ...PUBLIC_NETWORKS, "custom"] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];

export function isPublicNetwork(name: string): name is PublicNetwork {
  return (PUBLIC_NETWORKS as readonly string[]).includes(name);
}

/** PRESET_BASE of a config.yaml's text; undefined when absent. */
export function presetOfConfigText(text: string): string | undefined {
  return /^PRESET_BASE:\s*['"]?([A-Za-z0-9_-]+)['"]?\s*(?:#.*)?$/m.exec(text)?.[1];
}

/** The preset a network runs: mainnet for the public ones, the config file's PRESET_BASE for a custom one; undefined for dev (the option decides). */
export function presetOfNetwork(network: string, configFile: string | undefined): string | undefined {
  if (isPublicNetwork(network)) return "mainnet";
  if (network !== "custom" || configFile === undefined) return undefined;
  try {
    return presetOfConfigText(readFileSync(configFile, "utf8"));
  } catch {
    // the option parser reports the unreadable file
    return undefined;
  }
}

/** The value of `--name VALUE` or `--name=VALUE` in raw arguments. */
function argValue(args: string[], name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? (at >= 0 ? args[at + 1] : undefined);
}

/** For the launcher: the preset that `--network` (and `--config`) in raw node arguments imply, if any. */
export function presetOfArgs(args: string[]): string | undefined {
  const network = argValue(args, "network");
  return network === undefined ? undefined : presetOfNetwork(network, argValue(args, "config"));
}
