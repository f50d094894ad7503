import {describe, expect, it} from "@jest/globals";
import {parseIndexRange, parseNodeOptions, parseValidatorOptions} from "../../../src/cli/options.ts";
import {graffitiFromText as graffitiBytes} from "../../../src/graffiti.ts";

describe("node options", () => {
  it("has the spec's defaults", () => {
    const opts = parseNodeOptions([]);
    if (opts === "help") throw new Error("unexpected help");
    expect(opts).toMatchObject({
      rest: false,
      restPort: 5052,
      restAddress: "127.0.0.1",
      restAllowOrigin: null,
      dataDir: "./data/dev",
      network: "dev",
      preset: "minimal",
      validators: 64,
      secondsPerSlot: 4,
      genesisFork: "fulu",
      forkEpochs: {},
      logFormat: "text",
    });
    expect(opts.devValidators).toHaveLength(64);
  });

  it("reads every option", () => {
    const opts = parseNodeOptions([
      "--rest", "--rest-port", "6000", "--rest-address", "0.0.0.0", "--rest-allow-origin", "*", "--subscribe-all-subnets",
      "--data-dir", "/tmp/x", "--validators", "16", "--genesis-time", "1700000000", "--seconds-per-slot", "2",
      "--genesis-fork", "phase0", "--fork-epochs", "altair=1,bellatrix=2", "--dev-validators", "0..3,8", "--graffiti", "hello",
      "--log-level", "DEBUG; DISABLED:api", "--log-format", "json",
    ]);
    if (opts === "help") throw new Error("unexpected help");
    expect(opts).toMatchObject({
      rest: true, restPort: 6000, restAddress: "0.0.0.0", restAllowOrigin: "*", subscribeAllSubnets: true, dataDir: "/tmp/x",
      validators: 16, genesisTime: 1700000000, secondsPerSlot: 2, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2},
      devValidators: [0, 1, 2, 3, 8], graffiti: "hello", logFormat: "json",
    });
    expect(opts.logLevel.disabled).toEqual(["api"]);
  });

  it.each([
    [["--bogus"], "bogus"],
    [["--rest-port", "abc"], "--rest-port"],
    [["--rest-port", "70000"], "out of range"],
    [["--preset", "huge"], "--preset"],
    [["--genesis-fork", "gloas"], "--genesis-fork"],
    [["--fork-epochs", "altair:1"], "--fork-epochs"],
    [["--fork-epochs", "phase0=1"], "unknown fork"],
    [["--dev-validators", "5..2"], "ends before"],
    [["--dev-validators", "64"], "not below"],
    [["--log-level", "LOUD"], "--log-level"],
    [["--log-format", "xml"], "--log-format"],
    [["--graffiti", "x".repeat(33)], "--graffiti"],
    [["--network", "mainnet"], "--network"],
  ])("rejects %j naming the option", (args, text) => {
    expect(() => parseNodeOptions(args)).toThrow(text);
  });

  it("answers --help", () => {
    expect(parseNodeOptions(["--help"])).toBe("help");
  });
});

describe("validator options", () => {
  it("needs --beacon-node", () => {
    expect(() => parseValidatorOptions([])).toThrow("--beacon-node");
    expect(() => parseValidatorOptions(["--beacon-node", "not a url"])).toThrow("not a URL");
  });

  it("reads indices", () => {
    const opts = parseValidatorOptions(["--beacon-node", "http://127.0.0.1:5052", "--interop-indices", "0..31"]);
    if (opts === "help") throw new Error("unexpected help");
    expect(opts.interopIndices).toHaveLength(32);
  });
});

describe("ranges and graffiti", () => {
  it("parses ranges", () => {
    expect(parseIndexRange("x", "none", 8)).toEqual([]);
    expect(parseIndexRange("x", "all", 3)).toEqual([0, 1, 2]);
    expect(parseIndexRange("x", "3,1..2", 8)).toEqual([1, 2, 3]);
  });

  it("pads text and takes 0x hex as raw bytes", () => {
    expect(Buffer.from(graffitiBytes("hi")).toString("hex")).toBe("6869" + "00".repeat(30));
    expect(Buffer.from(graffitiBytes("0xff01")).toString("hex")).toBe("ff01" + "00".repeat(30));
    expect(() => graffitiBytes("0x" + "ab".repeat(33))).toThrow("more than 32");
  });
});
