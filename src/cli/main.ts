import {NODE_COMMAND, VALIDATOR_COMMAND, UsageError, type ValidatorOptions} from "./options.ts";
import type {NodeOptions} from "./nodeOptions.ts";
import type {RunningNode} from "../node.ts";
import {DEVNET_COMMAND, type DevnetOptions} from "./devnetOptions.ts";
import {SLASHING_EXPORT_COMMAND, SLASHING_IMPORT_COMMAND} from "./slashingProtectionOptions.ts";
import {MOCK_ENGINE_COMMAND} from "./executionOptions.ts";
import {MOCK_BUILDER_COMMAND} from "./builderOptions.ts";
import {REMOTE_SIGNER_COMMAND} from "./remoteSignerOptions.ts";
import {type CommandSpec, parseCommand, renderHelp} from "./optionTable.ts";
import {DB_CHECK_COMMAND, DB_REPAIR_COMMAND} from "./dbOptions.ts";
import {type LogDirective, initLogging} from "../log.ts";
import {useFastestHasher} from "../hasher.ts";
import {DbDamagedError} from "../db/damage.ts";
import {checkPortsFree} from "../ports.ts";
import {nodePortClaims} from "./nodePorts.ts";

const USAGE = `Usage: beacon-gateway <command> [options]

Commands:
  node        run the beacon node (see: beacon-gateway node --help)
  validator   run validators (keystores, or interop keys) against a beacon node's REST API (see: beacon-gateway validator --help)
  compat      serve the removed JSON-RPC interface in front of a beacon node's REST API (see: beacon-gateway compat --help);
              compat check compares a JSON-RPC endpoint with a REST one, method by method
  devnet      run several nodes on one dev chain on this machine (see: beacon-gateway devnet --help)
  mock-engine serve the dev chain's mock execution engine over the Engine API (see: beacon-gateway mock-engine --help)
  mock-builder serve a builder relay for tests, over the mock engine (see: beacon-gateway mock-builder --help)
  remote-signer
              serve keystores' keys over the Web3Signer API, a stand-in for tests (see: beacon-gateway remote-signer --help)
  slashing-protection export|import
              EIP-3076 slashing protection interchange files (see: beacon-gateway slashing-protection export --help)
  db check|repair
              find and repair a damaged database (see: beacon-gateway db check --help)
`;

/** Errors whose message says all a user needs (src/validator/keys, src/sync/weakSubjectivity.ts, src/ports.ts). */
const USER_REFUSALS: ReadonlySet<string> = new Set(["KeyLoadError", "StartRefused", "PortUnavailable"]);

/**
 * The legacy JSON-RPC interface's part of the command line (compat/commands.ts): the `compat`
 * command and `node --rpc`. The launcher hands it in; nothing in src/ imports compat/.
 */
export interface CompatCommands {
  /** `beacon-gateway compat …`; resolves to the exit code */
  run(args: string[]): Promise<number>;
  /** `node --rpc`: the JSON-RPC server in front of the node's REST API */
  serveNode(node: RunningNode, opts: NodeOptions): Promise<{close(): Promise<void>}>;
}
export type CompatLoader = () => Promise<CompatCommands>;

