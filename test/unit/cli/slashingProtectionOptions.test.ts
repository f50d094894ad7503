import {describe, expect, it} from "@jest/globals";
import {SLASHING_EXPORT_COMMAND, SLASHING_IMPORT_COMMAND} from "../../../src/cli/slashingProtectionOptions.ts";
import {UsageError, parseCommand, renderHelp} from "../../../src/cli/optionTable.ts";

describe("slashing-protection export|import options", () => {
  const root = "0x" + "Ab".repeat(32);

  it("export: --file is required; the data dir and the complete form are the defaults", () => {
    expect(() => parseCommand(SLASHING_EXPORT_COMMAND, [])).toThrow("--file FILE is required");
    expect(parseCommand(SLASHING_EXPORT_COMMAND, ["--file", "out.json"])).toEqual({
      dataDir: "./data/validator",
      file: "out.json",
      genesisValidatorsRoot: undefined,
      format: "complete",
    });
    expect(parseCommand(SLASHING_EXPORT_COMMAND, ["--file", "f", "--format", "minimal", "--genesis-validators-root", root])).toMatchObject({
      format: "minimal",
      genesisValidatorsRoot: root.toLowerCase(),
    });
  });

  it.each([
    [["--file", "f", "--format", "full"], "--format"],
    [["--file", "f", "--genesis-validators-root", "0x1234"], "--genesis-validators-root"],
    [["--file", "f", "--pubkeys", "x"], "--pubkeys"],
  ])("export %j: a usage error naming the option", (args, name) => {
    expect(() => parseCommand(SLASHING_EXPORT_COMMAND, args)).toThrow(UsageError);
    expect(() => parseCommand(SLASHING_EXPORT_COMMAND, args)).toThrow(name);
  });

  it("import: takes the data dir, the file and an optional root, and no format", () => {
    expect(parseCommand(SLASHING_IMPORT_COMMAND, ["--data-dir", "d", "--file", "in.json"])).toEqual({dataDir: "d", file: "in.json", genesisValidatorsRoot: undefined});
    expect(() => parseCommand(SLASHING_IMPORT_COMMAND, ["--file", "f", "--format", "minimal"])).toThrow(UsageError);
  });

  it("the help of each lists its options", () => {
    expect(renderHelp(SLASHING_EXPORT_COMMAND)).toMatch(/--data-dir DIR[\s\S]*--file FILE[\s\S]*--genesis-validators-root ROOT[\s\S]*--format complete\|minimal[\s\S]*--help/);
    expect(renderHelp(SLASHING_IMPORT_COMMAND)).toMatch(/--data-dir DIR[\s\S]*--file FILE[\s\S]*--genesis-validators-root ROOT[\s\S]*--help/);
  });
});
