import {afterAll, describe, expect, it} from "@jest/globals";
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {presetOfArgs, presetOfConfigText} from "../../../src/config/networkNames.ts";
import {checkNetworkAnchor, customNetwork, publicNetwork} from "../../../src/config/networks.ts";
import {HOLESKY_GENESIS, holeskyChainConfig} from "../../../src/config/holesky.ts";

/** The consensus specs' own config files (v1.6.1), in the layout the public testnets publish. */
const SPEC_CONFIGS = "/work/shared/specs/consensus/configs";
const silent = {info: () => undefined};

describe("networks", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-networks-"));
  afterAll(() => rmSync(dir, {recursive: true, force: true}));

  it("reads a custom network from a config.yaml: the values the file has, as the spec writes them", () => {
    const {config, genesisValidatorsRoot} = customNetwork(join(SPEC_CONFIGS, "minimal.yaml"));
    expect(config.PRESET_BASE).toBe("minimal");
    expect(config.CONFIG_NAME).toBe("minimal");
    expect(config.SECONDS_PER_SLOT).toBe(6);
    expect(Buffer.from(config.GENESIS_FORK_VERSION).toString("hex")).toBe("00000001");
    expect(config.DEPOSIT_CHAIN_ID).toBe(5);
    expect(config.ELECTRA_FORK_EPOCH).toBe(Infinity);
    expect(genesisValidatorsRoot).toBeNull();
  });

  it("refuses a config of another preset than the process runs, and files that are not configurations", () => {
    // jest runs the minimal preset
    expect(() => customNetwork(join(SPEC_CONFIGS, "mainnet.yaml"))).toThrow(/uses the mainnet preset, but this process runs the minimal preset/);
    expect(() => publicNetwork("sepolia")).toThrow(/mainnet preset/);
    const list = join(dir, "list.yaml");
    writeFileSync(list, "- a\n- b\n");
    expect(() => customNetwork(list)).toThrow(/not a YAML mapping/);
    const broken = join(dir, "broken.yaml");
    writeFileSync(broken, "PRESET_BASE: 'minimal'\nSECONDS_PER_SLOT: [\n");
    expect(() => customNetwork(broken)).toThrow(/cannot read the network configuration/);
  });

  it("builds holesky in (the library dropped it) on the mainnet preset, with its published values", () => {
    expect(() => publicNetwork("holesky")).toThrow(/mainnet preset/);
    // eth-clients/holesky metadata/config.yaml: forks and their versions
    const forks = ["ALTAIR", "BELLATRIX", "CAPELLA", "DENEB", "ELECTRA", "FULU"] as const;
    expect(forks.map((f) => holeskyChainConfig[`${f}_FORK_EPOCH`])).toEqual([0, 0, 256, 29696, 115968, 165120]);
    expect(forks.map((f) => Buffer.from(holeskyChainConfig[`${f}_FORK_VERSION`]).toString("hex"))).toEqual(["02017000", "03017000", "04017000", "05017000", "06017000", "07017000"]);
    expect(Buffer.from(holeskyChainConfig.GENESIS_FORK_VERSION).toString("hex")).toBe("01017000");
    expect(holeskyChainConfig.DEPOSIT_CHAIN_ID).toBe(17000);
    expect(HOLESKY_GENESIS.genesisValidatorsRoot).toBe("0x9143aa7c615a7f7115e2b6aac319c03529df8242ae705fba9df39b79c59fa8b1");
  });

  it("finds the preset a network runs before lodestar loads: mainnet for public networks, PRESET_BASE for a custom one", () => {
    expect(presetOfConfigText(readFileSync(join(SPEC_CONFIGS, "mainnet.yaml"), "utf8"))).toBe("mainnet");
    expect(presetOfConfigText(readFileSync(join(SPEC_CONFIGS, "minimal.yaml"), "utf8"))).toBe("minimal");
    expect(presetOfArgs(["node", "--network", "hoodi"])).toBe("mainnet");
    expect(presetOfArgs(["node", "--network=custom", "--config", join(SPEC_CONFIGS, "minimal.yaml")])).toBe("minimal");
    expect(presetOfArgs(["node", "--network", "dev"])).toBeUndefined();
    expect(presetOfArgs(["node"])).toBeUndefined();
  });

  it("refuses a starting state of another network by its genesis validators root", () => {
    const mainnetRoot = "0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95";
    const network = {config: null as never, genesisValidatorsRoot: mainnetRoot};
    const other = {state: {genesisValidatorsRoot: new Uint8Array(32).fill(1)}};
    expect(() => checkNetworkAnchor("mainnet", network, undefined, other, silent)).toThrow(/not mainnet's 0x4b363db9/);
    const same = {state: {genesisValidatorsRoot: new Uint8Array(Buffer.from(mainnetRoot.slice(2), "hex"))}};
    expect(() => checkNetworkAnchor("mainnet", network, undefined, same, silent)).not.toThrow();
  });
});
