import {spawn, type ChildProcess} from "node:child_process";
import {createWriteStream, existsSync, mkdirSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import type {DevnetOptions} from "./cli/devnetOptions.ts";
import {PROJECT_ROOT} from "./projectRoot.ts";

/**
 * `beacon-gateway devnet`: node processes on one dev chain. Node 0 makes the interop genesis
 * (or, on a later start, reopens it); its genesis state, exported over REST, starts the others,
 * which dial every node before them. The validators are shared out in contiguous ranges.
 */

const BIN = join(PROJECT_ROOT, "bin", "beacon-gateway.js");
const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 120_000;

interface DevnetNode {
  index: number;
  proc: ChildProcess;
  restUrl: string;
  exited: Promise<number | null>;
}

export interface RunningDevnet {
  nodes: Array<{index: number; restUrl: string}>;
  /** one line per node: head, finalized epoch and connected peers */
  status(): Promise<string[]>;
  stop(): Promise<void>;
}

/** The interop indices node `i` of `n` runs. */
export function validatorRange(i: number, n: number, validators: number): string {
  const per = Math.floor(validators / n);
  const from = i * per;
  const to = i === n - 1 ? validators - 1 : from + per - 1;
  return to < from ? "none" : `${from}..${to}`;
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url, {signal: AbortSignal.timeout(5_000)});
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

async function untilRestAnswers(node: DevnetNode): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exitCode: number | null | undefined;
  void node.exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) throw new Error(`node ${node.index} exited (${exitCode}) while starting: see its log`);
    try {
      await getJson(`${node.restUrl}/eth/v1/node/version`);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`node ${node.index} did not answer on ${node.restUrl}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export async function startDevnet(opts: DevnetOptions): Promise<RunningDevnet> {
  if (opts.restPort + opts.nodes - 1 > 65535 || opts.tcpPort + opts.nodes - 1 > 65535) throw new Error("the port ranges run past 65535");
  mkdirSync(opts.dataDir, {recursive: true});
  const genesisFile = join(opts.dataDir, "genesis.ssz");
  const chainArgs = [
    "--preset", opts.preset,
    "--seconds-per-slot", String(opts.secondsPerSlot),
    "--genesis-fork", opts.genesisFork,
    ...(Object.keys(opts.forkEpochs).length > 0 ? ["--fork-epochs", Object.entries(opts.forkEpochs).map(([f, e]) => `${f}=${e}`).join(",")] : []),
    "--dev-blobs-per-block", String(opts.blobsPerBlock),
  ];
  const nodes: DevnetNode[] = [];
  const peers: string[] = [];

  const start = (index: number, extra: string[]): DevnetNode => {
    const dir = join(opts.dataDir, `node-${index}`);
    const log = createWriteStream(join(opts.dataDir, `node-${index}.log`), {flags: "a"});
    const args = [
      BIN, "node", "--rest", "--rest-port", String(opts.restPort + index), "--data-dir", dir,
      "--listen-address", HOST, "--tcp-port", String(opts.tcpPort + index), "--no-discovery",
      ...chainArgs, "--dev-validators", validatorRange(index, opts.nodes, opts.validators),
      ...peers.flatMap((p) => ["--direct-peer", p]),
      // someone must keep every data column, or nodes that sync later cannot get theirs
      ...(index === 0 ? ["--subscribe-all-subnets"] : []),
      ...extra,
    ];
    const proc = spawn(process.execPath, args, {stdio: ["ignore", "pipe", "pipe"]});
    proc.stdout!.pipe(log);
    proc.stderr!.pipe(log);
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    const node = {index, proc, restUrl: `http://${HOST}:${opts.restPort + index}`, exited};
    nodes.push(node);
    return node;
  };

  const stop = async () => {
    for (const node of nodes) if (node.proc.exitCode === null) node.proc.kill("SIGTERM");
    await Promise.all(nodes.map((n) => n.exited));
  };

  try {
    // node 0 makes the genesis the first time; afterwards every node starts from the kept state
    const first = start(0, existsSync(genesisFile) ? ["--genesis-state", genesisFile] : ["--validators", String(opts.validators)]);
    await untilRestAnswers(first);
    if (!existsSync(genesisFile)) {
      const res = await fetch(`${first.restUrl}/eth/v2/debug/beacon/states/genesis`, {headers: {accept: "application/octet-stream"}});
      if (res.status !== 200) throw new Error(`node 0 did not export its genesis state (${res.status})`);
      writeFileSync(genesisFile, new Uint8Array(await res.arrayBuffer()));
    }
    for (let i = 0; i < opts.nodes; i++) {
      const node = i === 0 ? first : start(i, ["--genesis-state", genesisFile]);
      if (i > 0) await untilRestAnswers(node);
      const identity = await getJson(`${node.restUrl}/eth/v1/node/identity`);
      peers.push((identity.data.p2p_addresses as string[])[0]);
    }
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    nodes: nodes.map(({index, restUrl}) => ({index, restUrl})),
    async status() {
      return Promise.all(
        nodes.map(async (node) => {
          try {
            const [head, fc, peerCount] = await Promise.all([
              getJson(`${node.restUrl}/eth/v1/beacon/headers/head`),
              getJson(`${node.restUrl}/eth/v1/beacon/states/head/finality_checkpoints`),
              getJson(`${node.restUrl}/eth/v1/node/peer_count`),
            ]);
            return `node ${node.index}: head ${head.data.header.message.slot} ${String(head.data.root).slice(0, 10)}, finalized epoch ${fc.data.finalized.epoch}, peers ${peerCount.data.connected}`;
          } catch (e) {
            return `node ${node.index}: ${node.proc.exitCode !== null ? `exited (${node.proc.exitCode})` : (e as Error).message}`;
          }
        })
      );
    },
    stop,
  };
}
