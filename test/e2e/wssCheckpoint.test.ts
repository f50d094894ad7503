import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {type CachedBeaconStateAllForks, processSlots} from "@lodestar/state-transition";
import {toRootHex} from "@lodestar/utils";
import {createServer, type Server} from "node:http";
import type {AddressInfo} from "node:net";
import {PassThrough} from "node:stream";
import {join} from "node:path";
import {createInteropGenesisState} from "../../src/chain/genesis.ts";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {fetchCheckpointAnchor} from "../../src/sync/checkpointSync.ts";
import {initLogging, logManager, parseLogDirective} from "../../src/log.ts";
import {type LogLine, NodeProcess, getJson, restNodeArgs, tempDataDir} from "./nodeProcess.ts";

/**
 * `--checkpoint-sync-url` with `--wss-checkpoint ROOT:EPOCH`, against a real HTTP server that
 * serves a dev chain's states as a beacon node's REST API does: the genesis state as
 * `finalized` (epoch 0) and, at slot 8, the first slot of epoch 1 (minimal preset), the state
 * after empty slots, whose checkpoint is (genesis block root, epoch 1). The node must fetch the
 * state at that slot, start when the checkpoint matches, and exit with status 1 naming both roots
 * when it does not; the state must be within the weak subjectivity period.
 */

const config = devChainConfig({secondsPerSlot: 4, genesisFork: "fulu", forkEpochs: {}});
const SECONDS_PER_EPOCH = 4 * 8;

