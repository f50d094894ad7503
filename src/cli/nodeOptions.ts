import {availableParallelism} from "node:os";
import type {DevFork} from "../config/forks.ts";
import type {LogDirective} from "../log.ts";
import type {NetworkOptions} from "../network/options.ts";
import {type RpcEncoding, graffitiOptions, logOptions, metricsOptions, rpcListenOptions} from "./commonOptions.ts";
import {type ExecutionFields, executionOptions} from "./executionOptions.ts";
import {type BuilderFields, builderOptions} from "./builderOptions.ts";
import {type RestFields, restOptions} from "./restOptions.ts";
import {networkOptions} from "./networkOptions.ts";
import {type KeyFields, type KeymanagerFields, keyOptions, keymanagerOptions} from "./validatorKeyOptions.ts";
import {NETWORK_NAMES, type NetworkName, isPublicNetwork, presetOfNetwork} from "../config/networkNames.ts";
import {type CommandSpec, InvalidValue, type OptionContext, flag, option} from "./optionTable.ts";
import {
  devFork,
  forkEpochs,
  httpUrl,
  integer,
  oneOf,
  parseIndexRange,
  port,
  readableFile,
  serverAddress,
  wssCheckpoint,
} from "./values.ts";
import type {WssCheckpoint} from "../sync/weakSubjectivity.ts";

/** `beacon-gateway node`: its options, each described once (src/cli/optionTable.ts). */

export interface NodeOptions extends NetworkOptions, ExecutionFields, BuilderFields, RestFields, KeyFields, KeymanagerFields {
  /** serve Prometheus metrics */
  metrics: boolean;
  metricsAddress: string;
  metricsPort: number;
  /** the removed JSON-RPC interface, served by compat/ over the REST handlers */
  rpc: boolean;
  rpcPort: number;
  rpcAddress: string;
  rpcEncoding: RpcEncoding;
  rpcMaxBatch: number;
  rpcMaxWork: number;
  rpcMaxAnswer: number;
  dataDir: string;
  /** delete finalized blocks' sidecars after their retention window (--no-prune-sidecars: keep them) */
  pruneSidecars: boolean;
  stateCacheSize: number;
  /** worker threads that check BLS signatures; 0: on the event loop */
  blsThreads: number;
  network: NetworkName;
  /** `--config`: the config.yaml of a custom network */
  networkConfig: string | undefined;
  preset: "minimal" | "mainnet";
  validators: number;
  genesisTime: number | undefined;
  /** an SSZ BeaconState file the chain starts from instead of the interop dev genesis */
  genesisStateFile: string | undefined;
  /** a beacon node's REST API to take the starting (finalized) state from */
  checkpointSyncUrl: string | undefined;
  /** `--wss-checkpoint`: the finalized checkpoint the operator trusts, that the checkpoint state must be */
  wssCheckpoint: WssCheckpoint | undefined;
  secondsPerSlot: number;
  genesisFork: DevFork;
  forkEpochs: Partial<Record<DevFork, number>>;
  /** interop indices this process runs; [] for none */
  devValidators: number[];
  /** blobs in each payload of the in-process mock engine, from deneb on */
  devBlobsPerBlock: number;
  graffiti: string | undefined;
  logLevel: LogDirective;
  logFormat: "text" | "json";
}

const REST = "REST API";
const RPC = "JSON-RPC (the removed interface, kept for migration: see `migration-guide/`)";
const NETWORK = "Networking";
const CHAIN = "Chain";
const VALIDATORS = "Validators";
const LOGGING = "Logging";
const EXECUTION = "Execution engine";
const BUILDER = "External block builder";
const METRICS = "Metrics";

/** The dev chain's options and their command-line names, refused on other networks. */
const DEV_ONLY_OPTION = {validators: "validators", secondsPerSlot: "seconds-per-slot", genesisFork: "genesis-fork", forkEpochs: "fork-epochs", genesisTime: "genesis-time"} as const;

/** The chain comes from a state file or another node: no interop dev genesis of our own. */
function externalGenesis(ctx: OptionContext<NodeOptions>): string | null {
  if (ctx.given("genesisStateFile")) return "--genesis-state";
  if (ctx.given("checkpointSyncUrl")) return "--checkpoint-sync-url";
  return null;
}

