import type {LogDirective} from "../log.ts";
import {MOCK_BUILDER_FAULTS, type MockBuilderFault} from "../builder/faults.ts";
import {logOptions} from "./commonOptions.ts";
import {type CommandSpec, InvalidValue, option} from "./optionTable.ts";
import {httpUrl, integer, oneOf, port, serverAddress} from "./values.ts";

/** The `mock-builder` command's options (src/cli/optionTable.ts). */

export interface MockBuilderOptions {
  port: number;
  address: string;
  engine: string;
  jwtSecret: string;
  beaconNode: string;
  secretKey: string | undefined;
  bidValue: bigint;
  lateBidMs: number;
  fault: MockBuilderFault;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

function wei(text: string): bigint {
  if (!/^[0-9]{1,78}$/.test(text)) throw new InvalidValue(`"${text}" is not an amount of wei`);
  return BigInt(text);
}

export const MOCK_BUILDER_COMMAND: CommandSpec<MockBuilderOptions> = {
  usage: "beacon-gateway mock-builder --engine URL --jwt-secret FILE --beacon-node URL [options]",
  about: `Serves a builder relay (the builder API) for tests: it follows a beacon node's payload_attributes
events, builds payloads through the Engine API of the dev chain's mock engine, marks them with the
extra_data text "beacon-gateway mock-builder", signs bids with its own key, keeps registrations,
and reveals a payload for a blinded block its proposer signed (from fulu it publishes the block
itself). For tests, POST /mock/fault {"fault": NAME} injects a fault (${MOCK_BUILDER_FAULTS.join(", ")}).`,
  options: {
    port: option({name: "port", value: "PORT", default: "18550", help: "builder API port (0: any free port, logged at start)", parse: port}),
    address: option({name: "address", value: "ADDR", default: "127.0.0.1", help: "listen address", parse: serverAddress}),
    engine: option({name: "engine", value: "URL", required: true, help: "the mock engine's authenticated Engine API, e.g. `http://127.0.0.1:8551`", parse: httpUrl}),
    jwtSecret: option({name: "jwt-secret", value: "FILE", required: true, help: "hex-encoded 256-bit secret the engine shares", parse: (text) => text}),
    beaconNode: option({name: "beacon-node", value: "URL", required: true, help: "the beacon node's REST API the relay follows, e.g. `http://127.0.0.1:5052`", parse: httpUrl}),
    secretKey: option({
      name: "secret-key",
      value: "HEX",
      defaultText: "a new random key",
      help: "the builder's BLS secret key (32 bytes, 0x hex) its bids are signed with",
      parse: (text) => {
        if (text !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(text)) throw new InvalidValue("not 0x and 64 hex digits");
        return text;
      },
    }),
    bidValue: option({name: "bid-value", value: "WEI", default: "1000000000000000", help: "the value of each bid, in wei", parse: wei}),
    lateBidMs: option({name: "late-bid-ms", value: "MS", default: "3000", help: "how late the `late-bid` fault answers", parse: (text) => integer(text, 0, 60_000)}),
    fault: option({
      name: "fault",
      value: "NAME",
      default: "none",
      help: `a fault from the start: ${MOCK_BUILDER_FAULTS.join(", ")}`,
      parse: (text) => oneOf(text, MOCK_BUILDER_FAULTS),
    }),
    ...logOptions(),
  },
};
