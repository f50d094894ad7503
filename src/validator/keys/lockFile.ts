import {openSync, readFileSync, renameSync, rmSync, writeSync, closeSync} from "node:fs";

/**
 * `<keystore>.lock` beside a keystore while a client signs with it (as Lighthouse and Teku keep
 * one): it holds the client's pid. A second client finding the lock of a live process refuses the
 * keystore, naming that pid; a lock whose process is gone (a client that crashed) is taken over.
 */
export class LockError extends Error {
  readonly pid: number;
  constructor(message: string, pid: number) {
    super(message);
    this.pid = pid;
  }
}

/** Whether a process with this pid runs (EPERM: it runs, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function createExclusive(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

function lockHolder(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export class KeystoreLock {
  readonly path: string;
  private released = false;

  private constructor(path: string) {
    this.path = path;
  }

  /** Takes the lock of `keystorePath`; throws LockError when a live process holds it. */
  static acquire(keystorePath: string): KeystoreLock {
    const path = `${keystorePath}.lock`;
    if (createExclusive(path)) return new KeystoreLock(path);
    const holder = lockHolder(path);
    if (holder !== null && holder !== process.pid && isAlive(holder)) {
      throw new LockError(`in use by process ${holder} (lock file ${path}); stop that client first`, holder);
    }
    // a dead (or unreadable) holder's lock: moved aside, so that of two clients taking it over at once one wins the create
    const stale = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, stale);
      rmSync(stale, {force: true});
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    if (createExclusive(path)) return new KeystoreLock(path);
    const now = lockHolder(path);
    throw new LockError(`taken by process ${now ?? "unknown"} just now (lock file ${path})`, now ?? 0);
  }

  /** Removes the lock file if it is still this process's. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (lockHolder(this.path) === process.pid) rmSync(this.path, {force: true});
  }
}
