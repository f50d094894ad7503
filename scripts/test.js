// `npm test`: the whole suite. Jest runs our ESM TypeScript through Node's VM modules.
// The minimal preset is chosen here because @lodestar/params reads it once, at first import.
import {spawnSync} from "node:child_process";
import {fileURLToPath} from "node:url";

const jest = fileURLToPath(new URL("../node_modules/jest/bin/jest.js", import.meta.url));
const result = spawnSync(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", jest, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: {...process.env, LODESTAR_PRESET: process.env.LODESTAR_PRESET ?? "minimal", LOG_LEVEL: process.env.LOG_LEVEL ?? "WARN"},
});
process.exit(result.status ?? 1);
