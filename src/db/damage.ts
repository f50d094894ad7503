import {existsSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {basename, dirname, join} from "node:path";

/**
 * A damaged database, named for the operator: which file or key, what it means, and the way
 * back. Thrown by `BeaconDb.open` and by reads; the command line prints its message alone
 * (no stack) and exits with status 1.
 */
export class DbDamagedError extends Error {
  /** the LevelDB directory */
  readonly dir: string;
  /** what is damaged, one short line per item (a file, a key) */
  readonly damage: string[];

  constructor(dir: string, damage: string[]) {
    super(`the database in ${dir} is damaged: ${damage.join("; ")}. Stop the node and run \`beacon-gateway db check --data-dir ${nodeDataDir(dir)}\`, then \`beacon-gateway db repair --data-dir ${nodeDataDir(dir)}\``);
    this.name = "DbDamagedError";
    this.dir = dir;
    this.damage = damage;
  }
}

/** The node data dir holding the LevelDB directory `dir` (`<data dir>/beacon`). */
export function nodeDataDir(dbDir: string): string {
  return basename(dbDir) === "beacon" ? dirname(dbDir) : dbDir;
}

interface LevelError {
  code?: string;
  message?: string;
  cause?: unknown;
}

/** LevelDB's own words for damage: a checksum or format error, or a file it cannot read (truncated, missing). */
const DAMAGE = /corruption|checksum|corrupted|bad magic|truncated|no such file|missing files|invalid argument|not an sstable/i;

/**
 * What damage a LevelDB error reports, as one line naming the file when LevelDB names it, or
 * null when the error is not damage (the database is held by another process, a bug...).
 */
export function describeLevelDamage(err: unknown): string | null {
  const chain: LevelError[] = [];
  for (let e = err as LevelError | undefined; e && chain.length < 4; e = e.cause as LevelError | undefined) chain.push(e);
  const damaged = chain.find((e) => e.code === "LEVEL_CORRUPTION" || (e.code === "LEVEL_IO_ERROR" && DAMAGE.test(e.message ?? "")) || (e.code === undefined && DAMAGE.test(e.message ?? "")));
  if (!damaged) return null;
  const message = damaged.message ?? String(damaged);
  const file = /([^\s:]*\/)?(\d{6}\.(ldb|sst|log)|MANIFEST-\d+|CURRENT)\b/.exec(message)?.[0];
  return file ? `${meaningOf(basename(file))} ${basename(file)} is unreadable (${message})` : `LevelDB reports ${message}`;
}

/** An open that fails on damage without a file named: LevelDB was reading the manifest (named in CURRENT) or the write-ahead log. */
export function describeOpenDamage(err: unknown, dir: string): string | null {
  const damage = describeLevelDamage(err);
  if (damage === null || !damage.startsWith("LevelDB reports")) return damage;
  let manifest = "the manifest";
  try {
    manifest = `the manifest ${readFileSync(join(dir, "CURRENT"), "utf8").trim()}`;
  } catch {
    manifest = "the manifest (CURRENT is unreadable)";
  }
  return `${damage}, while opening: ${manifest} or the write-ahead log is damaged`;
}

function meaningOf(file: string): string {
  if (file.startsWith("MANIFEST")) return "the manifest (the list of the database's table files)";
  if (file === "CURRENT") return "the pointer to the current manifest";
  if (file.endsWith(".log")) return "the write-ahead log (the latest writes)";
  return "the table file";
}

/** LevelDB's info log line when it skipped part of a damaged write-ahead log while opening. */
const DROPPED = /(\S+\.log): dropping (\d+) bytes; (Corruption: [^\n]*)/g;

/**
 * Damage LevelDB recovered from by itself while opening (it does not fail then): parts of a
 * write-ahead log it skipped because their checksum was wrong. Those writes are lost; read from
 * its info log (`LOG`), which LevelDB starts afresh at each open.
 */
export function droppedLogRecords(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "LOG"), "utf8");
  } catch {
    return [];
  }
  return [...text.matchAll(DROPPED)].map((m) => `the write-ahead log ${basename(m[1])} was damaged: LevelDB dropped ${m[2]} bytes of recent writes (${m[3]})`);
}

/**
 * Damage found once is recorded in this file beside the database, so that it is not forgotten
 * at the next start (LevelDB heals a damaged log by dropping it): the node refuses to start
 * until `db repair` has run.
 */
const MARK = "DAMAGED";

export function markDamaged(dir: string, damage: string[]): void {
  writeFileSync(join(dir, MARK), damage.join("\n") + "\n");
}

/** The damage recorded by `markDamaged`, or null. */
export function recordedDamage(dir: string): string[] | null {
  const file = join(dir, MARK);
  if (!existsSync(file)) return null;
  return readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0);
}

export function clearDamageMark(dir: string): void {
  rmSync(join(dir, MARK), {force: true});
}
