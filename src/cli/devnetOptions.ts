import type {DevFork} from "../config/forks.ts";
import {type CommandSpec, option} from "./optionTable.ts";
import {devFork, forkEpochs, integer, oneOf} from "./values.ts";

/** `beacon-gateway devnet`: its options, each described once (src/cli/optionTable.ts). */

export interface DevnetOptions {
  nodes: number;
  validators: number;
  dataDir: string;
  restPort: number;
  tcpPort: number;
  preset: "minimal" | "mainnet";
  secondsPerSlot: number;
  genesisFork: DevFork;
  forkEpochs: Partial<Record<DevFork, number>>;
  blobsPerBlock: number;
}

export const DEVNET_COMMAND: CommandSpec<DevnetOptions> = {
  usage: "beacon-gateway devnet [options]",
  about: `Runs a devnet on this machine: several node processes on one dev chain, each with a share
of the interop validators, connected over loopback. The first node makes the genesis; the
others start from its genesis state. Each node logs to <data-dir>/node-<i>.log; the devnet
prints each node's head, finalized epoch and peers every epoch. Ctrl-C stops them all.`,
  options: {
    nodes: option({name: "nodes", value: "N", default: "3", help: "node processes", parse: (text) => integer(text, 1, 16)}),
    validators: option({name: "validators", value: "N", default: "64", help: "interop validators in the genesis, shared out among the nodes", parse: (text) => integer(text, 1, 1_000_000)}),
    dataDir: option({name: "data-dir", value: "DIR", default: "./data/devnet", help: "the genesis state and one data dir and log file per node", parse: (text) => text}),
    restPort: option({name: "rest-port", value: "PORT", default: "5052", help: "node i serves REST on 127.0.0.1, port PORT + i", parse: (text) => integer(text, 1, 65535)}),
    tcpPort: option({name: "tcp-port", value: "PORT", default: "9000", help: "node i listens for peers on 127.0.0.1, TCP port PORT + i", parse: (text) => integer(text, 1, 65535)}),
    preset: option({name: "preset", value: "minimal|mainnet", default: "minimal", help: "consensus preset", parse: (text) => oneOf(text, ["minimal", "mainnet"] as const)}),
    secondsPerSlot: option({name: "seconds-per-slot", value: "N", default: "4", help: "slot duration", parse: (text) => integer(text, 1, 3600)}),
    genesisFork: option({name: "genesis-fork", value: "FORK", default: "fulu", help: "`phase0` … `fulu`: every fork up to it is active at epoch 0", parse: devFork}),
    forkEpochs: option({name: "fork-epochs", value: "LIST", help: "schedule forks instead, e.g. `altair=1,bellatrix=2`", parse: forkEpochs}),
    blobsPerBlock: option({
      name: "blobs-per-block",
      value: "N",
      default: "1",
      help: "blobs in each payload from deneb on; the first node is a supernode (keeps every data column)",
      parse: (text) => integer(text, 0, 6),
    }),
  },
};
