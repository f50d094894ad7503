// `npm test`: the whole suite. Jest runs our ESM TypeScript through Node's VM modules.
// The minimal preset is chosen here because @lodestar/params reads it once, at first import.
// A full run (no arguments) type-checks the tree first: Node and swc only strip types, so a
// type error would otherwise pass unnoticed. `npm test -- <path>` runs just those tests.
//
// A full run has two parts. Most test files spend their time waiting on slots of real node
// processes, not on the CPU, so they run two at a time. A file that starts with a line
// `// suite: alone (why)` runs afterwards, one file at a time: devnets of several processes,
// an independent implementation on the wire, and tests whose assertions are about time.
import {spawn, spawnSync} from "node:child_process";
import {closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync} from "node:fs";
import {setPriority, tmpdir} from "node:os";
import {join, relative} from "node:path";
import {fileURLToPath} from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (path) => join(root, "node_modules", path);
const args = process.argv.slice(2);

function jest(jestArgs, env = {}) {
  const result = spawnSync(process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", bin("jest/bin/jest.js"), ...jestArgs], {
    stdio: "inherit",
    env: {...process.env, LODESTAR_PRESET: process.env.LODESTAR_PRESET ?? "minimal", LOG_LEVEL: process.env.LOG_LEVEL ?? "WARN", ...env},
  });
  return result.status ?? 1;
}

/** The test files marked to run one at a time, relative to the project root. */
export function filesThatRunAlone() {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, {withFileTypes: true})) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".test.ts") && /^\/\/ suite: alone\b/m.test(readFileSync(path, "utf8").slice(0, 2000))) found.push(relative(root, path));
    }
  };
  walk(join(root, "test"));
  return found.sort();
}

if (process.argv[1] !== fileURLToPath(import.meta.url)) {
  // imported (by a test of this file): only the exports
} else if (args.length > 0) process.exit(jest(args));
else await runAll();

/**
 * The interop tests' Lodestar peer, installed in a process of its own at the lowest CPU priority
 * (nice 19, inherited by its npm and node-gyp children) while tsc checks the tree and the first
 * part of the suite runs: only files of the part that runs alone use it, and those tests wait on
 * slots far more than they compute, so the install takes the CPU they leave idle and none of
 * theirs. Its output goes to a file (a pipe would fill while this process waits on jest), printed
 * once it is done; it is waited for before the files that run alone start.
 */
function startPeerInstall(logDir) {
  const logFile = join(logDir, "lodestar-peer-install.log");
  const out = openSync(logFile, "w");
  const child = spawn(process.execPath, [join(root, "test/interop/installPeer.ts")], {cwd: root, stdio: ["ignore", out, out]});
  closeSync(out);
  try {
    setPriority(child.pid, 19);
  } catch {
    // not permitted: it installs at the suite's priority
  }
  const done = new Promise((resolve) => {
    child.on("error", (e) => resolve(`Lodestar peer install did not start: ${e.message}`));
    child.on("exit", () => resolve(readFileSync(logFile, "utf8").trim().split("\n").slice(-5).join("\n")));
  });
  return {done, stop: () => child.kill()};
}

async function runAll() {
  const summaries = mkdtempSync(join(tmpdir(), "test-summary-"));
  const installLog = mkdtempSync(join(tmpdir(), "test-peer-install-"));
  const peerInstall = startPeerInstall(installLog);
  const tsc = spawnSync(process.execPath, [bin("typescript/bin/tsc"), "--noEmit", "-p", "."], {stdio: "inherit", cwd: root});
  if (tsc.status !== 0) {
    peerInstall.stop();
    console.error("type check failed: tests not run");
    process.exit(tsc.status ?? 1);
  }

  const alone = filesThatRunAlone();
  const escape = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const env = {TEST_SUMMARY_DIR: summaries};
  console.log(`\n== the suite, two files at a time (all but the ${alone.length} that run alone)\n`);
  const together = jest(["--maxWorkers=2", "--testPathIgnorePatterns", "/node_modules/", ...alone.map((path) => `/${escape(path)}$`)], env);
  console.log(await peerInstall.done);
  rmSync(installLog, {recursive: true, force: true});
  console.log(`\n== the ${alone.length} files that run alone, one at a time: ${alone.join(", ")}\n`);
  const apart = alone.length === 0 ? 0 : jest(["--runInBand", ...alone.map((path) => `/${escape(path)}$`)], env);

  const totals = {passed: 0, failed: 0, skipped: 0};
  for (const file of readdirSync(summaries)) {
    const part = JSON.parse(readFileSync(join(summaries, file), "utf8"));
    for (const key of Object.keys(totals)) totals[key] += part[key];
  }
  rmSync(summaries, {recursive: true, force: true});
  process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}\n`);
  process.exit(together !== 0 ? together : apart);
}
