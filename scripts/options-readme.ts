import {readFileSync, writeFileSync} from "node:fs";
import {fileURLToPath, pathToFileURL} from "node:url";
import {COMPAT_CHECK_COMMAND, COMPAT_COMMAND, NODE_COMMAND, VALIDATOR_COMMAND} from "../src/cli/options.ts";
import {DEVNET_COMMAND} from "../src/cli/devnetOptions.ts";
import {SLASHING_EXPORT_COMMAND, SLASHING_IMPORT_COMMAND} from "../src/cli/slashingProtectionOptions.ts";
import {MOCK_ENGINE_COMMAND} from "../src/cli/executionOptions.ts";
import {type CommandSpec, renderReadmeTables} from "../src/cli/optionTable.ts";

/**
 * Writes the commands' option tables into README.md, between `<!-- options:COMMAND -->` and
 * `<!-- /options:COMMAND -->`, from the option tables the command line is parsed with.
 * `node scripts/options-readme.ts --write` rewrites README.md; `--check` exits 1 when it is
 * stale (test/unit/cli/readme.test.ts fails then too); with neither it prints the result.
 */

export const README_FILE = fileURLToPath(new URL("../README.md", import.meta.url));

const COMMANDS: Record<string, CommandSpec<never>> = {
  node: NODE_COMMAND as CommandSpec<never>,
  validator: VALIDATOR_COMMAND as CommandSpec<never>,
  compat: COMPAT_COMMAND as CommandSpec<never>,
  "compat-check": COMPAT_CHECK_COMMAND as CommandSpec<never>,
  devnet: DEVNET_COMMAND as CommandSpec<never>,
  "mock-engine": MOCK_ENGINE_COMMAND as CommandSpec<never>,
  "slashing-protection-export": SLASHING_EXPORT_COMMAND as CommandSpec<never>,
  "slashing-protection-import": SLASHING_IMPORT_COMMAND as CommandSpec<never>,
};

/** The README text with every command's marked block replaced by its rendered tables. */
export function renderReadme(readme: string): string {
  let out = readme;
  for (const [command, spec] of Object.entries(COMMANDS)) {
    const begin = `<!-- options:${command} -->`;
    const end = `<!-- /options:${command} -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README.md has no ${begin} … ${end} block`);
    out = `${out.slice(0, from + begin.length)}\n\n${renderReadmeTables(spec)}\n\n${out.slice(to)}`;
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const readme = readFileSync(README_FILE, "utf8");
  const text = renderReadme(readme);
  if (process.argv.includes("--write")) writeFileSync(README_FILE, text);
  else if (process.argv.includes("--check")) {
    if (text !== readme) process.stderr.write("README.md's option tables are stale: run node scripts/options-readme.ts --write\n");
    process.exitCode = text === readme ? 0 : 1;
  } else process.stdout.write(text);
}
