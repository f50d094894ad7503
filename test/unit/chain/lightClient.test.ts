import {afterEach, describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {SYNC_COMMITTEE_SIZE} from "@lodestar/params";
import {type CachedBeaconStateAltair, createCachedBeaconState, createPubkeyCache} from "@lodestar/state-transition";
import {ssz, type LightClientUpdate} from "@lodestar/types";
import {EventEmitter} from "node:events";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import type {ChainEvents} from "../../../src/chain/interface.ts";
import {LightClientServer} from "../../../src/chain/lightClient/server.ts";
import {isBetterUpdate} from "../../../src/chain/lightClient/updates.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../src/db/beaconDb.ts";
import {SpecLightClient} from "../../e2e/lightClientVerifier.ts";
import {makeTempDir, removeDir} from "../db/helpers.ts";

/** Minimal preset: 8 slots an epoch, 8 epochs a sync-committee period. */
const PERIOD_SLOTS = 64;
const chainConfig = devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}});

/** An update as the spec's fields describe it: participants, and which branches are present. */
function update(opts: {participants: number; attested: number; signature?: number; committee?: boolean; finalized?: number | null}): LightClientUpdate {
  const u = ssz.altair.LightClientUpdate.defaultValue();
  for (let i = 0; i < opts.participants; i++) u.syncAggregate.syncCommitteeBits.set(i, true);
  u.attestedHeader.beacon.slot = opts.attested;
  u.signatureSlot = opts.signature ?? opts.attested + 1;
  if (opts.committee) u.nextSyncCommitteeBranch = u.nextSyncCommitteeBranch.map(() => new Uint8Array(32).fill(1));
  if (opts.finalized !== undefined && opts.finalized !== null) {
    u.finalizedHeader.beacon.slot = opts.finalized;
    u.finalityBranch = u.finalityBranch.map(() => new Uint8Array(32).fill(1));
  }
  return u as LightClientUpdate;
}

const SUPER = Math.ceil((SYNC_COMMITTEE_SIZE * 2) / 3);

describe("is_better_update, rule by rule as sync-protocol.md orders them", () => {
  // [why, better, worse]
  const cases: Array<[string, LightClientUpdate, LightClientUpdate]> = [
    ["supermajority beats more finality without it", update({participants: SUPER, attested: 10}), update({participants: SUPER - 1, attested: 10, committee: true, finalized: 8})],
    ["below supermajority, more participants win", update({participants: 5, attested: 10}), update({participants: 4, attested: 10, committee: true, finalized: 8})],
    ["a relevant next committee wins", update({participants: SUPER, attested: 10, committee: true}), update({participants: SUPER, attested: 10, finalized: 8})],
    [
      "a next committee signed in the next period is not relevant",
      update({participants: SUPER, attested: 10}),
      update({participants: SUPER, attested: PERIOD_SLOTS - 1, signature: PERIOD_SLOTS, committee: true}),
    ],
    ["finality wins", update({participants: SUPER, attested: 10, finalized: 8}), update({participants: SUPER, attested: 10})],
    ["finality in the attested period wins", update({participants: SUPER, attested: PERIOD_SLOTS + 10, finalized: PERIOD_SLOTS}), update({participants: SUPER, attested: PERIOD_SLOTS + 10, finalized: 8})],
    ["then more participants", update({participants: SUPER + 1, attested: 12}), update({participants: SUPER, attested: 10})],
    ["then the older attested header", update({participants: SUPER, attested: 10}), update({participants: SUPER, attested: 12})],
    ["then the earlier signature", update({participants: SUPER, attested: 10, signature: 11}), update({participants: SUPER, attested: 10, signature: 13})],
  ];
  for (const [why, better, worse] of cases) {
    it(why, () => {
      expect(isBetterUpdate(better, worse)).toBe(true);
      expect(isBetterUpdate(worse, better)).toBe(false);
    });
  }
});