/** Runs a command; resolves to the process exit code once it has stopped. */
export async function main(args: string[], extensions: {compat?: CompatLoader} = {}): Promise<number> {
  const [command, ...rest] = args;
  await useFastestHasher();
  try {
    const run = command === undefined ? undefined : Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (run && (command !== "compat" || extensions.compat)) return await run(rest, extensions);
    if (command === "--help" || command === "-h" || command === undefined) {
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    }
    throw new UsageError(`unknown command "${command}" (${Object.keys(COMMANDS).join(", ")})`);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`beacon-gateway: ${e.message}\n`);
      return 2;
    }
    // a refusal the operator acts on (keystores that cannot be used or are in use elsewhere, a
    // checkpoint that is not the trusted one, a damaged database): the message names it and the
    // way back, a stack would only hide it
    if (USER_REFUSALS.has((e as Error).name) || e instanceof DbDamagedError) {
      process.stderr.write(`beacon-gateway: ${(e as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`beacon-gateway: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}

/**
 * The one shape of every command: its options parsed by its option table (`--help` prints the
 * table's help; a wrong option throws the UsageError main() prints in one line), then `run`
 * with them. Resolves to the exit code.
 */
export async function runCommand<O>(spec: CommandSpec<O>, args: string[], run: (opts: O) => Promise<number>): Promise<number> {
  const opts = parseCommand(spec, args);
  if (opts === "help") {
    process.stdout.write(renderHelp(spec));
    return 0;
  }
  return run(opts);
}

/**
 * A command that serves until SIGINT or SIGTERM: logging as its options say, `start` (which
 * imports what it runs: nothing of lodestar loads before the preset is fixed), then the server
 * closed at the signal; exit code 0.
 */
export function serverCommand<O extends {logLevel: LogDirective; logFormat: "text" | "json"}>(
  spec: CommandSpec<O>,
  start: (opts: O) => Promise<{close(): Promise<void>}>
): (args: string[]) => Promise<number> {
  return (args) =>
    runCommand(spec, args, async (opts) => {
      initLogging({directive: opts.logLevel, format: opts.logFormat});
      const signalled = untilSignal();
      const server = await start(opts);
      await signalled;
      await server.close();
      return 0;
    });
}

/** A command of actions, each with its option table (`db check|repair`); `--help` alone lists them. */
function actions(command: string, byAction: Record<string, (args: string[]) => Promise<number>>): (args: string[]) => Promise<number> {
  const names = Object.keys(byAction);
  return async ([action, ...rest]) => {
    if (action !== undefined && Object.hasOwn(byAction, action)) return byAction[action](rest);
    if (action === "--help" || action === "-h") {
      process.stdout.write(`Usage: beacon-gateway ${command} ${names.join("|")} [options]\n(see: ${names.map((a) => `beacon-gateway ${command} ${a} --help`).join(", ")})\n`);
      return 0;
    }
    throw new UsageError(`${command}: expected ${names.join(" or ")}, got ${JSON.stringify(action ?? "")}`);
  };
}

type Command = (args: string[], extensions: {compat?: CompatLoader}) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  node: (args, {compat}) => runCommand(NODE_COMMAND, args, (opts) => runNode(opts, compat)),
  validator: (args) => runCommand(VALIDATOR_COMMAND, args, runValidator),
  compat: async (args, {compat}) => (await compat!()).run(args),
  devnet: (args) => runCommand(DEVNET_COMMAND, args, runDevnet),
  "mock-engine": serverCommand(MOCK_ENGINE_COMMAND, async (opts) => (await import("../execution/mockEngineProcess.ts")).startMockEngineProcess(opts)),
  "mock-builder": serverCommand(MOCK_BUILDER_COMMAND, async (opts) => {
    // The preset must be fixed before lodestar loads: take the beacon node's.
    process.env.LODESTAR_PRESET ??= await fetchPresetBase(opts.beaconNode);
    return (await import("../mockBuilderProcess.ts")).startMockBuilderProcess(opts);
  }),
  "remote-signer": serverCommand(REMOTE_SIGNER_COMMAND, async (opts) => (await import("../validator/remote/standInSigner.ts")).startStandInSignerProcess(opts)),
  "slashing-protection": actions("slashing-protection", {
    export: (args) => runCommand(SLASHING_EXPORT_COMMAND, args, async (opts) => interchange("export", async (files) => files.exportInterchangeFile(opts))),
    import: (args) => runCommand(SLASHING_IMPORT_COMMAND, args, async (opts) => interchange("import", async (files) => files.importInterchangeFile(opts))),
  }),
  db: actions("db", {
    check: (args) => runCommand(DB_CHECK_COMMAND, args, async (opts) => (await import("./dbCommand.ts")).runDb("check", opts)),
    repair: (args) => runCommand(DB_REPAIR_COMMAND, args, async (opts) => (await import("./dbCommand.ts")).runDb("repair", opts)),
  }),
};

