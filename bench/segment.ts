// A chain segment for the import benchmarks: the genesis state and blocks of a dev chain, made by
// a dev node process, and a fresh in-process chain on that genesis to import them into.
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {startListening} from "../test/serverProcess.ts";
import {fileURLToPath} from "node:url";
import type {SignedBeaconBlock} from "@lodestar/types";
import type {BeaconChain} from "../src/chain/beaconChain.ts";
import type {DevFork} from "../src/config/chainConfig.ts";
import {slotOfSignedBlockBytes} from "../src/db/blocks.ts";

const BIN = fileURLToPath(new URL("../bin/beacon-gateway.js", import.meta.url));
export const SEGMENT_SECONDS_PER_SLOT = 1;

export interface Segment {
  genesis: Uint8Array;
  genesisTime: number;
  /** SignedBeaconBlock SSZ, by slot */
  blocks: Uint8Array[];
}

/** Runs a dev node (1 s slots, its validators proposing) until it has `count` blocks, and reads them back as SSZ. */
export async function makeSegment(count: number): Promise<Segment> {
  const dir = mkdtempSync(join(tmpdir(), "bench-segment-"));
  const genesisTime = Math.floor(Date.now() / 1000) + 5;
  const args = ["node", "--rest", "--rest-port", "0", "--rest-address", "127.0.0.1", "--listen-address", "127.0.0.1", "--tcp-port", "0", "--no-quic", "--no-discovery"];
  const node = await startListening([BIN, ...args, "--seconds-per-slot", String(SEGMENT_SECONDS_PER_SLOT), "--genesis-time", String(genesisTime), "--data-dir", dir, "--log-format", "json"]);
  try {
    const port = node.port;
    const base = `http://127.0.0.1:${port}`;
    const ssz = async (path: string): Promise<Uint8Array | null> => {
      const res = await fetch(base + path, {headers: {accept: "application/octet-stream"}});
      return res.status === 200 ? new Uint8Array(await res.arrayBuffer()) : null;
    };
    for (;;) {
      const head = (await (await fetch(`${base}/eth/v1/beacon/headers/head`)).json()) as {data: {header: {message: {slot: string}}}};
      if (Number(head.data.header.message.slot) >= count) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const genesis = (await ssz("/eth/v2/debug/beacon/states/genesis"))!;
    const blocks: Uint8Array[] = [];
    for (let slot = 1; slot <= count; slot++) {
      const block = await ssz(`/eth/v2/beacon/blocks/${slot}`);
      if (block) blocks.push(block);
    }
    return {genesis, genesisTime, blocks};
  } finally {
    await node.stop();
    rmSync(dir, {recursive: true, force: true});
  }
}

/**
 * The chain a segment belongs to: the dev chain's (fulu at genesis, 1 s slots, the real clock) by
 * default. `now` fixes the clock (a segment whose genesis is long past: the chain would otherwise
 * advance its states to today); `dbDir` puts the chain's LevelDB there and keeps it on close (a
 * node's data dir is its parent: `<dataDir>/beacon`).
 */
export interface SegmentChain {
  genesisFork: DevFork;
  secondsPerSlot: number;
  now?: () => number;
  dbDir?: string;
}

const DEV_SEGMENT: SegmentChain = {genesisFork: "fulu", secondsPerSlot: SEGMENT_SECONDS_PER_SLOT};

/** A fresh chain on the segment's genesis, in this process (its own LevelDB in a temporary folder unless `spec.dbDir`), and the segment's blocks decoded. */
export async function freshChain(segment: Segment, spec: SegmentChain = DEV_SEGMENT): Promise<{chain: BeaconChain; blocks: SignedBeaconBlock[]; close: () => Promise<void>}> {
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {BeaconDb} = await import("../src/db/beaconDb.ts");
  const {MockExecutionEngine} = await import("../src/execution/mockEngine.ts");
  const {initChain} = await import("../src/chain/init.ts");
  const {Clock} = await import("../src/clock/clock.ts");
  const {SLOTS_PER_EPOCH} = await import("@lodestar/params");
  const {initLogging, parseLogDirective} = await import("../src/log.ts");
  initLogging({directive: parseLogDirective("WARN"), format: "json"});
  const config = devChainConfig({secondsPerSlot: spec.secondsPerSlot, genesisFork: spec.genesisFork, forkEpochs: {}});
  const dir = spec.dbDir ?? mkdtempSync(join(tmpdir(), "bench-chain-"));
  const db = await BeaconDb.open(dir, config);
  const makeClock = (t: number) => new Clock(t, spec.secondsPerSlot, SLOTS_PER_EPOCH, spec.now);
  const chain = await initChain(config, db, new MockExecutionEngine(), makeClock, {validatorCount: 0, genesisTime: segment.genesisTime, genesisState: segment.genesis}, {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20)});
  const blocks = segment.blocks.map((bytes) => chain.config.getForkTypes(slotOfSignedBlockBytes(bytes)).SignedBeaconBlock.deserialize(bytes) as SignedBeaconBlock);
  return {
    chain,
    blocks,
    close: async () => {
      await chain.close();
      await db.close();
      if (!spec.dbDir) rmSync(dir, {recursive: true, force: true});
    },
  };
}

/**
 * chain.importBlock over the whole segment, into a fresh chain: blocks per second, and this
 * process's CPU time (all its threads) per block; a block that does not import throws.
 */
export async function nodeImport(segment: Segment, spec?: SegmentChain): Promise<{blocksPerSecond: number; cpuSecondsPerBlock: number}> {
  const {chain, blocks, close} = await freshChain(segment, spec);
  try {
    const start = performance.now();
    const cpu = process.cpuUsage();
    for (const block of blocks) await chain.importBlock(block);
    const used = process.cpuUsage(cpu);
    return {blocksPerSecond: blocks.length / ((performance.now() - start) / 1000), cpuSecondsPerBlock: (used.user + used.system) / 1e6 / blocks.length};
  } finally {
    await close();
  }
}

/** Blocks per second of chain.importBlock over the whole segment, into a fresh chain. */
export async function nodeImportRate(segment: Segment, spec?: SegmentChain): Promise<number> {
  return (await nodeImport(segment, spec)).blocksPerSecond;
}