export const NODE_COMMAND: CommandSpec<NodeOptions> = {
  usage: "beacon-gateway node [options]",
  about: `Runs a beacon node. With no network to join it runs a local dev chain whose interop
validators it drives itself.`,
  options: {
    ...restOptions(REST),

    rpc: flag({name: "rpc", group: RPC, help: "serve the removed JSON-RPC interface (`compat/`) over the REST handlers, in-process"}),
    ...rpcListenOptions(RPC),

    ...networkOptions(NETWORK),

    dataDir: option({
      name: "data-dir",
      value: "DIR",
      defaultText: "`./data/<network>`",
      group: CHAIN,
      help: "database (`beacon/`), network key and ENR (`network/`), the dev validators' slashing protection (`validator/`)",
      parse: (text, ctx) => text ?? `./data/${ctx.get("network")}`,
    }),
    stateCacheSize: option({
      name: "state-cache-size",
      value: "MIB",
      default: "2048",
      group: CHAIN,
      help: "memory the cached beacon states may hold, in MiB, estimated from the tree nodes each state does not share with the others; the head, justified and finalized states are always kept",
      parse: (text) => integer(text, 64, 1024 * 1024),
    }),
    blsThreads: option({
      name: "bls-threads",
      value: "N",
      defaultText: "0 on the dev chain, else cores − 1 (at least 1)",
      group: CHAIN,
      help: "worker threads that check BLS signatures (blocks, gossip, pool submissions) in batches, off the event loop; 0 checks the same batches on the event loop, which saves a worker's memory (20-30 MiB) where signatures are few (a dev chain's own validators)",
      parse: (text, ctx) => (text !== undefined ? integer(text, 0, 256) : ctx.get("network") === "dev" ? 0 : Math.max(1, availableParallelism() - 1)),
    }),
    pruneSidecars: flag({
      name: "no-prune-sidecars",
      group: CHAIN,
      help: "keep blob and data column sidecars after their retention window (`MIN_EPOCHS_FOR_BLOB_SIDECARS_REQUESTS`, about 18 days on mainnet), when finalized blocks' sidecars are otherwise deleted",
      parse: (set) => !set,
    }),
    network: option({
      name: "network",
      value: "NAME",
      default: "dev",
      group: CHAIN,
      help: "`dev` (a local dev chain), `mainnet`, `sepolia`, `holesky`, `hoodi`, or `custom` (with `--config`); a network other than dev starts from `--checkpoint-sync-url` or `--genesis-state`",
      parse: (text, ctx) => {
        const network = oneOf(text, NETWORK_NAMES);
        if (network === "dev") return network;
        if (!ctx.given("checkpointSyncUrl") && !ctx.given("genesisStateFile")) {
          throw new InvalidValue(
            `${network} needs a starting state: add --checkpoint-sync-url URL (the REST API of a synced beacon node: the node starts from its finalized state), ` +
              "or --genesis-state FILE (the network's genesis.ssz: the node then syncs every block from genesis, days on mainnet)"
          );
        }
        if (isPublicNetwork(network) && !ctx.given("executionEndpoint")) {
          throw new InvalidValue(`${network} needs --execution-endpoint URL (an execution client's Engine API): the dev chain's mock engine cannot judge real payloads`);
        }
        for (const devOnly of ["validators", "secondsPerSlot", "genesisFork", "forkEpochs", "genesisTime"] as const) {
          if (ctx.given(devOnly)) throw new InvalidValue(`${network}: --${DEV_ONLY_OPTION[devOnly]} is for the dev chain; the network's configuration fixes it`);
        }
        return network;
      },
    }),
    networkConfig: option({
      name: "config",
      value: "FILE",
      group: CHAIN,
      help: "the network's `config.yaml` (with `--network custom`, beside its `genesis.ssz` as `--genesis-state`)",
      parse: (text, ctx) => {
        if (ctx.get("network") !== "custom") {
          if (text !== undefined) throw new InvalidValue("only with --network custom");
          return undefined;
        }
        if (text === undefined) throw new InvalidValue("--network custom needs its config.yaml");
        return readableFile(text);
      },
    }),
    preset: option({
      name: "preset",
      value: "minimal|mainnet",
      defaultText: "`minimal`; `mainnet` on the public networks; a custom network's `PRESET_BASE`",
      group: CHAIN,
      help: "consensus preset",
      parse: (text, ctx) => {
        const fixed = presetOfNetwork(ctx.get("network"), ctx.get("networkConfig"));
        const preset = oneOf(text ?? fixed ?? "minimal", ["minimal", "mainnet"] as const);
        if (fixed !== undefined && preset !== fixed) throw new InvalidValue(`${ctx.get("network")} runs the ${fixed} preset`);
        return preset;
      },
    }),
    validators: option({
      name: "validators",
      value: "N",
      default: "64",
      group: CHAIN,
      help: "interop validators in the dev genesis (not with `--genesis-state`, whose state has its own)",
      parse: (text, ctx) => {
        const from = externalGenesis(ctx);
        if (ctx.given("validators") && from) throw new InvalidValue(`not with ${from}: the validators come from that state`);
        return integer(text, 1, 1_000_000);
      },
    }),
    genesisTime: option({
      name: "genesis-time",
      value: "SECONDS",
      defaultText: "first start + 3 s",
      group: CHAIN,
      help: "unix time of genesis; afterwards fixed by the stored genesis, and with `--genesis-state` the state's (a different value is an error)",
      parse: (text) => (text === undefined ? undefined : integer(text, 0, 2 ** 40)),
    }),
    genesisStateFile: option({
      name: "genesis-state",
      value: "FILE",
      group: CHAIN,
      help: "start the chain from this SSZ-serialized genesis BeaconState instead of creating the interop dev genesis; it must be of this node's fork schedule",
      parse: (text) => (text === undefined ? undefined : readableFile(text)),
    }),
    checkpointSyncUrl: option({
      name: "checkpoint-sync-url",
      value: "URL",
      group: CHAIN,
      help: "start from the finalized state of the beacon node at this REST URL (http or https); not with `--genesis-state`",
      parse: (text, ctx) => {
        if (text === undefined) return undefined;
        if (ctx.given("genesisStateFile")) throw new InvalidValue("not with --genesis-state: the chain starts from one or the other");
        return httpUrl(text);
      },
    }),
    backfillToGenesis: flag({
      name: "backfill-to-genesis",
      group: CHAIN,
      help: "after `--checkpoint-sync-url`, fetch the blocks before the checkpoint from peers down to genesis; without it backfill stops `MIN_EPOCHS_FOR_BLOCK_REQUESTS` epochs back (about 5 months on mainnet), as far as the p2p spec asks nodes to serve",
    }),
    wssCheckpoint: option({
      name: "wss-checkpoint",
      value: "ROOT:EPOCH",
      group: CHAIN,
      help: "a finalized checkpoint you trust (block root and epoch, e.g. from another node or an explorer): `--checkpoint-sync-url` then fetches the state at that epoch's first slot and the node refuses to start unless its block root and epoch are these",
      parse: (text, ctx) => {
        if (text === undefined) return undefined;
        if (!ctx.given("checkpointSyncUrl")) throw new InvalidValue("only with --checkpoint-sync-url: it checks the state that URL serves");
        return wssCheckpoint(text);
      },
    }),
    secondsPerSlot: option({name: "seconds-per-slot", value: "N", default: "4", group: CHAIN, help: "slot duration", parse: (text) => integer(text, 1, 3600)}),
    genesisFork: option({
      name: "genesis-fork",
      value: "FORK",
      default: "fulu",
      group: CHAIN,
      help: `\`phase0\` … \`fulu\`: every fork up to it is active at epoch 0, later ones unscheduled`,
      parse: devFork,
    }),
    forkEpochs: option({
      name: "fork-epochs",
      value: "LIST",
      group: CHAIN,
      help: "schedule forks instead, e.g. `altair=1,bellatrix=2,capella=3,deneb=4,electra=5,fulu=6`",
      parse: forkEpochs,
    }),

    devValidators: option({
      name: "dev-validators",
      value: "RANGE",
      defaultText: "`all`; `none` with `--genesis-state` or `--checkpoint-sync-url`",
      group: VALIDATORS,
      help: "interop validators this process runs: `all`, `none`, or indices and ranges such as `0..31,40`",
      parse: (text, ctx) => {
        const from = externalGenesis(ctx);
        if (from && text === "all") throw new InvalidValue(`"all" means the dev genesis's validators: with ${from} name the indices`);
        const indices = parseIndexRange(text ?? (from ? "none" : "all"), ctx.get("validators"));
        const validators = ctx.get("validators");
        const beyond = from ? undefined : indices.find((i) => i >= validators);
        if (beyond !== undefined) throw new InvalidValue(`index ${beyond} is not below --validators ${validators}`);
        return indices;
      },
    }),
    ...keyOptions(VALIDATORS),
    ...graffitiOptions(VALIDATORS),
    ...keymanagerOptions(VALIDATORS),

    ...executionOptions(EXECUTION),
    devBlobsPerBlock: option({
      name: "dev-blobs-per-block",
      value: "N",
      default: "0",
      group: EXECUTION,
      help: "blobs (random data, real KZG commitments and proofs) in each payload of the in-process mock engine, from deneb on",
      parse: (text, ctx) => {
        const count = integer(text, 0, 6);
        if (count > 0 && ctx.given("executionEndpoint")) throw new InvalidValue("only with the in-process mock engine (no --execution-endpoint)");
        return count;
      },
    }),

    ...builderOptions(BUILDER),

    ...metricsOptions(METRICS, 8008),

    ...logOptions(LOGGING),
  },
};
