#!/usr/bin/env node
// Launcher. @lodestar/params fixes the consensus preset when it is first imported, so the
// preset is chosen here, from the command line, before anything that imports lodestar loads.
const args = process.argv.slice(2);
const presetAt = args.indexOf("--preset");
const presetArg = args.find((a) => a.startsWith("--preset="))?.slice("--preset=".length) ?? (presetAt >= 0 ? args[presetAt + 1] : undefined);
if (presetArg === "minimal" || presetArg === "mainnet") process.env.LODESTAR_PRESET = presetArg;
// the validator client and the JSON-RPC proxy take the preset of the beacon node they talk to
else if (args[0] !== "validator" && args[0] !== "compat") {
  // a network other than dev fixes its own preset (the public ones mainnet, a custom one its config's PRESET_BASE)
  const {presetOfArgs} = await import("../src/config/networkNames.ts");
  const networkPreset = args[0] === "node" ? presetOfArgs(args) : undefined;
  if (networkPreset) process.env.LODESTAR_PRESET = networkPreset;
  else process.env.LODESTAR_PRESET ??= "minimal";
}

const {main} = await import("../src/cli/main.ts");
process.exitCode = await main(args);