describe("the light-client server's store", () => {
  const dirs: string[] = [];
  const dbs: BeaconDb[] = [];
  afterEach(async () => {
    for (const db of dbs.splice(0)) await db.close();
    for (const dir of dirs.splice(0)) await removeDir(dir);
  });
  async function openDb(dir?: string): Promise<{db: BeaconDb; dir: string}> {
    const where = dir ?? (await makeTempDir());
    if (!dir) dirs.push(where);
    const db = await BeaconDb.open(where, chainConfig);
    dbs.push(db);
    return {db, dir: where};
  }
  const serverOver = (db: BeaconDb) => new LightClientServer({config: chainConfig, db, emitter: new EventEmitter<ChainEvents>()});

  /** An interop genesis state and a block over it, stored in `db`: the anchor of a chain. */
  async function storedAnchor(db: BeaconDb) {
    const genesis = createInteropGenesisState(chainConfig, 64, 1_700_000_000);
    const config = createBeaconConfig(chainConfig, genesis.genesisValidatorsRoot);
    const state = createCachedBeaconState(genesis, {config, pubkeyCache: createPubkeyCache()});
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.stateRoot = state.hashTreeRoot();
    const root = ssz.fulu.BeaconBlock.hashTreeRoot(block.message);
    await db.batch([db.blocks.putOp(root, block)]);
    return {genesis, state, root};
  }

  it("answers a range with consecutive periods from the earliest known, at most MAX_REQUEST_LIGHT_CLIENT_UPDATES (128)", async () => {
    const {db} = await openDb();
    for (let period = 0; period < 130; period++) {
      if (period === 1 || period === 4) continue;
      await db.lightClientUpdates.put(period, {fork: "altair" as never, value: update({participants: 20, attested: period * PERIOD_SLOTS + 3})});
    }
    const server = serverOver(db);
    const periodsOf = async (start: number, count: number) =>
      (await server.getUpdates(start, count)).map((u) => Math.floor(u.value.attestedHeader.beacon.slot / PERIOD_SLOTS));
    expect(await periodsOf(0, 3)).toEqual([0]);
    expect(await periodsOf(1, 3)).toEqual([2, 3]);
    expect(await periodsOf(5, 1000)).toEqual(Array.from({length: 125}, (_, i) => 5 + i));
    expect(await periodsOf(2, 10_000)).toHaveLength(2);
    expect((await periodsOf(0, Number.MAX_SAFE_INTEGER)).length).toBeLessThanOrEqual(128);
    expect(await periodsOf(6, 1000)).toHaveLength(124);
    expect(await periodsOf(200, 5)).toEqual([]);
  });

  it("keeps the bootstrap of the anchor block, and its updates, across a restart", async () => {
    const first = await openDb();
    const {genesis, state, root} = await storedAnchor(first.db);
    const server = serverOver(first.db);
    server.initAnchor(state, root);
    await server.close();
    const stored = update({participants: 30, attested: 5});
    await first.db.lightClientUpdates.put(0, {fork: "altair" as never, value: stored});
    await first.db.close();

    const reopened = await openDb(first.dir);
    const after = serverOver(reopened.db);
    const bootstrap = await after.getBootstrap(root);
    expect(bootstrap?.fork).toBe("fulu");
    // the spec's light client accepts it for the trusted root: header root and committee branch
    const client = new SpecLightClient(specOf(), genesis.genesisValidatorsRoot);
    client.initialize(root, {version: bootstrap!.fork, data: ssz.fulu.LightClientBootstrap.toJson(bootstrap!.value as never)});
    expect(ssz.altair.SyncCommittee.equals(client.store.currentSyncCommittee, (state as unknown as CachedBeaconStateAltair).currentSyncCommittee.toValue())).toBe(true);
    const [period0] = await after.getUpdates(0, 1);
    expect(period0.fork).toBe("altair");
    expect(ssz.altair.LightClientUpdate.equals(period0.value as never, stored as never)).toBe(true);
    expect(await after.getBootstrap(new Uint8Array(32).fill(0xab))).toBeNull();
  });

  it("gives no finality for a checkpoint that holds the genesis block's root (an epoch without blocks before it)", async () => {
    const {db} = await openDb();
    const {state, root: genesisRoot} = await storedAnchor(db);
    const server = serverOver(db);
    server.initAnchor(state, genesisRoot);

    // the first block at slot 17: the checkpoints of epochs 1 and 2 are the genesis block, and one is finalized
    const attestedState = state.clone();
    attestedState.slot = 17;
    attestedState.finalizedCheckpoint = ssz.phase0.Checkpoint.toViewDU({epoch: 2, root: genesisRoot});
    attestedState.commit();
    const attested = ssz.fulu.SignedBeaconBlock.defaultValue();
    Object.assign(attested.message, {slot: 17, parentRoot: genesisRoot, stateRoot: attestedState.hashTreeRoot()});
    const attestedRoot = ssz.fulu.BeaconBlock.hashTreeRoot(attested.message);
    server.onBlockImported(attested, attestedRoot, attestedState, true);
    const signing = ssz.fulu.SignedBeaconBlock.defaultValue();
    Object.assign(signing.message, {slot: 18, parentRoot: attestedRoot});
    for (let i = 0; i < SUPER; i++) signing.message.body.syncAggregate.syncCommitteeBits.set(i, true);
    server.onBlockImported(signing, ssz.fulu.BeaconBlock.hashTreeRoot(signing.message), attestedState, true);
    await server.close();

    const [best] = await server.getUpdates(0, 1);
    expect(best.value.attestedHeader.beacon.slot).toBe(17);
    expect(best.value.finalizedHeader.beacon).toEqual(ssz.phase0.BeaconBlockHeader.defaultValue());
    expect(best.value.finalityBranch.every((node) => node.every((b) => b === 0))).toBe(true);
    expect(server.getFinalityUpdate()).toBeNull();
    expect(server.getOptimisticUpdate()?.value.attestedHeader.beacon.slot).toBe(17);
  });
});

/** The config entries the spec light client reads (as `/eth/v1/config/spec` has them). */
function specOf(): Record<string, string> {
  const spec: Record<string, string> = {SLOTS_PER_EPOCH: "8", EPOCHS_PER_SYNC_COMMITTEE_PERIOD: "8", MIN_SYNC_COMMITTEE_PARTICIPANTS: "1"};
  for (const fork of ["ALTAIR", "BELLATRIX", "CAPELLA", "DENEB", "ELECTRA", "FULU"]) spec[`${fork}_FORK_EPOCH`] = String((chainConfig as unknown as Record<string, number>)[`${fork}_FORK_EPOCH`]);
  return spec;
}
