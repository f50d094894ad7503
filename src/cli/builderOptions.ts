import type {LogDirective} from "../log.ts";
import {MOCK_BUILDER_FAULTS, type MockBuilderFault} from "../builder/faults.ts";
import {logOptions} from "./commonOptions.ts";
import {DEFAULT_GAS_LIMIT} from "../validator/keys/proposerSettings.ts";
import {type CommandSpec, InvalidValue, type OptionTable, flag, option} from "./optionTable.ts";
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

/** The node's external block builder options. */
export interface BuilderFields {
  /** the relay or MEV-boost endpoint; undefined: local payloads only */
  builder: string | undefined;
  builderTimeout: number;
  builderBoostFactor: bigint;
  builderFaultSlots: number;
  builderFaultWindow: number;
}

const onlyWithBuilder = <T>(ctx: {given(field: keyof BuilderFields): boolean}, value: T, text: string | undefined): T => {
  if (text !== undefined && !ctx.given("builder")) throw new InvalidValue("only with --builder");
  return value;
};

export function builderOptions(group?: string): OptionTable<BuilderFields> {
  return {
    builder: option({
      name: "builder",
      value: "URL",
      defaultText: "none: local payloads only",
      group,
      help: "an external block builder: a relay or MEV-boost's builder API, e.g. `http://127.0.0.1:18550` (see docs/builder.md)",
      parse: (text) => (text === undefined ? undefined : httpUrl(text)),
    }),
    builderTimeout: option({
      name: "builder-timeout",
      value: "MS",
      defaultText: "1000, the builder spec's BUILDER_PROPOSAL_DELAY_TOLERANCE",
      group,
      help: "how long block production waits for the builder's bid before it takes the local payload",
      parse: (text, ctx) => onlyWithBuilder(ctx, text === undefined ? 1000 : integer(text, 50, 12_000), text),
    }),
    builderBoostFactor: option({
      name: "builder-boost-factor",
      value: "N",
      defaultText: "100",
      group,
      help: "percentage the builder's bid is weighed with against the local payload (`builder value × N / 100 > local value`; 0: local only); a request's `builder_boost_factor` overrides it",
      parse: (text, ctx) => {
        if (text !== undefined && !/^[0-9]{1,20}$/.test(text)) throw new InvalidValue(`"${text}" is not a non-negative integer`);
        return onlyWithBuilder(ctx, text === undefined ? 100n : BigInt(text), text);
      },
    }),
    builderFaultSlots: option({
      name: "builder-fault-slots",
      value: "N",
      defaultText: "8 (Lodestar's allowed faults)",
      group,
      help: "the circuit breaker trips (local payloads only) when more slots than this were missed in the fault window",
      parse: (text, ctx) => onlyWithBuilder(ctx, text === undefined ? 8 : integer(text, 0, 8191), text),
    }),
    builderFaultWindow: option({
      name: "builder-fault-window",
      value: "N",
      defaultText: "32 (Lodestar's fault inspection window)",
      group,
      help: "how many slots before a proposal the circuit breaker inspects",
      parse: (text, ctx) => {
        const window = onlyWithBuilder(ctx, text === undefined ? 32 : integer(text, 1, 8191), text);
        if (ctx.get("builderFaultSlots") >= window) throw new InvalidValue(`--builder-fault-slots ${ctx.get("builderFaultSlots")} must be below the window ${window}`);
        return window;
      },
    }),
  };
}

/** The validator client's builder mode options. */
export interface ValidatorBuilderFields {
  builder: boolean;
  gasLimit: number;
}

export function validatorBuilderOptions(group?: string): OptionTable<ValidatorBuilderFields> {
  return {
    builder: flag({
      name: "builder",
      group,
      help: "builder mode: registrations (fee recipient, gas limit) sent every epoch, and blinded blocks signed and published when the beacon node's relay has the better payload",
    }),
    gasLimit: option({
      name: "gas-limit",
      value: "N",
      default: DEFAULT_GAS_LIMIT,
      group,
      help: "the execution gas limit the validators register with the builder, for keys without their own (set through the keymanager API)",
      parse: (text, ctx) => {
        if (ctx.given("gasLimit") && !ctx.get("builder")) throw new InvalidValue("only with --builder");
        return integer(text, 5000, 1_000_000_000);
      },
    }),
  };
}
