import {describe, expect, it} from "@jest/globals";
import {spawnSync} from "node:child_process";
import {fileURLToPath} from "node:url";

/**
 * The launcher restarts itself with V8 heap flags: a small young generation for the dev chain and
 * the clients, a larger one for a beacon node on the mainnet preset (a state of a million
 * validators, a slot's gossip in flight); and with glibc's malloc arenas limited. Checked on the
 * launcher itself: the flags and environment the process it becomes was started with, as a
 * module preloaded through NODE_OPTIONS (which the restart keeps) prints them.
 */
const LAUNCHER = fileURLToPath(new URL("../../../bin/beacon-gateway.js", import.meta.url));
// prints the flags; the restarted process (the one with flags) stops there, before the command loads
const PRINT_EXEC_ARGV =
  "--import=data:text/javascript,console.error(JSON.stringify({execArgv:process.execArgv,arenas:process.env.MALLOC_ARENA_MAX??null}));if(process.execArgv.length)process.exit(0)";

interface Started {
  execArgv: string[];
  arenas: string | null;
}

function startsOf(args: string[], env: Record<string, string>): Started[] {
  const {MALLOC_ARENA_MAX: _, ...ours} = process.env;
  const run = spawnSync(process.execPath, [LAUNCHER, ...args, "--help"], {env: {...ours, ...env, NODE_OPTIONS: PRINT_EXEC_ARGV}, encoding: "utf8"});
  expect(run.status).toBe(0);
  return run.stderr
    .split("\n")
    .filter((line) => line.startsWith('{"execArgv"'))
    .map((line) => JSON.parse(line) as Started);
}

const execArgvOf = (args: string[], env: Record<string, string>): string[][] => startsOf(args, env).map((s) => s.execArgv);

describe("the launcher's V8 heap flags", () => {
  it.each([
    [["node"], {}, 2],
    [["node", "--preset", "minimal"], {}, 2],
    [["node", "--preset", "mainnet"], {}, 32],
    [["node", "--network", "sepolia"], {}, 32],
    // a validator client is not a beacon node, whatever its preset
    [["validator"], {LODESTAR_PRESET: "mainnet"}, 2],
  ])("%j %j: restarted once, with a %i MiB semi-space and 20%% old-generation growth", (args, env, semiSpaceMiB) => {
    // the launcher as started, then the process it became (same pid, execve)
    expect(execArgvOf(args, env)).toEqual([[], [`--max-semi-space-size=${semiSpaceMiB}`, "--heap-growing-percent=20"]]);
  });

  it("restarts with glibc's malloc limited to two arenas, unless the user chose a limit", () => {
    expect(startsOf(["node"], {}).map((s) => s.arenas)).toEqual([null, "2"]);
    expect(startsOf(["validator"], {MALLOC_ARENA_MAX: "4"}).map((s) => s.arenas)).toEqual(["4", "4"]);
  });
});
