import {describe, expect, it} from "@jest/globals";
import {spawnSync} from "node:child_process";
import {fileURLToPath} from "node:url";

/**
 * The launcher restarts itself with V8 heap flags: a small young generation for the dev chain and
 * the clients, a larger one for a beacon node on the mainnet preset (a state of a million
 * validators, a slot's gossip in flight). Checked on the launcher itself: the flags the process
 * it becomes was started with, as a module preloaded through NODE_OPTIONS (which the restart
 * keeps) prints them.
 */
const LAUNCHER = fileURLToPath(new URL("../../../bin/beacon-gateway.js", import.meta.url));
// prints the flags; the restarted process (the one with flags) stops there, before the command loads
const PRINT_EXEC_ARGV = "--import=data:text/javascript,console.error(JSON.stringify({execArgv:process.execArgv}));if(process.execArgv.length)process.exit(0)";

function execArgvOf(args: string[], env: Record<string, string>): string[][] {
  const run = spawnSync(process.execPath, [LAUNCHER, ...args, "--help"], {env: {...process.env, ...env, NODE_OPTIONS: PRINT_EXEC_ARGV}, encoding: "utf8"});
  expect(run.status).toBe(0);
  return run.stderr
    .split("\n")
    .filter((line) => line.startsWith('{"execArgv"'))
    .map((line) => (JSON.parse(line) as {execArgv: string[]}).execArgv);
}

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
});
