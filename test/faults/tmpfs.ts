import {spawn, spawnSync, type ChildProcess} from "node:child_process";
import {closeSync, mkdtempSync, openSync, rmSync, writeSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";

/**
 * Small filesystems that really fill up, for the full-disk tests: tmpfs mounts in a mount
 * namespace of the test's own (`unshare -m`, as root), so nothing outside it sees them. A node
 * joins the namespace with NodeProcess's `mountNamespaceOf: ns.pid`, and the test reaches the
 * files from outside through /proc/<pid>/root.
 */

/** Whether this machine lets the tests mount a tmpfs in a namespace of their own (root, unshare). */
export const canMountTmpfs = spawnSync("unshare", ["-m", "--", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"], {encoding: "utf8"}).status === 0;

export class TmpfsNamespace {
  /** the directory the first tmpfs is mounted on (inside the namespace; empty outside it) */
  readonly mountPoint: string;
  private readonly holder: ChildProcess;

  private constructor(mountPoint: string, holder: ChildProcess) {
    this.mountPoint = mountPoint;
    this.holder = holder;
  }

  /**
   * A namespace whose `mountPoint` is a tmpfs of `size` (as mount takes it: "320m"), with more
   * tmpfs mounted under it at `nested` (paths relative to the mount point), so that one part of
   * a data dir can fill while another stays free.
   */
  static async open(size: string, nested: {path: string; size: string}[] = []): Promise<TmpfsNamespace> {
    const mountPoint = mkdtempSync(join(tmpdir(), "bg-tmpfs-"));
    const mounts = [`mount -t tmpfs -o size=${size} tmpfs "$0"`, ...nested.map((n) => `mkdir -p "$0/${n.path}" && mount -t tmpfs -o size=${n.size} tmpfs "$0/${n.path}"`)].join(" && ");
    // the namespace lives as long as this holder
    const holder = spawn("unshare", ["-m", "--", "sh", "-c", `${mounts} && echo mounted && exec sleep 100000`, mountPoint], {stdio: ["ignore", "pipe", "inherit"]});
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.once("data", () => resolve());
      holder.once("exit", (code) => reject(new Error(`the tmpfs could not be mounted (${code})`)));
    });
    return new TmpfsNamespace(mountPoint, holder);
  }

  /** the holder's pid, for `mountNamespaceOf` and `nsenter -t` */
  get pid(): number {
    return this.holder.pid!;
  }

  /** `path` (absolute, as seen inside the namespace) as seen from outside it */
  inside(path: string): string {
    return `/proc/${this.holder.pid}/root${path}`;
  }

  close(): void {
    this.holder.kill("SIGKILL");
    rmSync(this.mountPoint, {recursive: true, force: true});
  }
}

/** Writes `file` until its filesystem has no space left (whoever else writes there meanwhile too). */
export function fillUp(file: string): void {
  const fd = openSync(file, "w");
  try {
    for (const chunk of [Buffer.alloc(1024 * 1024), Buffer.alloc(4096)]) {
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
