import {readFileSync, writeFileSync} from "node:fs";
import {fileURLToPath, pathToFileURL} from "node:url";
import {COMPAT_CHECK_COMMAND, COMPAT_COMMAND, NODE_COMMAND, VALIDATOR_COMMAND} from "../src/cli/options.ts";
import {DEVNET_COMMAND} from "../src/cli/devnetOptions.ts";
import {SLASHING_EXPORT_COMMAND, SLASHING_IMPORT_COMMAND} from "../src/cli/slashingProtectionOptions.ts";
import {MOCK_ENGINE_COMMAND} from "../src/cli/executionOptions.ts";
import {MOCK_BUILDER_COMMAND} from "../src/cli/builderOptions.ts";
import {REMOTE_SIGNER_COMMAND} from "../src/cli/remoteSignerOptions.ts";
import {DB_CHECK_COMMAND, DB_REPAIR_COMMAND} from "../src/cli/dbOptions.ts";
import {type CommandSpec, renderOptionTables} from "../src/cli/optionTable.ts";

/**
 * Writes the commands' option tables into docs/cli.md, between `<!-- options:COMMAND -->` and
 * `<!-- /options:COMMAND -->`, from the option tables the command line is parsed with.
 * `node scripts/options-docs.ts --write` rewrites docs/cli.md; `--check` exits 1 when it is
 * stale (test/unit/cli/commandLine.test.ts fails then too); with neither it prints the result.
 */

export const CLI_DOC_FILE = fileURLToPath(new URL("../docs/cli.md", import.meta.url));

export const COMMANDS: Record<string, CommandSpec<never>> = {
  node: NODE_COMMAND as CommandSpec<never>,
  validator: VALIDATOR_COMMAND as CommandSpec<never>,
  compat: COMPAT_COMMAND as CommandSpec<never>,
  "compat-check": COMPAT_CHECK_COMMAND as CommandSpec<never>,
  devnet: DEVNET_COMMAND as CommandSpec<never>,
  "mock-engine": MOCK_ENGINE_COMMAND as CommandSpec<never>,
  "mock-builder": MOCK_BUILDER_COMMAND as CommandSpec<never>,
  "remote-signer": REMOTE_SIGNER_COMMAND as CommandSpec<never>,
  "slashing-protection-export": SLASHING_EXPORT_COMMAND as CommandSpec<never>,
  "slashing-protection-import": SLASHING_IMPORT_COMMAND as CommandSpec<never>,
  "db-check": DB_CHECK_COMMAND as CommandSpec<never>,
  "db-repair": DB_REPAIR_COMMAND as CommandSpec<never>,
};

/** The page's text with every command's marked block replaced by its rendered tables. */
export function renderCliDoc(page: string): string {
  let out = page;
  for (const [command, spec] of Object.entries(COMMANDS)) {
    const begin = `<!-- options:${command} -->`;
    const end = `<!-- /options:${command} -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/cli.md has no ${begin} … ${end} block`);
    out = `${out.slice(0, from + begin.length)}\n\n${renderOptionTables(spec)}\n\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const page = readFileSync(CLI_DOC_FILE, "utf8");
  const text = renderCliDoc(page);
  if (process.argv.includes("--write")) writeFileSync(CLI_DOC_FILE, text);
  else if (process.argv.includes("--check")) {
    if (text !== page) process.stderr.write("docs/cli.md's option tables are stale: run node scripts/options-docs.ts --write\n");
    process.exitCode = text === page ? 0 : 1;
  } else process.stdout.write(text);
}
