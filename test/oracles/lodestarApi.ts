import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {getClient, routes as lodestarRoutes} from "@lodestar/api";
// @lodestar/api 1.48.0 brings its own @lodestar/config (1.48.0), params and types (1.50.0): its
// codecs must be given a config of that copy. The package's exports hide it, so the file itself.
import {chainConfigFromJson, createChainForkConfig, type ChainForkConfig} from "../../node_modules/@lodestar/api/node_modules/@lodestar/config/lib/index.js";
import {parseNodeOptions} from "../../src/cli/options.ts";
import {startNode, type RunningNode} from "../../src/node.ts";
import {TEST_NETWORK_ARGS} from "../e2e/nodeProcess.ts";

/**
 * The registry's newest REST client, @lodestar/api 1.48.0 (its codecs derive from Lodestar's
 * types, not ours), pointed at a live node of ours that passes every fork from phase0 to fulu.
 */

export const FORKS = ["phase0", "altair", "bellatrix", "capella", "deneb", "electra", "fulu"] as const;
export type Fork = (typeof FORKS)[number];
export const forkSeq = (fork: string): number => FORKS.indexOf(fork as Fork);

export type LodestarClient = ReturnType<typeof getClient>;

/** Every route @lodestar/api defines, keyed by `METHOD path`: its namespace and method name. */
export interface LodestarMethod {
  namespace: string;
  name: string;
  /** the route may answer in SSZ */
  sszResponse: boolean;
  /** the route takes no arguments: its client method's only parameter is the request init */
  argless: boolean;
}

type Definition = {method: string; url: string; req: {schema: {params?: unknown; query?: unknown; body?: unknown}}; resp?: {onlySupport?: string}};

export function lodestarRouteIndex(config: ChainForkConfig): Map<string, LodestarMethod> {
  const index = new Map<string, LodestarMethod>();
  for (const [namespace, module] of Object.entries(lodestarRoutes)) {
    const definitions = (module as {getDefinitions(config: ChainForkConfig): Record<string, Definition>}).getDefinitions(config);
    for (const [name, def] of Object.entries(definitions)) {
      const {params, query, body} = def.req.schema;
      index.set(`${def.method} ${def.url}`, {namespace, name, sszResponse: def.resp?.onlySupport !== "json", argless: params === undefined && query === undefined && body === undefined});
    }
  }
  return index;
}

/** The fork schedule of the oracle node: one fork per epoch, phase0 at genesis, fulu at epoch 6. */
export const FORK_EPOCHS = FORKS.slice(1).map((fork, i) => `${fork}=${i + 1}`).join(",");

export interface OracleNode {
  node: RunningNode;
  baseUrl: string;
  /** a config of @lodestar/api's own @lodestar/config, from the node's `/eth/v1/config/spec` */
  config: ChainForkConfig;
  api: LodestarClient;
  forkAt(slot: number): Fork;
  stop(): Promise<void>;
}

/**
 * A dev node whose forks come one epoch apart (phase0 at genesis, fulu at epoch 6: slot 48),
 * 1-second slots, a blob in every payload from deneb on; genesis 3 s after it starts.
 */
export async function startOracleNode(): Promise<OracleNode> {
  const dataDir = mkdtempSync(join(tmpdir(), "oracle-"));
  const opts = parseNodeOptions([
    ...["--rest", "--rest-port", "0", "--data-dir", dataDir, "--seconds-per-slot", "1", "--log-level", "WARN"],
    ...["--genesis-fork", "phase0", "--fork-epochs", FORK_EPOCHS],
    ...TEST_NETWORK_ARGS,
  ]);
  if (opts === "help") throw new Error("unexpected help");
  const node = await startNode(opts);
  const stop = async () => {
    await node.stop();
    rmSync(dataDir, {recursive: true, force: true});
  };
  const baseUrl = `http://127.0.0.1:${node.restPort}`;
  const config = await fetch(`${baseUrl}/eth/v1/config/spec`)
    .then(async (res) => createChainForkConfig(chainConfigFromJson(((await res.json()) as {data: Record<string, string>}).data)))
    .catch(async (e: unknown) => {
      await stop();
      throw e;
    });
  // no retries: an answer the client cannot take must show as it is
  const api = getClient({baseUrl, globalInit: {retries: 0, timeoutMs: 20_000}}, {config});
  return {
    node,
    baseUrl,
    config,
    api,
    forkAt: (slot) => config.getForkName(slot) as Fork,
    stop,
  };
}
