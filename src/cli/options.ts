import type {LogDirective} from "../log.ts";
import {type RpcEncoding, graffitiOptions, logOptions, metricsOptions, rpcListenOptions} from "./commonOptions.ts";
import {type ValidatorBuilderFields, validatorBuilderOptions} from "./builderOptions.ts";
import {NODE_COMMAND, type NodeOptions} from "./nodeOptions.ts";
import {type CommandSpec, InvalidValue, option, parseCommand, renderHelp, repeatable} from "./optionTable.ts";
import {httpUrl, parseIndexRange} from "./values.ts";
import {executionAddress} from "./executionOptions.ts";
import {type KeyFields, type KeymanagerFields, keyOptions, keymanagerOptions} from "./validatorKeyOptions.ts";

/**
 * The commands' options. Each command has one table of its options (the node's in
 * nodeOptions.ts) from which come its parsing, its `--help` text and its option tables in
 * docs/cli.md (`node scripts/options-docs.ts --write`).
 */

export {UsageError} from "./optionTable.ts";
export {parseIndexRange} from "./values.ts";
export {NODE_COMMAND, type NodeOptions, type RpcEncoding};

/** `beacon-gateway compat`: the JSON-RPC interface in front of any beacon node's REST API. */
export interface CompatCommandOptions {
  upstream: string;
  rpcPort: number;
  rpcAddress: string;
  rpcEncoding: RpcEncoding;
  rpcMaxBatch: number;
  rpcMaxWork: number;
  rpcMaxAnswer: number;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

/** `beacon-gateway compat check`: both protocols of the same node(s), method by method. */
export interface CompatCheckOptions {
  rpc: string;
  rest: string;
}

export interface ValidatorOptions extends KeyFields, KeymanagerFields, ValidatorBuilderFields {
  /** in order of preference (src/validator/beaconNodes.ts) */
  beaconNodes: string[];
  interopIndices: number[];
  dataDir: string;
  graffiti: string | undefined;
  suggestedFeeRecipient: string | undefined;
  logLevel: LogDirective;
  logFormat: "text" | "json";
  metrics: boolean;
  metricsAddress: string;
  metricsPort: number;
}

/** `--beacon-node URL[,URL…]`, repeatable: the URLs in the order given, each once. */
function beaconNodeUrls(texts: string[]): string[] {
  const urls = texts.flatMap((text) => text.split(",")).map((t) => t.trim()).filter((t) => t !== "").map(httpUrl);
  if (urls.length === 0) throw new InvalidValue("give at least one URL");
  const seen = new Set<string>();
  for (const text of urls) {
    const key = new URL(text).href.replace(/\/+$/, "");
    if (seen.has(key)) throw new InvalidValue(`"${text}" is given twice`);
    seen.add(key);
  }
  return urls;
}

const CLIENT = "Client";
const KEYS = "Keys";
const KEYMANAGER = "Keymanager API";

export const VALIDATOR_COMMAND: CommandSpec<ValidatorOptions> = {
  usage: "beacon-gateway validator --beacon-node URL[,URL…] [options]",
  about: "Runs validators (EIP-2335 keystores, or interop keys on a dev chain) against any beacon node's REST API. See docs/validators.md.",
  options: {
    beaconNodes: repeatable({
      name: "beacon-node",
      value: "URL[,URL…]",
      required: true,
      group: CLIENT,
      help: "the beacon node's REST API, e.g. `http://127.0.0.1:5052`; several (comma-separated or repeated): duties from the first synced one, failover to the next, publications to all (see docs/validators.md)",
      parse: beaconNodeUrls,
    }),
    dataDir: option({
      name: "data-dir",
      value: "DIR",
      default: "./data/validator",
      group: CLIENT,
      help: "slashing protection database, keystores imported through the keymanager API, per-key settings, the keymanager token",
      parse: (text) => text,
    }),
    suggestedFeeRecipient: option({
      name: "suggested-fee-recipient",
      value: "ADDRESS",
      group: CLIENT,
      help: "fee recipient announced for the keys without their own (set through the keymanager API); none: the beacon node's",
      parse: (text) => (text === undefined ? undefined : executionAddress(text)),
    }),
    ...graffitiOptions(CLIENT),
    ...validatorBuilderOptions(CLIENT),
    interopIndices: option({
      name: "interop-indices",
      value: "RANGE",
      defaultText: "`0..63`; `none` with `--keystores`, `--remote-signer` or `--keymanager`",
      group: KEYS,
      help: "interop (dev chain) validator indices to run, e.g. `0..31,40`, or `none`",
      parse: (text, ctx) => parseIndexRange(text ?? (ctx.given("keystoresDir") || ctx.given("remoteSigner") || ctx.given("keymanager") ? "none" : "0..63"), Infinity),
    }),
    ...keyOptions(KEYS),
    ...keymanagerOptions(KEYMANAGER),
    ...metricsOptions("Metrics", 5064),
    ...logOptions(),
  },
};

export const COMPAT_COMMAND: CommandSpec<CompatCommandOptions> = {
  usage: "beacon-gateway compat --upstream URL [options]",
  about: `Serves the removed JSON-RPC interface in front of any beacon node's REST API: each call is
forwarded to the REST endpoint that replaces it (see migration-guide/). Methods that need the
/ext/v1 endpoints of beacon-gateway answer an error when the upstream lacks them.
\`beacon-gateway compat check --rpc URL --rest URL\` compares both protocols method by method.`,
  options: {
    upstream: option({
      name: "upstream",
      value: "URL",
      required: true,
      help: "the beacon node's REST API (http or https), e.g. `http://127.0.0.1:5052`",
      parse: httpUrl,
    }),
    ...rpcListenOptions(),
    ...logOptions(),
  },
};

export const COMPAT_CHECK_COMMAND: CommandSpec<CompatCheckOptions> = {
  usage: "beacon-gateway compat check --rpc URL --rest URL",
  about: `Calls every legacy JSON-RPC method at --rpc and its REST replacement at --rest (the call
and the field the migration guide names), on the finalized block's state, and prints method by
method whether the answers agree; where they differ, the first difference as a path and both
values. Integers agree by their digits (JSON numbers and REST's decimal strings). Writes are
skipped. Exits 1 when any method differs.`,
  options: {
    rpc: option({name: "rpc", value: "URL", required: true, help: "the JSON-RPC endpoint, e.g. `http://127.0.0.1:9190`", parse: httpUrl}),
    rest: option({name: "rest", value: "URL", required: true, help: "the REST API, e.g. `http://127.0.0.1:5052`", parse: httpUrl}),
  },
};

export const NODE_HELP = renderHelp(NODE_COMMAND);
export const VALIDATOR_HELP = renderHelp(VALIDATOR_COMMAND);
export const COMPAT_HELP = renderHelp(COMPAT_COMMAND);
export const COMPAT_CHECK_HELP = renderHelp(COMPAT_CHECK_COMMAND);

export function parseNodeOptions(args: string[]): NodeOptions | "help" {
  return parseCommand(NODE_COMMAND, args);
}

export function parseValidatorOptions(args: string[]): ValidatorOptions | "help" {
  return parseCommand(VALIDATOR_COMMAND, args);
}

export function parseCompatOptions(args: string[]): CompatCommandOptions | "help" {
  return parseCommand(COMPAT_COMMAND, args);
}

export function parseCompatCheckOptions(args: string[]): CompatCheckOptions | "help" {
  return parseCommand(COMPAT_CHECK_COMMAND, args);
}
