import {COMPAT_CHECK_HELP, COMPAT_HELP, type NodeOptions, parseCompatCheckOptions, parseCompatOptions} from "../src/cli/options.ts";
import {fetchPresetBase, untilSignal} from "../src/cli/main.ts";
import {initLogging, parseLogDirective} from "../src/log.ts";
import type {RunningNode} from "../src/node.ts";

/*
 * The JSON-RPC interface's part of the command line, handed to src/cli/main.ts by the launcher
 * (bin/beacon-gateway.js): `beacon-gateway compat`, `compat check` and `node --rpc`. What loads
 * lodestar (the route codecs) is imported only once the preset is fixed.
 */

/** `beacon-gateway compat …`: the JSON-RPC server in front of any beacon node's REST API, or `compat check`. */
export async function run(args: string[]): Promise<number> {
  if (args[0] === "check") return runCheckCommand(args.slice(1));
  const opts = parseCompatOptions(args);
  if (opts === "help") {
    process.stdout.write(COMPAT_HELP);
    return 0;
  }
  // The route codecs read the upstream's answers: fix the preset to the upstream's before lodestar loads.
  process.env.LODESTAR_PRESET ??= await fetchPresetBase(opts.upstream);
  initLogging({directive: opts.logLevel, format: opts.logFormat});
  const {httpTransport} = await import("../src/api/client.ts");
  const {startCompatServer} = await import("./http.ts");
  const rpc = await startCompatServer({
    transport: httpTransport(opts.upstream, {streamLists: true}),
    encoding: opts.rpcEncoding,
    port: opts.rpcPort,
    address: opts.rpcAddress,
    maxBatch: opts.rpcMaxBatch,
    maxWork: opts.rpcMaxWork,
    maxAnswerChars: opts.rpcMaxAnswer * 1024 * 1024,
    upstream: opts.upstream,
  });
  await untilSignal();
  await rpc.close();
  return 0;
}

async function runCheckCommand(args: string[]): Promise<number> {
  const opts = parseCompatCheckOptions(args);
  if (opts === "help") {
    process.stdout.write(COMPAT_CHECK_HELP);
    return 0;
  }
  // The route codecs read the REST answers: fix the preset to the REST node's before lodestar loads.
  process.env.LODESTAR_PRESET ??= await fetchPresetBase(opts.rest);
  initLogging({directive: parseLogDirective("WARN"), format: "text"});
  const {runCheck} = await import("./check.ts");
  const verdicts = await runCheck({...opts, print: (line) => process.stdout.write(line + "\n")});
  return verdicts.some((v) => v.outcome === "differ") ? 1 : 0;
}

/** `node --rpc`: the JSON-RPC server in front of the node's own REST API (in process). */
export async function serveNode(node: RunningNode, opts: NodeOptions): Promise<{close(): Promise<void>}> {
  const {startCompatServer} = await import("./http.ts");
  return startCompatServer({
    transport: node.api,
    encoding: opts.rpcEncoding,
    port: opts.rpcPort,
    address: opts.rpcAddress,
    maxBatch: opts.rpcMaxBatch,
    maxWork: opts.rpcMaxWork,
    maxAnswerChars: opts.rpcMaxAnswer * 1024 * 1024,
    metricsRegistry: node.metricsRegistry ?? undefined,
  });
}
