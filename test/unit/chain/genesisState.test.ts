import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import type {ChainForkConfig} from "@lodestar/config";
import {processSlots} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import request from "supertest";
import type {NodeContext} from "../../../src/api/impl/context.ts";
import {createApp} from "../../../src/api/server/index.ts";
import type {BeaconChain} from "../../../src/chain/beaconChain.ts";
import {createInteropGenesisState, readGenesisStateFile} from "../../../src/chain/genesis.ts";
import {initChain, type GenesisSpec} from "../../../src/chain/init.ts";
import {Clock} from "../../../src/clock/clock.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {MockExecutionEngine} from "../../../src/execution/mockEngine.ts";
import {binary} from "../api/binary.ts";

/** `--genesis-state`: a chain started from a serialized genesis state is the chain the interop way makes. */

const SECONDS_PER_SLOT = 2;
const GENESIS_TIME = 1_700_000_000;
const VALIDATORS = 64;

const fuluConfig = devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}});

describe("a chain from a genesis state", () => {
  const root = mkdtempSync(join(tmpdir(), "bg-genesis-state-"));
  let dirCount = 0;
  const open: Array<{chain?: BeaconChain; db: BeaconDb}> = [];
  let genesisBytes: Uint8Array;

  beforeAll(() => {
    genesisBytes = createInteropGenesisState(fuluConfig, VALIDATORS, GENESIS_TIME).serialize();
  }, 60_000);

  afterAll(async () => {
    for (const {chain, db} of open) {
      await chain?.close();
      await db.close();
    }
    rmSync(root, {recursive: true, force: true});
  });

  async function openDb(dir: string, config: ChainForkConfig = fuluConfig): Promise<BeaconDb> {
    const db = await BeaconDb.open(join(dir, "beacon"), config);
    open.push({db});
    return db;
  }

  async function start(dir: string, genesis: GenesisSpec): Promise<{chain: BeaconChain; db: BeaconDb}> {
    const db = await openDb(dir);
    const chain = await initChain(
      fuluConfig,
      db,
      new MockExecutionEngine(),
      (t) => new Clock(t, SECONDS_PER_SLOT, 8),
      genesis,
      {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20)}
    );
    open[open.length - 1].chain = chain;
    return {chain, db};
  }

  async function stop(entry: {chain: BeaconChain; db: BeaconDb}): Promise<void> {
    open.splice(open.findIndex((o) => o.db === entry.db), 1);
    await entry.chain.close();
    await entry.db.close();
  }

  const newDir = (): string => join(root, `dir${dirCount++}`);
  /** genesisTime/validatorCount are what a node passes by default: the state must win over them. */
  const fromState = (bytes: Uint8Array, requestedGenesisTime?: number): GenesisSpec => ({
    validatorCount: 8,
    genesisTime: GENESIS_TIME + 12345,
    requestedGenesisTime,
    genesisState: bytes,
  });

  it("has the validators root, genesis block, head and stored state of the interop chain with the same time", async () => {
    const given = await start(newDir(), fromState(genesisBytes));
    const interop = await start(newDir(), {validatorCount: VALIDATORS, genesisTime: GENESIS_TIME});

    expect(given.chain.genesisTime).toBe(GENESIS_TIME);
    expect(toRootHex(given.chain.genesisValidatorsRoot)).toBe(toRootHex(interop.chain.genesisValidatorsRoot));
    const givenGenesis = await given.db.canonicalBlocks.get(0);
    expect(givenGenesis).not.toBeNull();
    expect(toRootHex(givenGenesis!)).toBe(toRootHex((await interop.db.canonicalBlocks.get(0))!));
    expect(toRootHex(given.chain.getHead().blockRoot)).toBe(toRootHex(interop.chain.getHead().blockRoot));
    expect(toRootHex(given.chain.getHead().blockRoot)).toBe(toRootHex(givenGenesis!));
    // the spec's genesis block: BeaconBlock(state_root=hash_tree_root(genesis_state)), everything else default
    const specGenesisBlock = {...ssz.fulu.BeaconBlock.defaultValue(), stateRoot: ssz.fulu.BeaconState.hashTreeRoot(ssz.fulu.BeaconState.deserialize(genesisBytes))};
    expect(toRootHex(givenGenesis!)).toBe(toRootHex(ssz.fulu.BeaconBlock.hashTreeRoot(specGenesisBlock)));
    expect(await given.db.chainMeta.finalizedCheckpoint.get()).toEqual({epoch: 0, root: givenGenesis});
    expect(Buffer.from((await given.db.stateArchive.getBytes(0))!).equals(Buffer.from(genesisBytes))).toBe(true);

    // what the debug API serves as the genesis state is the file, byte for byte
    const app = createApp({}, {chain: given.chain, pools: given.chain.pools, node: {} as NodeContext});
    const res = await binary(request(app).get("/eth/v2/debug/beacon/states/genesis").set("Accept", "application/octet-stream")).expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(Buffer.from(res.body as Buffer).equals(Buffer.from(genesisBytes))).toBe(true);

    await stop(interop);
    await stop(given);
  }, 60_000);

  it("refuses a state of another fork schedule, storing nothing", async () => {
    const electraBytes = createInteropGenesisState(
      devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "electra", forkEpochs: {}}),
      VALIDATORS,
      GENESIS_TIME
    ).serialize();
    const dir = newDir();
    await expect(start(dir, fromState(electraBytes))).rejects.toThrow(
      /^the genesis state has fork version 0x\w{8} \(electra's version, scheduled here at epoch 0\), but this node's chain starts in fulu \(0x\w{8}\): the state belongs to another chain or fork schedule/
    );
    const db = open[open.length - 1].db;
    expect(await db.chainMeta.genesisTime.get()).toBeNull();
    expect(await db.stateArchive.getSlots()).toEqual([]);
  }, 60_000);

  it("refuses a later state, a short file and a --genesis-time that is not the state's", async () => {
    const later = processSlots(createInteropGenesisState(fuluConfig, VALIDATORS, GENESIS_TIME), 1);
    expect(later.slot).toBe(1);
    await expect(start(newDir(), fromState(later.serialize()))).rejects.toThrow("the genesis state is at slot 1, not 0");
    await expect(start(newDir(), fromState(genesisBytes.subarray(0, 60)))).rejects.toThrow("the genesis state is 60 bytes: too short");
    await expect(start(newDir(), fromState(genesisBytes.subarray(0, genesisBytes.length - 1)))).rejects.toThrow(
      "the genesis state is not a valid fulu BeaconState of this preset"
    );
    await expect(start(newDir(), fromState(genesisBytes, GENESIS_TIME + 1))).rejects.toThrow(
      `--genesis-time ${GENESIS_TIME + 1} differs from the genesis state's genesis time ${GENESIS_TIME}`
    );
  }, 60_000);

  it("reopens a data dir with its own genesis state, and refuses another chain's", async () => {
    const dir = newDir();
    const first = await start(dir, fromState(genesisBytes));
    const head = toRootHex(first.chain.getHead().blockRoot);
    await stop(first);

    const again = await start(dir, fromState(genesisBytes, GENESIS_TIME));
    expect(toRootHex(again.chain.getHead().blockRoot)).toBe(head);
    await stop(again);

    const otherTime = createInteropGenesisState(fuluConfig, VALIDATORS, GENESIS_TIME + 60).serialize();
    const otherValidators = createInteropGenesisState(fuluConfig, VALIDATORS / 2, GENESIS_TIME).serialize();
    for (const other of [otherTime, otherValidators]) {
      await expect(start(dir, fromState(other))).rejects.toThrow(/^the genesis state \(genesis time \d+, validators root 0x\w{64}\) is not the genesis of the chain stored in .*; use another data dir$/);
      const db = open.pop()!.db;
      await db.close();
    }
  }, 120_000);

  it("reads the state file, or says why it cannot", () => {
    const file = join(root, "genesis.ssz");
    writeFileSync(file, genesisBytes);
    expect(Buffer.from(readGenesisStateFile(file)).equals(Buffer.from(genesisBytes))).toBe(true);
    expect(() => readGenesisStateFile(join(root, "missing.ssz"))).toThrow(`cannot read the genesis state file "${join(root, "missing.ssz")}": ENOENT`);
    expect(() => readGenesisStateFile(root)).toThrow("EISDIR");
  });
});
