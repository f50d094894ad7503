import {afterAll, describe, expect, it} from "@jest/globals";
import {spawn, type ChildProcess} from "node:child_process";
import {createServer} from "node:net";
import {fileURLToPath} from "node:url";
import {chainView, getJson, tempDataDir, waitFor} from "./nodeProcess.ts";

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));

/** A base port whose next `count` ports are free now on loopback. */
async function freePortRange(count: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer().once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ports = Array.from({length: count}, (_, i) => base + i);
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return base;
  }
  throw new Error("no free port range");
}

/** `beacon-gateway devnet` as a user runs it: its stdout lines, and its exit. */
function startDevnet(args: string[]) {
  const proc: ChildProcess = spawn(process.execPath, [BIN, "devnet", ...args], {stdio: ["ignore", "pipe", "pipe"]});
  const lines: string[] = [];
  let stderr = "";
  proc.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return {proc, lines, exited, stderr: () => stderr};
}

describe("beacon-gateway devnet", () => {
  const data = tempDataDir("devnet-command");
  const running: ChildProcess[] = [];
  afterAll(() => {
    for (const proc of running) proc.kill("SIGKILL");
    data.remove();
  });

  it(
    "runs two nodes on one chain that peer and agree, reports them each epoch, stops on SIGTERM and continues the chain when started again",
    async () => {
      const [restBase, tcpBase] = [await freePortRange(2), await freePortRange(2)];
      const args = ["--nodes", "2", "--seconds-per-slot", "2", "--data-dir", data.dir, "--rest-port", String(restBase), "--tcp-port", String(tcpBase)];
      const first = startDevnet(args);
      running.push(first.proc);
      const urls = [`http://127.0.0.1:${restBase}`, `http://127.0.0.1:${restBase + 1}`];
      await waitFor("both nodes listed", 120_000, async () => (first.lines.filter((l) => /^node \d: REST /.test(l)).length === 2 ? true : null));
      expect(first.lines).toContain(`node 1: REST ${urls[1]}, log ${data.dir}/node-1.log`);

      // one chain: the same genesis, connected, and the same head once blocks flow
      const genesis = await Promise.all(urls.map(async (u) => (await chainView(u)).genesisValidatorsRoot));
      expect(genesis[0]).toBe(genesis[1]);
      await waitFor("the nodes to peer and agree on a head past slot 4", 60_000, async () => {
        const [a, b] = await Promise.all(urls.map(chainView));
        const peers = (await getJson(urls[1], "/eth/v1/node/peer_count")).body.data.connected;
        return a.headSlot > 4 && a.headRoot === b.headRoot && peers === "1" ? true : null;
      });
      // the epoch report names both nodes
      await waitFor("an epoch report", 40_000, async () => (first.lines.some((l) => /^node 1: head \d+ 0x[0-9a-f]{8}, finalized epoch \d+, peers 1$/.test(l)) ? true : null));
      const before = await chainView(urls[0]);

      first.proc.kill("SIGTERM");
      expect(await first.exited).toBe(0);
      await expect(fetch(`${urls[0]}/eth/v1/node/version`)).rejects.toThrow();

      const second = startDevnet(args);
      running.push(second.proc);
      await waitFor("the devnet to start again", 120_000, async () => (second.lines.filter((l) => /^node \d: REST /.test(l)).length === 2 ? true : null));
      const after = await chainView(urls[1]);
      expect(after.genesisTime).toBe(before.genesisTime);
      await waitFor("the chain to continue", 60_000, async () => ((await chainView(urls[1])).headSlot > before.headSlot + 2 ? true : null));
      second.proc.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    },
    360_000
  );
});
