import {graffitiFromText} from "../graffiti.ts";
import {parseArgs} from "node:util";
import {DEV_FORKS, type DevFork} from "../config/forks.ts";
import {parseLogDirective, type LogDirective} from "../log.ts";

/** Thrown for a bad command line; the launcher prints the message on one line and exits 2. */
export class UsageError extends Error {}

export interface NodeOptions {
  rest: boolean;
  restPort: number;
  restAddress: string;
  restAllowOrigin: string | null;
  subscribeAllSubnets: boolean;
  /** the removed JSON-RPC interface, served by compat/ over the REST handlers */
  rpc: boolean;
  rpcPort: number;
  rpcAddress: string;
  rpcEncoding: RpcEncoding;
  dataDir: string;
  network: "dev";
  preset: "minimal" | "mainnet";
  validators: number;
  genesisTime: number | undefined;
  secondsPerSlot: number;
  genesisFork: DevFork;
  forkEpochs: Partial<Record<DevFork, number>>;
  /** interop indices this process runs; [] for none */
  devValidators: number[];
  graffiti: string | undefined;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

/** JSON-RPC results: integers as JSON numbers (the removed interface's form) or as REST's decimal strings */
export type RpcEncoding = "legacy" | "rest";

/** `beacon-gateway compat`: the JSON-RPC interface in front of any beacon node's REST API. */
export interface CompatCommandOptions {
  upstream: string;
  rpcPort: number;
  rpcAddress: string;
  rpcEncoding: RpcEncoding;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

export interface ValidatorOptions {
  beaconNode: string;
  interopIndices: number[];
  dataDir: string;
  graffiti: string | undefined;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

export const NODE_HELP = `Usage: beacon-gateway node [options]

Runs a beacon node. With no network to join it runs a local dev chain whose interop
validators it drives itself.

REST API
  --rest                      enable the REST API (off by default)
  --rest-port PORT            REST port (default 5052)
  --rest-address ADDR         REST listen address (default 127.0.0.1)
  --rest-allow-origin ORIGIN  value of Access-Control-Allow-Origin (default: none)
  --subscribe-all-subnets     subscribe to all attestation subnets (recorded for the network layer)

JSON-RPC (the removed interface, kept for migration: see migration-guide/)
  --rpc                       serve the legacy JSON-RPC methods over the REST handlers (off by default)
  --rpc-port PORT             JSON-RPC port (default 9190)
  --rpc-address ADDR          JSON-RPC listen address (default 127.0.0.1)
  --rpc-encoding legacy|rest  integers as JSON numbers (legacy, default) or as REST's decimal strings

Chain
  --data-dir DIR              where the database lives (default ./data/<network>)
  --network NAME              network to run (default dev; the only one so far)
  --preset minimal|mainnet    consensus preset (dev default: minimal)
  --validators N              interop validators in the dev genesis (default 64)
  --genesis-time SECONDS      unix time of genesis (default: shortly after first start,
                              then fixed by the stored genesis)
  --seconds-per-slot N        slot duration (dev default 4)
  --genesis-fork FORK         phase0..fulu: every fork up to it is active at epoch 0 (default fulu)
  --fork-epochs LIST          schedule forks instead, e.g. altair=1,bellatrix=2,capella=3

Validators
  --dev-validators RANGE      interop validators this process runs: all (default), none,
                              or a list of indices and ranges such as 0..31,40
  --graffiti TEXT             graffiti for proposed blocks (text, or 0x hex of up to 32 bytes)

Logging
  --log-level DIRECTIVE       a level (TRACE, DEBUG, INFO, NOTICE, WARN, ERROR, FATAL) or a
                              directive "<LEVEL>; TRACE:<topics>; REQUIRED:<topics>; DISABLED:<topics>"
  --log-format text|json      log line format (default text)

  --help                      show this help
`;

export const VALIDATOR_HELP = `Usage: beacon-gateway validator --beacon-node URL [options]

Runs interop validators against any beacon node's REST API.

  --beacon-node URL           the beacon node's REST API (required), e.g. http://127.0.0.1:5052
  --interop-indices RANGE     interop validator indices to run, e.g. 0..31 (default 0..63)
  --data-dir DIR              slashing protection database (default ./data/validator)
  --graffiti TEXT             graffiti for proposed blocks
  --log-level DIRECTIVE       as for the node
  --log-format text|json
  --help
`;

export const COMPAT_HELP = `Usage: beacon-gateway compat --upstream URL [options]

Serves the removed JSON-RPC interface in front of any beacon node's REST API: each call is
forwarded to the REST endpoint that replaces it (see migration-guide/). Methods that need the
/ext/v1 endpoints of beacon-gateway answer an error when the upstream lacks them.

  --upstream URL              the beacon node's REST API (required), e.g. http://127.0.0.1:5052
  --rpc-port PORT             JSON-RPC port (default 9190; 0: any free port, logged at start)
  --rpc-address ADDR          JSON-RPC listen address (default 127.0.0.1)
  --rpc-encoding legacy|rest  integers as JSON numbers (legacy, default) or as REST's decimal strings
  --log-level DIRECTIVE       as for the node
  --log-format text|json
  --help
`;

function integer(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name}: "${value}" is not a whole number`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name}: ${n} is out of range (${min}..${max})`);
  return n;
}

/** "0..31,40" → [0..31, 40]; "all" → 0..count-1; "none" → []. */
export function parseIndexRange(name: string, text: string, count: number): number[] {
  if (text === "all") return Array.from({length: count}, (_, i) => i);
  if (text === "none") return [];
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const m = /^(\d+)(?:\.\.(\d+))?$/.exec(part.trim());
    if (!m) throw new UsageError(`--${name}: "${part}" is not an index or a range like 0..31`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new UsageError(`--${name}: range ${part} ends before it starts`);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

function parseForkEpochs(text: string | undefined): Partial<Record<DevFork, number>> {
  if (text === undefined) return {};
  const out: Partial<Record<DevFork, number>> = {};
  for (const part of text.split(",")) {
    const m = /^([a-z0-9]+)=(\d+)$/.exec(part.trim());
    if (!m) throw new UsageError(`--fork-epochs: "${part}" is not FORK=EPOCH`);
    const fork = m[1] as DevFork;
    if (!DEV_FORKS.includes(fork) || fork === "phase0") throw new UsageError(`--fork-epochs: unknown fork "${m[1]}" (altair..fulu)`);
    out[fork] = Number(m[2]);
  }
  return out;
}

function logOptions(values: Record<string, unknown>): {logLevel: LogDirective; logFormat: "text" | "json"} {
  let logLevel: LogDirective;
  try {
    logLevel = parseLogDirective((values["log-level"] as string | undefined) ?? "INFO");
  } catch (e) {
    throw new UsageError(`--log-level: ${(e as Error).message}`);
  }
  const logFormat = (values["log-format"] as string | undefined) ?? "text";
  if (logFormat !== "text" && logFormat !== "json") throw new UsageError(`--log-format: "${logFormat}" is not text or json`);
  return {logLevel, logFormat};
}

/** A listen address: an IP address or localhost. */
function listenAddress(name: string, value: string | undefined): string {
  const address = value ?? "127.0.0.1";
  if (!/^[0-9a-fA-F.:]+$|^localhost$/.test(address)) throw new UsageError(`--${name}: "${address}" is not an IP address`);
  return address;
}

/** The JSON-RPC listener's options, shared by `node --rpc` and `compat`. */
function rpcListenOptions(v: Record<string, unknown>): {rpcPort: number; rpcAddress: string; rpcEncoding: RpcEncoding} {
  const rpcEncoding = (v["rpc-encoding"] as string | undefined) ?? "legacy";
  if (rpcEncoding !== "legacy" && rpcEncoding !== "rest") throw new UsageError(`--rpc-encoding: "${rpcEncoding}" is not legacy or rest`);
  return {
    rpcPort: integer("rpc-port", v["rpc-port"] as string | undefined, 0, 65535) ?? 9190,
    rpcAddress: listenAddress("rpc-address", v["rpc-address"] as string | undefined),
    rpcEncoding,
  };
}

type OptionSpec = Record<string, {type: "string" | "boolean"}>;

function parse(args: string[], options: OptionSpec) {
  try {
    return parseArgs({args, options, strict: true, allowPositionals: false}).values as Record<string, string | boolean | undefined>;
  } catch (e) {
    throw new UsageError((e as Error).message.split("\n")[0]);
  }
}

const str = {type: "string"} as const;
const bool = {type: "boolean"} as const;

export function parseNodeOptions(args: string[]): NodeOptions | "help" {
  const v = parse(args, {
    rest: bool, "rest-port": str, "rest-address": str, "rest-allow-origin": str, "subscribe-all-subnets": bool,
    rpc: bool, "rpc-port": str, "rpc-address": str, "rpc-encoding": str,
    "data-dir": str, network: str, preset: str, validators: str, "genesis-time": str, "seconds-per-slot": str,
    "genesis-fork": str, "fork-epochs": str, "dev-validators": str, graffiti: str, "log-level": str, "log-format": str, help: bool,
  }) as Record<string, string | undefined> & {rest?: boolean; rpc?: boolean; help?: boolean; "subscribe-all-subnets"?: boolean};
  if (v.help) return "help";
  const network = v.network ?? "dev";
  if (network !== "dev") throw new UsageError(`--network: unknown network "${network}" (only "dev" is supported so far)`);
  const preset = v.preset ?? "minimal";
  if (preset !== "minimal" && preset !== "mainnet") throw new UsageError(`--preset: "${preset}" is not minimal or mainnet`);
  const genesisFork = (v["genesis-fork"] ?? "fulu") as DevFork;
  if (!DEV_FORKS.includes(genesisFork)) throw new UsageError(`--genesis-fork: unknown fork "${genesisFork}" (${DEV_FORKS.join(", ")})`);
  const validators = integer("validators", v.validators, 1, 1_000_000) ?? 64;
  const restAddress = listenAddress("rest-address", v["rest-address"]);
  checkGraffiti(v.graffiti);
  return {
    rest: v.rest ?? false,
    restPort: integer("rest-port", v["rest-port"], 0, 65535) ?? 5052,
    restAddress,
    restAllowOrigin: v["rest-allow-origin"] ?? null,
    subscribeAllSubnets: v["subscribe-all-subnets"] ?? false,
    rpc: v.rpc ?? false,
    ...rpcListenOptions(v),
    dataDir: v["data-dir"] ?? `./data/${network}`,
    network,
    preset,
    validators,
    genesisTime: integer("genesis-time", v["genesis-time"], 0, 2 ** 40),
    secondsPerSlot: integer("seconds-per-slot", v["seconds-per-slot"], 1, 3600) ?? 4,
    genesisFork,
    forkEpochs: parseForkEpochs(v["fork-epochs"]),
    devValidators: parseIndexRange("dev-validators", v["dev-validators"] ?? "all", validators).filter((i) => {
      if (i >= validators) throw new UsageError(`--dev-validators: index ${i} is not below --validators ${validators}`);
      return true;
    }),
    graffiti: v.graffiti,
    ...logOptions(v),
  };
}

export function parseValidatorOptions(args: string[]): ValidatorOptions | "help" {
  const v = parse(args, {
    "beacon-node": str, "interop-indices": str, "data-dir": str, graffiti: str, "log-level": str, "log-format": str, help: bool,
  }) as Record<string, string | undefined> & {help?: boolean};
  if (v.help) return "help";
  const beaconNode = v["beacon-node"];
  if (!beaconNode) throw new UsageError("--beacon-node URL is required");
  try {
    new URL(beaconNode);
  } catch {
    throw new UsageError(`--beacon-node: "${beaconNode}" is not a URL`);
  }
  checkGraffiti(v.graffiti);
  return {
    beaconNode,
    interopIndices: parseIndexRange("interop-indices", v["interop-indices"] ?? "0..63", Infinity),
    dataDir: v["data-dir"] ?? "./data/validator",
    graffiti: v.graffiti,
    ...logOptions(v),
  };
}

export function parseCompatOptions(args: string[]): CompatCommandOptions | "help" {
  const v = parse(args, {
    upstream: str, "rpc-port": str, "rpc-address": str, "rpc-encoding": str, "log-level": str, "log-format": str, help: bool,
  }) as Record<string, string | undefined> & {help?: boolean};
  if (v.help) return "help";
  const upstream = v.upstream;
  if (!upstream) throw new UsageError("--upstream URL is required");
  let url: URL;
  try {
    url = new URL(upstream);
  } catch {
    throw new UsageError(`--upstream: "${upstream}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--upstream: "${upstream}" is not an http(s) URL`);
  return {upstream, ...rpcListenOptions(v), ...logOptions(v)};
}

function checkGraffiti(text: string | undefined): void {
  if (text === undefined) return;
  try {
    graffitiFromText(text);
  } catch (e) {
    throw new UsageError(`--graffiti: ${(e as Error).message}`);
  }
}
