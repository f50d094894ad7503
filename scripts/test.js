// `npm test`: the whole suite. Jest runs our ESM TypeScript through Node's VM modules.
// The minimal preset is chosen here because @lodestar/params reads it once, at first import.
// A full run (no arguments) type-checks the tree first: Node and swc only strip types, so a
// type error would otherwise pass unnoticed. `npm test -- <path>` runs just those tests.
import {spawnSync} from "node:child_process";
import {fileURLToPath} from "node:url";

const bin = (path) => fileURLToPath(new URL(`../node_modules/${path}`, import.meta.url));
const args = process.argv.slice(2);

if (args.length === 0) {
  const tsc = spawnSync(process.execPath, [bin("typescript/bin/tsc"), "--noEmit", "-p", "."], {stdio: "inherit"});
  if (tsc.status !== 0) {
    console.error("type check failed: tests not run");
    process.exit(tsc.status ?? 1);
  }
}

const result = spawnSync(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", bin("jest/bin/jest.js"), ...args], {
  stdio: "inherit",
  env: {...process.env, LODESTAR_PRESET: process.env.LODESTAR_PRESET ?? "minimal", LOG_LEVEL: process.env.LOG_LEVEL ?? "WARN"},
});
process.exit(result.status ?? 1);
