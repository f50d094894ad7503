#!/usr/bin/env node
// The V8 heap flags and malloc's arena limit (heapFlags.js) only take effect at start, so the
// launcher replaces itself (same process id, same stdio) with one started with them, where Node
// can. The flags depend on the consensus preset, which is chosen first.
import {fileURLToPath} from "node:url";
import {buildIsCurrent, entryUrl} from "./entry.js";
import {SEMI_SPACE_FLAG, heapFlags, launchEnv} from "./heapFlags.js";

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

if (typeof process.execve === "function" && !process.execArgv.some((a) => a.startsWith(SEMI_SPACE_FLAG)) && !process.env.BEACON_GATEWAY_NO_REEXEC) {
  process.execve(process.execPath, [process.execPath, ...heapFlags(args[0], process.env.LODESTAR_PRESET), ...process.execArgv, ...process.argv.slice(1)], launchEnv(process.env));
}

const {main} = await import(entryUrl(ROOT, "src/cli/main.ts", fromBuild));
// the legacy JSON-RPC interface (compat/: `compat`, `node --rpc`) joins the command line here: nothing in src/ imports it
const exitCode = await main(args, {compat: () => import(entryUrl(ROOT, "compat/commands.ts", fromBuild))});
// a command that failed may leave work it started behind (timers, sockets, workers): exit now, never hang
if (exitCode !== 0) process.exit(exitCode);
process.exitCode = exitCode;
