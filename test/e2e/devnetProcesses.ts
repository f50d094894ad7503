import {afterAll} from "@jest/globals";
import {writeFileSync} from "node:fs";
import {join} from "node:path";
import {NodeProcess, tempDataDir} from "./nodeProcess.ts";

/** The processes of one devnet test file and their data directories. */
export interface DevnetProcesses {
  /** a data directory for each name given, in that order */
  dirs: string[];
  /** Starts a beacon-gateway process (nodeProcess.ts), killed after the file's tests. */
  start(args: string[], env?: Record<string, string>): NodeProcess;
}

/**
 * A devnet of node processes for a test file: one data directory per name (`prefix-name`), and
 * once the file's tests are done, every process started is killed (SIGKILL: nothing of them is
 * asserted any more) and every directory removed. Call it in the body of a `describe`.
 */
export function devnetProcesses(prefix: string, names: string[]): DevnetProcesses {
  const dirs = names.map((name) => tempDataDir(`${prefix}-${name}`));
  const procs: NodeProcess[] = [];
  afterAll(async () => {
    for (const proc of procs) await proc.stop("SIGKILL");
    for (const dir of dirs) dir.remove();
  });
  return {
    dirs: dirs.map((d) => d.dir),
    start(args, env = {}) {
      const proc = new NodeProcess(args, env);
      procs.push(proc);
      return proc;
    },
  };
}

/**
 * The genesis state a node serves (SSZ, as any node exports it), written to `genesis.ssz` in
 * `dir`: other nodes started with `--genesis-state` on it are on the same chain. Gives the file.
 */
export async function saveGenesisState(url: string, dir: string): Promise<string> {
  const res = await fetch(`${url}/eth/v2/debug/beacon/states/genesis`, {headers: {accept: "application/octet-stream"}});
  if (res.status !== 200) throw new Error(`${url} answered ${res.status} for its genesis state`);
  const file = join(dir, "genesis.ssz");
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  return file;
}
