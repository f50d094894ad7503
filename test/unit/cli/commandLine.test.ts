import {describe, expect, it} from "@jest/globals";
import {spawnSync} from "node:child_process";
import {mkdtempSync, readFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {COMPAT_COMMAND, COMPAT_HELP, NODE_COMMAND, NODE_HELP, VALIDATOR_COMMAND, VALIDATOR_HELP} from "../../../src/cli/options.ts";
import {type CommandSpec, flag, option, parseArgsSpec, renderHelp, renderOptionTables} from "../../../src/cli/optionTable.ts";
import {CLI_DOC_FILE, COMMANDS as DOC_COMMANDS, renderCliDoc} from "../../../scripts/options-docs.ts";

/** The option tables against what is made of them: help, parseArgs spec, docs/cli.md, and the CLI process itself. */

const BIN = fileURLToPath(new URL("../../../bin/beacon-gateway.js", import.meta.url));
const COMMANDS = [
  ["node", NODE_COMMAND, NODE_HELP],
  ["validator", VALIDATOR_COMMAND, VALIDATOR_HELP],
  ["compat", COMPAT_COMMAND, COMPAT_HELP],
] as unknown as Array<[string, CommandSpec<Record<string, unknown>>, string]>;

/** Runs the CLI in an empty directory, so that a command line wrongly accepted cannot leave a data dir in the tree. */
function cli(...args: string[]): {status: number | null; stdout: string; stderr: string} {
  const cwd = mkdtempSync(join(tmpdir(), "bg-cli-"));
  try {
    const res = spawnSync(process.execPath, [BIN, ...args], {cwd, encoding: "utf8", timeout: 15_000});
    return {status: res.status, stdout: res.stdout, stderr: res.stderr};
  } finally {
    rmSync(cwd, {recursive: true, force: true});
  }
}

describe("the option tables", () => {
  it.each(COMMANDS)("%s: the help and the parseArgs spec list exactly the table's options", (_name, spec, help) => {
    const defs = Object.values(spec.options);
    expect(new Set(defs.map((d) => d.name)).size).toBe(defs.length);
    expect(Object.keys(parseArgsSpec(spec)).sort()).toEqual([...defs.map((d) => d.name), "help"].sort());
    const helpOptions = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(helpOptions).toEqual([...defs.map((d) => `--${d.name}`), "--help"]);
    for (const def of defs) {
      const label = def.kind === "flag" ? `--${def.name}` : `--${def.name} ${def.value}`;
      expect(help).toContain(`  ${label} `);
      if (def.kind === "value" && def.default !== undefined) expect(help.replace(/\s+/g, " ")).toContain(`(default ${def.default})`);
    }
  });

  it("keep docs/cli.md's option tables as rendered now (run: node scripts/options-docs.ts --write)", () => {
    const committed = readFileSync(CLI_DOC_FILE, "utf8");
    const rendered = renderCliDoc(committed);
    if (committed !== rendered) {
      const lines = committed.split("\n");
      const first = rendered.split("\n").findIndex((line, i) => line !== lines[i]);
      throw new Error(`docs/cli.md's option tables are stale from line ${first + 1}: run node scripts/options-docs.ts --write`);
    }
    for (const [name, spec] of COMMANDS) {
      const block = committed.split(`<!-- options:${name} -->`)[1].split(`<!-- /options:${name} -->`)[0];
      for (const def of Object.values(spec.options)) expect(block).toContain(`| \`--${def.name}`);
    }
  });

  it("document every command the CLI lists in docs/cli.md", () => {
    const usage = cli("--help").stdout;
    const commands = [...usage.matchAll(/^ {2}([a-z][a-z-]+)\s/gm)].map((m) => m[1]);
    expect(commands).toEqual(expect.arrayContaining(["node", "validator", "mock-builder"]));
    const documented = Object.keys(DOC_COMMANDS);
    expect(commands.filter((command) => !documented.some((name) => name === command || name.startsWith(`${command}-`)))).toEqual([]);
  });

  it("render a table's defaults, placeholders and markdown as documented", () => {
    const spec: CommandSpec<{a: boolean; b: number; c: string | undefined; d: string}> = {
      usage: "x [options]",
      about: "About x.",
      options: {
        a: flag({name: "alpha", group: "First", help: "turn `a|b` on"}),
        b: option({name: "beta", value: "N", default: "7", group: "First", help: "a number <n>", parse: Number}),
        c: option({name: "gamma", value: "one|two", defaultText: "`one` <when> needed", group: "Second", help: "g", parse: (t) => t}),
        d: option({name: "delta", value: "URL", required: true, group: "Second", help: "d", parse: (t) => t}),
      },
    };
    expect(renderOptionTables(spec)).toBe(
      [
        "**First**",
        "",
        "| option | default | meaning |",
        "|---|---|---|",
        "| `--alpha` | off | turn `a\\|b` on |",
        "| `--beta N` | `7` | a number &lt;n&gt; |",
        "",
        "**Second**",
        "",
        "| option | default | meaning |",
        "|---|---|---|",
        "| `--gamma one\\|two` | `one` &lt;when&gt; needed | g |",
        "| `--delta URL` | required | d |",
        "",
        "`--help` lists the options.",
      ].join("\n")
    );
    expect(renderHelp(spec)).toBe(
      [
        "Usage: x [options]",
        "",
        "About x.",
        "",
        "First",
        "  --alpha          turn a|b on",
        "  --beta N         a number <n> (default 7)",
        "",
        "Second",
        "  --gamma one|two  g (default: one <when> needed)",
        "  --delta URL      d (required)",
        "",
        "  --help           list the options",
        "",
      ].join("\n")
    );
  });
});

describe("the command line", () => {
  it("prints the help generated from the table", () => {
    expect(cli("node", "--help")).toEqual({status: 0, stdout: NODE_HELP, stderr: ""});
    expect(cli("compat", "--help")).toEqual({status: 0, stdout: COMPAT_HELP, stderr: ""});
  });

  it.each([
    [["node", "--tcp-port", "x"], 'beacon-gateway: --tcp-port: "x" is not a whole number\n'],
    [["node", "--target-peers", "60", "--max-peers", "59"], "beacon-gateway: --max-peers: 59 is below --target-peers 60\n"],
    [["node", "--direct-peer", "/ip4/10.0.0.2/udp/1"], 'beacon-gateway: --direct-peer: "/ip4/10.0.0.2/udp/1" is not /ip4/ADDR/tcp/PORT, optionally followed by /p2p/PEER_ID\n'],
    [["validator"], "beacon-gateway: --beacon-node URL[,URL…] is required\n"],
    [["compat", "--upstream", "ftp://h"], 'beacon-gateway: --upstream: "ftp://h" is not an http(s) URL\n'],
  ])("%j exits 2 with one line naming the option", (args, stderr) => {
    expect(cli(...args)).toEqual({status: 2, stdout: "", stderr});
  });
});
