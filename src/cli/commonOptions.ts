import type {LogDirective} from "../log.ts";
import {type OptionTable, flag, option} from "./optionTable.ts";
import {graffiti, integer, logDirective, oneOf, port, serverAddress} from "./values.ts";

/** Options more than one command takes, each described once. */

/** JSON-RPC results: integers as JSON numbers (the removed interface's form) or as REST's decimal strings */
export type RpcEncoding = "legacy" | "rest";

type LogFields = {logLevel: LogDirective; logFormat: "text" | "json"};

export function logOptions(group?: string): OptionTable<LogFields> {
  return {
    logLevel: option({
      name: "log-level",
      value: "DIRECTIVE",
      default: "INFO",
      group,
      help: "a level (TRACE, DEBUG, INFO, NOTICE, WARN, ERROR, FATAL) or `<LEVEL>; TRACE:<topics>; REQUIRED:<topics>; DISABLED:<topics>`",
      parse: logDirective,
    }),
    logFormat: option({
      name: "log-format",
      value: "text|json",
      default: "text",
      group,
      help: "log line format",
      parse: (text) => oneOf(text, ["text", "json"] as const),
    }),
  };
}

type RpcFields = {rpcPort: number; rpcAddress: string; rpcEncoding: RpcEncoding; rpcMaxBatch: number; rpcMaxWork: number; rpcMaxAnswer: number};

/** The JSON-RPC listener's options, shared by `node --rpc` and `compat`. */
export function rpcListenOptions(group?: string): OptionTable<RpcFields> {
  return {
    rpcPort: option({name: "rpc-port", value: "PORT", default: "9190", group, help: "JSON-RPC port (0: any free port, logged at start)", parse: port}),
    rpcAddress: option({name: "rpc-address", value: "ADDR", default: "127.0.0.1", group, help: "JSON-RPC listen address; keep it local", parse: serverAddress}),
    rpcEncoding: option({
      name: "rpc-encoding",
      value: "legacy|rest",
      default: "legacy",
      group,
      help: "JSON-RPC results: integers as exact JSON numbers (legacy) or as REST's decimal strings",
      parse: (text) => oneOf(text, ["legacy", "rest"] as const),
    }),
    rpcMaxBatch: option({
      name: "rpc-max-batch",
      value: "N",
      default: "100",
      group,
      help: "calls in one JSON-RPC batch at most; a larger batch is refused whole before any call runs",
      parse: (text) => integer(text, 1, 10000),
    }),
    rpcMaxWork: option({
      name: "rpc-max-work",
      value: "N",
      default: "4096",
      group,
      help: "work of one JSON-RPC request at most, batch or single call: one unit per call, per item of an array param, per comma-separated value; more is refused before any call runs",
      parse: (text) => integer(text, 1, 1_000_000),
    }),
    rpcMaxAnswer: option({
      name: "rpc-max-answer",
      value: "MIB",
      default: "64",
      group,
      help: "MiB of one call's REST answer at most where its reply is built whole (a call in a batch, or a result that is not a whole list); a larger one is a -32000 error. A single call's list result streams, whatever its size",
      parse: (text) => integer(text, 1, 4096),
    }),
  };
}

export function graffitiOptions(group?: string): OptionTable<{graffiti: string | undefined}> {
  return {
    graffiti: option({
      name: "graffiti",
      value: "TEXT",
      defaultText: "`beacon-gateway`",
      group,
      help: "graffiti for proposed blocks: UTF-8 text or `0x` hex of up to 32 bytes; kept across restarts",
      parse: graffiti,
    }),
  };
}

type MetricsFields = {metrics: boolean; metricsAddress: string; metricsPort: number};

/** The Prometheus endpoint's options, of the node and of the validator client (each its own default port). */
export function metricsOptions(group: string, defaultPort: number): OptionTable<MetricsFields> {
  return {
    metrics: flag({name: "metrics", group, help: "serve Prometheus metrics at `/metrics` (see docs/metrics-logging.md)"}),
    metricsAddress: option({name: "metrics-address", value: "ADDR", default: "127.0.0.1", group, help: "metrics listen address", parse: serverAddress}),
    metricsPort: option({name: "metrics-port", value: "PORT", default: String(defaultPort), group, help: "metrics port (0: any free port, logged at start)", parse: port}),
  };
}
