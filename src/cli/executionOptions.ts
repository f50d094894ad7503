import {type OptionTable, InvalidValue, option} from "./optionTable.ts";
import {httpUrl, integer, port, serverAddress} from "./values.ts";
import {logOptions} from "./commonOptions.ts";
import type {CommandSpec} from "./optionTable.ts";
import type {LogDirective} from "../log.ts";

/** The node's execution engine options, and the `mock-engine` command's (src/cli/optionTable.ts). */

export interface ExecutionFields {
  /** the Engine API endpoint; undefined: the in-process mock engine of the dev chain */
  executionEndpoint: string | undefined;
  /** the hex JWT secret file; undefined: `<data-dir>/jwt.hex` */
  jwtSecret: string | undefined;
  /** 20 bytes, 0x hex: fees of proposers that registered no fee recipient */
  suggestedFeeRecipient: string;
}

export function executionAddress(text: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new InvalidValue(`"${text}" is not an execution address (0x and 40 hex digits)`);
  return text.toLowerCase();
}

export function executionOptions(group?: string): OptionTable<ExecutionFields> {
  return {
    executionEndpoint: option({
      name: "execution-endpoint",
      value: "URL",
      defaultText: "the in-process mock engine of the dev chain",
      group,
      help: "the execution client's authenticated Engine API, e.g. `http://127.0.0.1:8551`",
      parse: (text) => (text === undefined ? undefined : httpUrl(text)),
    }),
    jwtSecret: option({
      name: "jwt-secret",
      value: "FILE",
      defaultText: "`<data-dir>/jwt.hex`",
      group,
      help: "hex-encoded 256-bit secret shared with the execution client; created (mode 0600) when missing",
      parse: (text, ctx) => {
        if (text !== undefined && !ctx.given("executionEndpoint")) throw new InvalidValue("only with --execution-endpoint");
        return text;
      },
    }),
    suggestedFeeRecipient: option({
      name: "suggested-fee-recipient",
      value: "ADDRESS",
      default: "0x0000000000000000000000000000000000000000",
      group,
      help: "where the fees of a block go when its proposer registered no fee recipient (`prepare_beacon_proposer`)",
      parse: executionAddress,
    }),
  };
}

export interface MockEngineOptions {
  port: number;
  address: string;
  jwtSecret: string;
  blobsPerBlock: number;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

export const MOCK_ENGINE_COMMAND: CommandSpec<MockEngineOptions> = {
  usage: "beacon-gateway mock-engine --jwt-secret FILE [options]",
  about: `Serves the dev chain's mock execution engine over the Engine API (JSON-RPC over HTTP, JWT
authenticated), for a node started with --execution-endpoint. Payloads carry no transactions.
For tests, the method mock_setPayloadStatus ({blockNumber or blockHash, status}) makes the
engine answer INVALID, INVALID_BLOCK_HASH, SYNCING or ACCEPTED for that payload.`,
  options: {
    port: option({name: "port", value: "PORT", default: "8551", help: "Engine API port (0: any free port, logged at start)", parse: port}),
    address: option({name: "address", value: "ADDR", default: "127.0.0.1", help: "listen address", parse: serverAddress}),
    jwtSecret: option({
      name: "jwt-secret",
      value: "FILE",
      required: true,
      help: "hex-encoded 256-bit secret the node shares; created (mode 0600) when missing",
      parse: (text) => text,
    }),
    blobsPerBlock: option({name: "blobs-per-block", value: "N", default: "0", help: "mock blobs in each payload from deneb on", parse: (text) => integer(text, 0, 9)}),
    ...logOptions(),
  },
};
