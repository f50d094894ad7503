// Which code the launcher runs: the JavaScript build in dist/ (`npm run build`, which `npm ci`
// runs), when it is at least as new as every TypeScript source it was built from; otherwise the
// sources themselves, through Node's type stripping. The build saves what type stripping keeps
// loaded for the life of the process (its compiler, about 20 MiB of RSS), and a build older
// than an edited source is never run. BEACON_GATEWAY_FROM_SOURCE=1 always runs the sources.
import {readdirSync, statSync} from "node:fs";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const SOURCE_DIRS = ["src", "compat"];

/** The newest modification time of the .ts files under `dir`, recursively (0 for none). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether the build under `root`/dist is there and no older than any source under `root`. */
export function buildIsCurrent(root, env = process.env) {
  if (env.BEACON_GATEWAY_FROM_SOURCE) return false;
  let built;
  try {
    built = statSync(join(root, "dist", "src", "cli", "main.js")).mtimeMs;
  } catch {
    return false;
  }
  return SOURCE_DIRS.every((dir) => newestSource(join(root, dir)) <= built);
}

/** The URL of the module to import for `source` (a path under the root, `src/cli/main.ts`). */
export function entryUrl(root, source, useBuild) {
  const path = useBuild ? join(root, "dist", source.replace(/\.ts$/, ".js")) : join(root, source);
  return pathToFileURL(path).href;
}
