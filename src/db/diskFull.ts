import {statfsSync} from "node:fs";
import {getLogger} from "../log.ts";
import type {DbOp, LevelDb} from "./repository.ts";

const log = getLogger("db");

/** A write refused because the disk of the data dir is full: nothing of it was written. */
export class DiskFullError extends Error {
  readonly dir: string;
  constructor(dir: string) {
    super(`no space left on the disk of ${dir}: writes are paused (no block is imported) until space returns`);
    this.name = "DiskFullError";
    this.dir = dir;
  }
}

/** LevelDB's error for a write that found no space (its message carries the OS's ENOSPC text). */
export function isNoSpace(err: unknown): boolean {
  for (let e = err as {code?: string; message?: string; cause?: unknown} | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === "ENOSPC" || /no space left on device/i.test(e.message ?? "")) return true;
  }
  return false;
}

/** Free space needed before writes resume: a few batches of blocks and a state archive's worth. */
export const RESUME_FREE_BYTES = 256 * 1024 * 1024;

interface DiskProbe {
  freeBytes(dir: string): number;
  intervalMs: number;
}

let probe: DiskProbe = {
  freeBytes: (dir) => {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  },
  intervalMs: 5_000,
};
/** Storage failpoint for tests: an error to fail the next writes with (as a full disk would), or null. */
let storageFault: (() => Error | null) | null = null;

/** For tests: how free space is measured and how often, and a storage failpoint. */
export function setDiskProbe(next: Partial<DiskProbe>): void {
  probe = {...probe, ...next};
}
export function setStorageFault(fault: (() => Error | null) | null): void {
  storageFault = fault;
}

const paused = new WeakMap<LevelDb, {timer: NodeJS.Timeout}>();

/**
 * Writes `ops` in one batch unless the disk is full. A batch that fails for lack of space was
 * not written (LevelDB batches are whole or absent); from then on every write is refused with
 * DiskFullError without touching LevelDB (which keeps failing after such an error until it is
 * reopened), reads go on, and once the disk has space again the database is reopened and writes
 * resume. Said once when it starts and once when it ends.
 */
export async function guardedBatch(db: LevelDb, ops: DbOp[]): Promise<void> {
  if (paused.has(db)) throw new DiskFullError(db.location);
  try {
    const fault = storageFault?.();
    if (fault) throw fault;
    await db.batch(ops);
  } catch (err) {
    if (!isNoSpace(err)) throw err;
    pause(db);
    throw new DiskFullError(db.location);
  }
}

function pause(db: LevelDb): void {
  if (paused.has(db)) return;
  const dir = db.location;
  log.error({dir, freeBytes: freeBytes(dir), needBytes: RESUME_FREE_BYTES}, "the disk is full: the node stops writing (no block is imported or stored) and serves what it has; it resumes by itself once this much space is free");
  const timer = setInterval(() => {
    if (db.status !== "open" || freeBytes(dir) < RESUME_FREE_BYTES) return;
    clearInterval(timer);
    // LevelDB keeps failing writes after a failed one: reopen it before writing again
    void db
      .close()
      .then(() => db.open())
      .then(
        () => {
          paused.delete(db);
          log.info({dir, freeBytes: freeBytes(dir)}, "space is back: writes resume");
        },
        (e: unknown) => log.error({dir, err: (e as Error).message}, "could not reopen the database after the disk was full")
      );
  }, probe.intervalMs);
  timer.unref();
  paused.set(db, {timer});
}

function freeBytes(dir: string): number {
  try {
    return probe.freeBytes(dir);
  } catch {
    return 0;
  }
}

/** Whether writes to `db` are paused for lack of space. */
export function isWritePaused(db: LevelDb): boolean {
  return paused.has(db);
}

/** Stops waiting for space (the database is being closed). */
export function forgetPause(db: LevelDb): void {
  const entry = paused.get(db);
  if (!entry) return;
  clearInterval(entry.timer);
  paused.delete(db);
}
