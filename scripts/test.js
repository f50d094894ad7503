// `npm test`: the whole suite. Jest runs our ESM TypeScript through Node's VM modules.
// The minimal preset is chosen here because @lodestar/params reads it once, at first import.
// A full run (no arguments) also type-checks the tree, beside the first part of the suite, and
// stops the suite on a type error: Node and swc only strip types, so it would otherwise pass
// unnoticed. `npm test -- <path>` runs just those tests.
//
// A full run has two parts. Most test files spend their time waiting on slots of real node
// processes, not on the CPU, so they run three at a time, even on two cores: each file took as
// long as with two at a time, and the part about 340 s instead of 470. A file that starts with
// a line `// suite: alone (why)` runs afterwards, one file at a time: devnets of several
// processes, an independent implementation on the wire, and tests whose assertions are about time.
import {spawn} from "node:child_process";
import {closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync} from "node:fs";
import {setPriority, tmpdir} from "node:os";
import {join, relative} from "node:path";
import {fileURLToPath} from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (path) => join(root, "node_modules", path);
const args = process.argv.slice(2);
/** the files of the first part that run at once */
const TOGETHER = 3;

const jestCommand = (jestArgs) => [process.execPath, ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", bin("jest/bin/jest.js"), ...jestArgs]];
const jestEnv = (env) => ({...process.env, LODESTAR_PRESET: process.env.LODESTAR_PRESET ?? "minimal", LOG_LEVEL: process.env.LOG_LEVEL ?? "WARN", ...env});

/**
 * jest in a process group of its own, so that stopping it also stops its workers and the node
 * processes its tests started (they outlive a jest killed alone). A Ctrl-C or SIGTERM to this
 * script stops the group too. `status` resolves with jest's exit status (1 when killed).
 */
function startJest(jestArgs, env = {}) {
  const child = spawn(...jestCommand(jestArgs), {stdio: "inherit", env: jestEnv(env), detached: true});
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  };
  const onSignal = (signal) => {
    stop();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  const status = new Promise((resolve) => {
    child.on("error", () => resolve(1));
    child.on("exit", (code) => resolve(code ?? 1));
  }).finally(() => process.off("SIGINT", onSignal).off("SIGTERM", onSignal));
  return {status, stop};
}

/**
 * The type check, beside the first part of the suite (it takes one core for about 15 s). Its
 * output is kept and printed only when it fails.
 */
function startTypeCheck() {
  const child = spawn(process.execPath, [bin("typescript/bin/tsc"), "--noEmit", "-p", "."], {cwd: root, stdio: ["ignore", "pipe", "pipe"]});
  const output = [];
  child.stdout.on("data", (d) => output.push(d));
  child.stderr.on("data", (d) => output.push(d));
  return new Promise((resolve) => {
    child.on("error", (e) => resolve({status: 1, output: `tsc did not start: ${e.message}`}));
    child.on("close", (code) => resolve({status: code ?? 1, output: Buffer.concat(output).toString()}));
  });
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
} else if (args.length > 0) process.exit(await startJest(args).status);
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
  const alone = filesThatRunAlone();
  const escape = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const env = {TEST_SUMMARY_DIR: summaries};
  console.log(`\n== the suite, ${TOGETHER} files at a time (all but the ${alone.length} that run alone)\n`);
  const typeCheck = startTypeCheck();
  const firstPart = startJest([`--maxWorkers=${TOGETHER}`, "--testPathIgnorePatterns", "/node_modules/", ...alone.map((path) => `/${escape(path)}$`)], env);
  const typed = await typeCheck;
  if (typed.status !== 0) {
    firstPart.stop();
    peerInstall.stop();
    await firstPart.status;
    process.stderr.write(`${typed.output}\ntype check failed: the suite is stopped\n`);
    process.exit(typed.status);
  }
  const together = await firstPart.status;
  console.log(await peerInstall.done);
  rmSync(installLog, {recursive: true, force: true});
  console.log(`\n== the ${alone.length} files that run alone, one at a time: ${alone.join(", ")}\n`);
  const apart = alone.length === 0 ? 0 : await startJest(["--runInBand", ...alone.map((path) => `/${escape(path)}$`)], env).status;

  const totals = {passed: 0, failed: 0, skipped: 0};
  for (const file of readdirSync(summaries)) {
    const part = JSON.parse(readFileSync(join(summaries, file), "utf8"));
    for (const key of Object.keys(totals)) totals[key] += part[key];
  }
  rmSync(summaries, {recursive: true, force: true});
  process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}\n`);
  process.exit(together !== 0 ? together : apart);
}
