import type {InterchangeExportOptions, InterchangeImportOptions} from "../validator/interchangeCommand.ts";
import {type CommandSpec, InvalidValue, type OptionTable, option} from "./optionTable.ts";
import {oneOf} from "./values.ts";

/** `beacon-gateway slashing-protection export|import`: their options, each described once (src/cli/optionTable.ts). */

function root(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) throw new InvalidValue(`"${text.slice(0, 80)}" is not 0x and 32 bytes of hex`);
  return text.toLowerCase();
}

type Shared = Pick<InterchangeImportOptions, "dataDir" | "file" | "genesisValidatorsRoot">;

function sharedOptions(fileHelp: string, rootHelp: string): OptionTable<Shared> {
  return {
    dataDir: option({
      name: "data-dir",
      value: "DIR",
      default: "./data/validator",
      help: "the validator data dir (`validator --data-dir`; for a node's own validators, `<node data dir>/validator`)",
      parse: (text) => text,
    }),
    file: option({name: "file", value: "FILE", required: true, help: fileHelp, parse: (text) => text}),
    genesisValidatorsRoot: option({name: "genesis-validators-root", value: "ROOT", help: rootHelp, parse: root}),
  };
}

const ABOUT_STOPPED = "The validator client (or node) using the data dir must be stopped first: its database is\nrefused while it runs.";

export const SLASHING_EXPORT_COMMAND: CommandSpec<InterchangeExportOptions> = {
  usage: "beacon-gateway slashing-protection export --file FILE [options]",
  about: `Writes the slashing protection records of a validator data dir as an EIP-3076 interchange
file (format version 5), for another client or another machine. ${ABOUT_STOPPED}`,
  options: {
    ...sharedOptions(
      "the interchange file to write (replaced whole)",
      "the chain's genesis validators root, `0x` hex; needed only for records no validator client has run on yet"
    ),
    format: option({
      name: "format",
      value: "complete|minimal",
      default: "complete",
      help: "every record, or per validator only the highest block and one attestation at the highest source and target",
      parse: (text) => oneOf(text, ["complete", "minimal"] as const),
    }),
  },
};

export const SLASHING_IMPORT_COMMAND: CommandSpec<InterchangeImportOptions> = {
  usage: "beacon-gateway slashing-protection import --file FILE [options]",
  about: `Merges an EIP-3076 interchange file (format version 5, complete or minimal) into the slashing
protection records of a validator data dir, so that its validators refuse whatever the file's
history forbids. The file must be for the chain the records are for; importing never lowers
protection. ${ABOUT_STOPPED}`,
  options: sharedOptions("the interchange file to read", "when given, refuse a file for another chain (`0x` hex)"),
};
