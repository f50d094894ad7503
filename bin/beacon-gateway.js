#!/usr/bin/env node
// V8's young generation grows to tens of MiB per semi-space by default on a machine with much
// memory, which the node's short-lived request garbage does not need: 2 MiB keeps the node's RSS
// about 50 MiB lower at rest and 140 MiB lower under REST load, at the same request rate
// (measured with bench:api's endpoints). The old generation may grow by 20% past what the last
// full GC left before the next, not V8's default of up to 100% and more: another 50-60 MiB less
// after the same load (262-279 MiB against 195-215), at the same rate. The flags only take effect
// at start, so the launcher replaces itself (same process id, same stdio) with one started with
// them, where Node can.
import {fileURLToPath} from "node:url";
import {buildIsCurrent, entryUrl} from "./entry.js";

const SEMI_SPACE_FLAG = "--max-semi-space-size";
const HEAP_FLAGS = [`${SEMI_SPACE_FLAG}=2`, "--heap-growing-percent=20"];
if (typeof process.execve === "function" && !process.execArgv.some((a) => a.startsWith(SEMI_SPACE_FLAG)) && !process.env.BEACON_GATEWAY_NO_REEXEC) {
  process.execve(process.execPath, [process.execPath, ...HEAP_FLAGS, ...process.execArgv, ...process.argv.slice(1)], process.env);
}
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const fromBuild = buildIsCurrent(ROOT);

// Launcher. @lodestar/params fixes the consensus preset when it is first imported, so the
// preset is chosen here, from the command line, before anything that imports lodestar loads.
const args = process.argv.slice(2);
const presetAt = args.indexOf("--preset");
const presetArg = args.find((a) => a.startsWith("--preset="))?.slice("--preset=".length) ?? (presetAt >= 0 ? args[presetAt + 1] : undefined);
if (presetArg === "minimal" || presetArg === "mainnet") process.env.LODESTAR_PRESET = presetArg;
// the validator client and the JSON-RPC proxy take the preset of the beacon node they talk to
else if (args[0] !== "validator" && args[0] !== "compat") {
  // a network other than dev fixes its own preset (the public ones mainnet, a custom one its config's PRESET_BASE)
  const {presetOfArgs} = await import(entryUrl(ROOT, "src/config/networkNames.ts", fromBuild));
  const networkPreset = args[0] === "node" ? presetOfArgs(args) : undefined;
  if (networkPreset) process.env.LODESTAR_PRESET = networkPreset;
  else process.env.LODESTAR_PRESET ??= "minimal";
}

const {main} = await import(entryUrl(ROOT, "src/cli/main.ts", fromBuild));
// the legacy JSON-RPC interface (compat/: `compat`, `node --rpc`) joins the command line here: nothing in src/ imports it
const exitCode = await main(args, {compat: () => import(entryUrl(ROOT, "compat/commands.ts", fromBuild))});
// a command that failed may leave work it started behind (timers, sockets, workers): exit now, never hang
if (exitCode !== 0) process.exit(exitCode);
process.exitCode = exitCode;