/** The preset of the first of `beaconNodes` that tells it (each tried in turn, for 30 rounds a second apart). */
export async function fetchPresetBase(...beaconNodes: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const failures: string[] = [];
    for (const beaconNode of beaconNodes) {
      const url = new URL("/eth/v1/config/spec", beaconNode);
      try {
        const res = await fetch(url);
        const body = (await res.json()) as {data?: {PRESET_BASE?: string}};
        const preset = body.data?.PRESET_BASE;
        if (preset === "minimal" || preset === "mainnet") return preset;
        throw new Error(`the beacon node's spec has PRESET_BASE ${JSON.stringify(preset)}`);
      } catch (e) {
        failures.push(`${url}: ${(e as Error).message}`);
      }
    }
    if (attempt >= 30) throw new Error(`cannot read the preset from ${failures.join("; ")}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Resolves when SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
}

async function runNode(opts: NodeOptions, compat: CompatLoader | undefined): Promise<number> {
  // a taken port refuses the start now, in one line, before the node's modules load
  await checkPortsFree(nodePortClaims(opts));
  // a signal while the node starts stops it once started, rather than kill it half-way
  const signalled = untilSignal();
  const {startNode} = await import("../node.ts");
  const node = await startNode(opts);
  // the JSON-RPC layer (compat/) is handed in by the launcher: the node itself knows nothing of it
  const rpc = opts.rpc && compat
    ? await (await compat()).serveNode(node, opts).catch(async (e: unknown) => {
        await node.stop();
        throw e;
      })
    : null;
  await signalled;
  await rpc?.close();
  await node.stop();
  return 0;
}

async function runDevnet(opts: DevnetOptions): Promise<number> {
  const signalled = untilSignal();
  const {startDevnet} = await import("../devnet.ts");
  const devnet = await startDevnet(opts);
  for (const node of devnet.nodes) process.stdout.write(`node ${node.index}: REST ${node.restUrl}, log ${opts.dataDir}/node-${node.index}.log\n`);
  const epochMs = opts.secondsPerSlot * (opts.preset === "minimal" ? 8 : 32) * 1000;
  const timer = setInterval(() => void devnet.status().then((lines) => process.stdout.write(lines.join("\n") + "\n")), epochMs);
  await signalled;
  clearInterval(timer);
  await devnet.stop();
  return 0;
}

async function runValidator(opts: ValidatorOptions): Promise<number> {
  const signalled = untilSignal();
  // The preset must be fixed before lodestar loads: take the beacon node's.
  process.env.LODESTAR_PRESET ??= await fetchPresetBase(...opts.beaconNodes);
  const {startStandaloneValidator} = await import("../validator/standalone.ts");
  const validator = await startStandaloneValidator(opts);
  // a doppelganger found stops the client with exit code 1
  const halted = await Promise.race([signalled.then(() => null), validator.halted]);
  await validator.stop();
  if (halted === null) return 0;
  process.stderr.write(`beacon-gateway: validator stopped: ${halted}\n`);
  return 1;
}

/** An interchange file written or read: its summary printed, or the file's fault in one line (exit code 1). */
async function interchange(action: string, run: (files: typeof import("../validator/interchangeCommand.ts")) => Promise<string>): Promise<number> {
  const {InterchangeError} = await import("../validator/interchange.ts");
  try {
    process.stdout.write((await run(await import("../validator/interchangeCommand.ts"))) + "\n");
    return 0;
  } catch (e) {
    if (!(e instanceof InterchangeError)) throw e;
    process.stderr.write(`beacon-gateway: slashing-protection ${action}: ${e.message}\n`);
    return 1;
  }
}
