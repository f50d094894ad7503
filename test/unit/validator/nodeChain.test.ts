import {describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {readFileSync} from "node:fs";
import {createBeaconConfig} from "@lodestar/config";
import {fromHex} from "@lodestar/utils";
import {ForkType} from "../../../src/api/routes/config.ts";
import {chainConfigOfSpec, checkForkSchedule, checkGenesisForkVersion, checkPreset} from "../../../src/validator/nodeChain.ts";
import {SlashingProtection} from "../../../src/validator/slashingProtection.ts";
import {captureLog} from "./captureLog.ts";

/**
 * What the validator client accepts of a beacon node's chain description, on the spec map and
 * fork schedule Lodestar 1.5.1 gives for its minimal-preset bellatrix dev chain (recorded with
 * curl into ../api/fixtures/lodestar-1.5.1): an older spec, with fewer keys, an eip4844 fork
 * instead of deneb, and 2023's minimal FIELD_ELEMENTS_PER_BLOB (4).
 */

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../api/fixtures/lodestar-1.5.1/${name}.json`, import.meta.url), "utf8")).data;
const lodestarSpec = (): Record<string, string> => fixture("spec");
const lodestarSchedule = () => (fixture("forkSchedule") as unknown[]).map((f) => ForkType.fromJson(f));
const GVR = new Uint8Array(32).fill(7);

describe("the chain config of an older node's spec", () => {
  it("takes its values; forks it does not name are unscheduled; its slot length in seconds", () => {
    const config = chainConfigOfSpec(lodestarSpec());
    expect(config.ALTAIR_FORK_EPOCH).toBe(0);
    expect(config.BELLATRIX_FORK_EPOCH).toBe(0);
    expect(config.CAPELLA_FORK_EPOCH).toBe(Infinity);
    for (const fork of ["DENEB", "ELECTRA", "FULU", "GLOAS"]) expect((config as unknown as Record<string, number>)[`${fork}_FORK_EPOCH`]).toBe(Infinity);
    expect(config.SLOT_DURATION_MS).toBe(2000);
    expect(config.GENESIS_FORK_VERSION).toEqual(fromHex("0x00000001"));
    expect(createBeaconConfig(config, GVR).getForkName(100)).toBe("bellatrix");
  });
});

describe("hard checks", () => {
  it("accept Lodestar 1.5.1's preset and fork schedule", () => {
    const spec = lodestarSpec();
    const chainConfig = chainConfigOfSpec(spec);
    expect(() => checkPreset(spec, chainConfig)).not.toThrow();
    expect(() => checkForkSchedule(createBeaconConfig(chainConfig, GVR), lodestarSchedule())).not.toThrow();
  });

  it("preset: another preset base, or another value of a scheduled fork's preset, is refused", () => {
    const spec = {...lodestarSpec(), PRESET_BASE: "mainnet"};
    expect(() => checkPreset(spec, chainConfigOfSpec(spec))).toThrow("the beacon node runs the mainnet preset and this validator client the minimal preset");
    const epochs = {...lodestarSpec(), SLOTS_PER_EPOCH: "32"};
    expect(() => checkPreset(epochs, chainConfigOfSpec(epochs))).toThrow("the beacon node's preset has SLOTS_PER_EPOCH 32, this validator client's 8");
  });

  it("preset: values of forks the chain does not schedule do not matter; once scheduled they do", () => {
    const withDeneb = {...lodestarSpec(), DENEB_FORK_VERSION: "0x04000001", DENEB_FORK_EPOCH: "10"};
    expect(() => checkPreset(withDeneb, chainConfigOfSpec(withDeneb))).toThrow("FIELD_ELEMENTS_PER_BLOB 4, this validator client's 4096");
  });

  it("fork schedule: a fork at another epoch or with another version than the spec's is refused", () => {
    const config = createBeaconConfig(chainConfigOfSpec(lodestarSpec()), GVR);
    const moved = lodestarSchedule().map((f) => (f.currentVersion[0] === 2 ? {...f, epoch: 5} : f));
    expect(() => checkForkSchedule(config, moved)).toThrow(/fork schedule \[.*0x02000001@5.*\] differs from its spec's \[.*0x02000001@0.*\]/);
    const renamed = lodestarSchedule().map((f) => (f.currentVersion[0] === 1 ? {...f, currentVersion: fromHex("0x01000099")} : f));
    expect(() => checkForkSchedule(config, renamed)).toThrow("differs from its spec's");
  });
});

describe("the genesis fork version /eth/v1/beacon/genesis reports", () => {
  const config = createBeaconConfig(chainConfigOfSpec(lodestarSpec()), GVR);

  it("the spec's: nothing to say", () => {
    const {log, lines} = captureLog();
    checkGenesisForkVersion(config, fromHex("0x00000001"), log);
    expect(lines).toEqual([]);
  });

  it("another fork of the same chain (Lodestar 1.5.1 reports its state's, 0x02000001): a warning", () => {
    const {log, lines} = captureLog();
    checkGenesisForkVersion(config, fromHex("0x02000001"), log);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({level: "warn", fields: {reported: "0x02000001", genesisForkVersion: "0x00000001", fork: "bellatrix"}});
  });

  it("a version of no fork of the chain: refused", () => {
    expect(() => checkGenesisForkVersion(config, fromHex("0x00000064"), captureLog().log)).toThrow("0x00000064 differs from its spec's GENESIS_FORK_VERSION 0x00000001, and is no fork version of its chain");
  });
});

describe("the genesis validators root binds the slashing protection records", () => {
  it("to the chain of the first node; another chain's node is refused, the same one accepted", async () => {
    const dir = await mkdtemp(join(tmpdir(), "vc-chain-"));
    try {
      let protection = await SlashingProtection.open(dir);
      await protection.bindToChain(GVR);
      await protection.close();
      protection = await SlashingProtection.open(dir);
      await expect(protection.bindToChain(new Uint8Array(32).fill(8))).rejects.toThrow(new RegExp(`0x${"07".repeat(32)}.*0x${"08".repeat(32)}.*another chain`));
      await protection.bindToChain(GVR);
      await protection.close();
    } finally {
      await rm(dir, {recursive: true, force: true});
    }
  });
});
