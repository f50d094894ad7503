import {COMPAT_CHECK_COMMAND, COMPAT_COMMAND, type CompatCheckOptions, type NodeOptions} from "../src/cli/options.ts";
import {fetchPresetBase, runCommand, serverCommand} from "../src/cli/main.ts";
import {initLogging, parseLogDirective} from "../src/log.ts";
import type {RunningNode} from "../src/node.ts";

/*
 * The JSON-RPC interface's part of the command line, handed to src/cli/main.ts by the launcher
 * (bin/beacon-gateway.js): `beacon-gateway compat`, `compat check` and `node --rpc`, each run
 * by main.ts's command runner. What loads lodestar (the route codecs) is imported only once the
 * preset is fixed.
 */

/** `beacon-gateway compat …`: the JSON-RPC server in front of any beacon node's REST API, or `compat check`. */
export function run(args: string[]): Promise<number> {
  return args[0] === "check" ? runCommand(COMPAT_CHECK_COMMAND, args.slice(1), check) : serve(args);
}

const serve = serverCommand(COMPAT_COMMAND, async (opts) => {
  // The route codecs read the upstream's answers: fix the preset to the upstream's before lodestar loads.
  process.env.LODESTAR_PRESET ??= await fetchPresetBase(opts.upstream);
  const {httpTransport} = await import("../src/api/client.ts");
  const {startCompatServer} = await import("./http.ts");
  return startCompatServer({...serverLimits(opts), transport: httpTransport(opts.upstream, {streamLists: true}), upstream: opts.upstream});
});

async function check(opts: CompatCheckOptions): Promise<number> {
  // The route codecs read the REST answers: fix the preset to the REST node's before lodestar loads.
  process.env.LODESTAR_PRESET ??= await fetchPresetBase(opts.rest);
  initLogging({directive: parseLogDirective("WARN"), format: "text"});
  const {runCheck} = await import("./check.ts");
  const verdicts = await runCheck({...opts, print: (line) => process.stdout.write(line + "\n")});
  return verdicts.some((v) => v.outcome === "differ") ? 1 : 0;
}

/** The JSON-RPC server's options, the same for `compat` and `node --rpc`. */
function serverLimits(opts: Pick<NodeOptions, "rpcEncoding" | "rpcPort" | "rpcAddress" | "rpcMaxBatch" | "rpcMaxWork" | "rpcMaxAnswer">) {
  return {
    encoding: opts.rpcEncoding,
    port: opts.rpcPort,
    address: opts.rpcAddress,
    maxBatch: opts.rpcMaxBatch,
    maxWork: opts.rpcMaxWork,
    maxAnswerChars: opts.rpcMaxAnswer * 1024 * 1024,
  };
}

/** `node --rpc`: the JSON-RPC server in front of the node's own REST API (in process). */
export async function serveNode(node: RunningNode, opts: NodeOptions): Promise<{close(): Promise<void>}> {
  const {startCompatServer} = await import("./http.ts");
  return startCompatServer({...serverLimits(opts), transport: node.api, metricsRegistry: node.metricsRegistry ?? undefined});
}