describe("checkpoint sync with a trusted checkpoint (--wss-checkpoint)", () => {
  const data = tempDataDir("wss");
  const requests: string[] = [];
  let server: Server;
  let url: string;
  let genesisTime: number;
  let genesisRoot: string;
  let epoch1: CachedBeaconStateAllForks;
  const nodes: NodeProcess[] = [];

  beforeAll(async () => {
    // three epochs ago: the clock is in epoch 3, the served epoch-1 state is finalized history
    genesisTime = Math.floor(Date.now() / 1000) - 3 * SECONDS_PER_EPOCH - 4;
    const genesis = createInteropGenesisState(config, 64, genesisTime);
    const types = config.getForkTypes(0);
    const block = types.SignedBeaconBlock.defaultValue();
    Object.assign(block.message, {slot: 0, proposerIndex: genesis.latestBlockHeader.proposerIndex, parentRoot: genesis.latestBlockHeader.parentRoot, stateRoot: genesis.hashTreeRoot()});
    genesisRoot = toRootHex(types.BeaconBlock.hashTreeRoot(block.message));
    epoch1 = processSlots(genesis.clone(), 8);
    epoch1.commit();
    expect(epoch1.slot).toBe(8);
    const routes = new Map<string, Uint8Array>([
      ["/eth/v2/debug/beacon/states/finalized", genesis.serialize()],
      ["/eth/v2/debug/beacon/states/0", genesis.serialize()],
      ["/eth/v2/debug/beacon/states/8", epoch1.serialize()],
      [`/eth/v2/beacon/blocks/${genesisRoot}`, types.SignedBeaconBlock.serialize(block)],
    ]);
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      const body = routes.get(req.url ?? "");
      if (!body) return void res.writeHead(404, {"content-type": "application/json"}).end(JSON.stringify({code: 404, message: "not found"}));
      res.writeHead(200, {"content-type": "application/octet-stream"}).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const node of nodes) await node.stop();
    await new Promise((resolve) => server.close(resolve));
    data.remove();
  });

  const start = (name: string, extra: string[]) => {
    const node = new NodeProcess(restNodeArgs(join(data.dir, name), ["--checkpoint-sync-url", url, "--dev-validators", "none", ...extra]));
    nodes.push(node);
    return node;
  };

  it(
    "refuses to start, with exit status 1, when the served checkpoint is not the trusted one, naming both roots",
    async () => {
      const trusted = "0x" + "ab".repeat(32);
      // with BLS worker threads and an engine that does not answer, as on a public network: neither holds the refused process open
      const node = start("mismatch", ["--wss-checkpoint", `${trusted}:1`, "--bls-threads", "1", "--execution-endpoint", "http://127.0.0.1:1"]);
      const {code} = await node.exited;
      expect(code).toBe(1);
      const stderr = node.stderr.join("");
      expect(stderr).toContain(trusted);
      expect(stderr).toContain(genesisRoot);
      // one plain line for the operator, no stack trace
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(requests).toContain("/eth/v2/debug/beacon/states/8");
      // the logs show it never got as far as a chain
      expect(node.logs.some((l) => l.msg === "chain ready")).toBe(false);
    },
    60_000
  );

  it(
    "starts from the state at the trusted checkpoint's first slot (not the server's finalized one) when it matches",
    async () => {
      requests.length = 0;
      const node = start("match", ["--wss-checkpoint", `${genesisRoot}:1`]);
      const rest = await node.restUrl();
      expect(requests).toContain("/eth/v2/debug/beacon/states/8");
      expect(requests).not.toContain("/eth/v2/debug/beacon/states/finalized");
      // its finalized state is the served epoch-1 state, its head block that state's latest block
      const finalized = await getJson(rest, "/eth/v1/beacon/states/finalized/root");
      expect(finalized.body.data.root).toBe(toRootHex(epoch1.hashTreeRoot()));
      const head = await getJson(rest, "/eth/v1/beacon/headers/head");
      expect(head.body.data.root).toBe(genesisRoot);
      // no "trusting the URL" note: the operator named the checkpoint
      expect(node.logs.some((l) => typeof l.msg === "string" && l.msg.includes("--wss-checkpoint ROOT:EPOCH"))).toBe(false);
    },
    60_000
  );

  it("without --wss-checkpoint, says once which checkpoint it trusted and how to check it", async () => {
    const lines: LogLine[] = [];
    const out = new PassThrough();
    out.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n").map((l) => JSON.parse(l) as LogLine)));
    const initial = logManager().current();
    initLogging({directive: parseLogDirective("INFO"), format: "json", destination: out});
    try {
      await expect(fetchCheckpointAnchor(url, config)).resolves.toMatchObject({slot: 0});
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      initLogging({directive: initial, format: "text"});
    }
    const notes = lines.filter((l) => l.msg.includes("--wss-checkpoint ROOT:EPOCH"));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({root: genesisRoot, epoch: 0, url});
    expect(notes[0].msg).toContain(`${genesisRoot}:0`);
  });

  it("refuses a state older than the weak subjectivity period (electra's compute_weak_subjectivity_period)", async () => {
    // the spec's period for this state: 64 validators of 32 ETH, minimal config
    const total = 64 * 32e9;
    const churn = Math.max(config.MIN_PER_EPOCH_CHURN_LIMIT_ELECTRA, total / config.CHURN_LIMIT_QUOTIENT);
    const balanceChurn = churn - (churn % 1e9);
    const period = config.MIN_VALIDATOR_WITHDRAWABILITY_DELAY + Math.floor((10 * total) / (2 * balanceChurn * 100));
    const at = (epoch: number) => () => genesisTime + epoch * SECONDS_PER_EPOCH;
    const wssCheckpoint = {root: genesisRoot, epoch: 1};
    // current_epoch <= ws_state_epoch + ws_period: the last epoch it is accepted at, then refused
    await expect(fetchCheckpointAnchor(url, config, {wssCheckpoint, nowSeconds: at(1 + period)})).resolves.toMatchObject({slot: 8});
    await expect(fetchCheckpointAnchor(url, config, {wssCheckpoint, nowSeconds: at(2 + period)})).rejects.toThrow(
      `the state of epoch 1 is older than the weak subjectivity period (${period} epochs) at the current epoch ${2 + period}`
    );
  });
});
