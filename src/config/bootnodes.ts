import {readFileSync} from "node:fs";
import {join} from "node:path";
import {parse} from "yaml";
import {PROJECT_ROOT} from "../projectRoot.ts";

/**
 * The discv5 bootnodes built in for the public networks that publish them: the networks' own
 * `bootstrap_nodes.yaml`, kept unchanged in `src/config/bootnodes/` (see its README for the
 * sources and their terms). Holesky, dev and custom networks have none: `--bootnodes` names them.
 */

export const NETWORKS_WITH_BOOTNODES = ["mainnet", "sepolia", "hoodi"] as const;

const cache = new Map<string, string[]>();

/** The network's built-in `enr:` records, in the file's order; [] for a network without any. */
export function builtInBootnodes(network: string): string[] {
  if (!(NETWORKS_WITH_BOOTNODES as readonly string[]).includes(network)) return [];
  let list = cache.get(network);
  if (!list) {
    const file = join(PROJECT_ROOT, "src", "config", "bootnodes", `${network}.yaml`);
    const parsed: unknown = parse(readFileSync(file, "utf8"));
    if (!Array.isArray(parsed) || !parsed.every((e) => typeof e === "string" && e.startsWith("enr:"))) {
      throw new Error(`${file} is not a YAML list of enr: records`);
    }
    list = parsed as string[];
    cache.set(network, list);
  }
  return [...list];
}

/** The built-in bootnodes with those of `--bootnodes` added (each record once). */
export function bootnodesOf(network: string, extra: string[]): string[] {
  return [...new Set([...builtInBootnodes(network), ...extra])];
}
