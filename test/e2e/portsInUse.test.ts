import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {spawn} from "node:child_process";
import {type Socket as UdpSocket, createSocket} from "node:dgram";
import {once} from "node:events";
import {mkdtempSync, rmSync} from "node:fs";
import {type AddressInfo, type Server, createServer} from "node:net";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {NodeProcess} from "./nodeProcess.ts";

/**
 * A port another process holds (TCP 9000 is Lodestar's default too): the node, started as a user
 * starts it, says which option moves it in one line and exits with 1, on its own, without a
 * stack trace. The ports are held by plain sockets of this test; the processes run side by side.
 * Port 0 is any free port for every port option; discovery, which must announce its UDP port
 * before binding it, refuses 0 (its UDP port follows --tcp-port) in one line at parse time.
 */

const BIN = fileURLToPath(new URL("../../bin/beacon-gateway.js", import.meta.url));
/** a refused start takes a second or two (module loading); this only bounds a hang */
const EXIT_WITHIN_MS = 60_000;

interface Held {
  port: number;
  close(): Promise<void>;
}

async function holdTcp(): Promise<Held> {
  const server: Server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve()))};
}

async function holdUdp(): Promise<Held> {
  const socket: UdpSocket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {port: socket.address().port, close: () => new Promise((resolve) => socket.close(() => resolve()))};
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  stdout: string;
  ms: number;
}

function run(args: string[]): Promise<Run> {
  const started = Date.now();
  const proc = spawn(process.execPath, [BIN, ...args], {stdio: ["ignore", "pipe", "pipe"]});
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => proc.kill("SIGKILL"), EXIT_WITHIN_MS);
  return new Promise((resolve) =>
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({code, signal, stderr, stdout, ms: Date.now() - started});
    })
  );
}

/** The node on loopback, every port of its own free or picked by the system, then the case's options. */
const node = (dataDir: string, extra: string[]): string[] => ["node", "--data-dir", dataDir, "--listen-address", "127.0.0.1", "--no-quic", ...extra];

describe("a port in use", () => {
  const dirs: string[] = [];
  const held: Held[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "bg-ports-"));
    dirs.push(dir);
    return dir;
  };
  let cases: Array<{name: string; option: string; args: string[]}>;
  let runs: Run[];
  let discoveryOnPortZero: Run;
  /** every port option 0, started beside the refused ones */
  let anyPorts: NodeProcess;

  beforeAll(async () => {
    const portsZero = ["--tcp-port", "0", "--quic-port", "0", "--no-discovery", "--rest", "--rest-port", "0", "--rpc", "--rpc-port", "0", "--metrics", "--metrics-port", "0", "--keymanager", "--keymanager-port", "0"];
    anyPorts = new NodeProcess(node(dataDir(), portsZero));
    const [tcp, udp, rest, rpc, metrics, keymanager, engine] = await Promise.all([holdTcp(), holdUdp(), holdTcp(), holdTcp(), holdTcp(), holdTcp(), holdTcp()]);
    held.push(tcp, udp, rest, rpc, metrics, keymanager, engine);
    const p = (h: Held): string => String(h.port);
    cases = [
      {name: "libp2p TCP", option: "--tcp-port", args: node(dataDir(), ["--tcp-port", p(tcp), "--no-discovery"])},
      {name: "discovery UDP", option: "--udp-port", args: node(dataDir(), ["--tcp-port", "0", "--udp-port", p(udp)])},
      {name: "REST", option: "--rest-port", args: node(dataDir(), ["--tcp-port", "0", "--no-discovery", "--rest", "--rest-port", p(rest)])},
      {name: "JSON-RPC", option: "--rpc-port", args: node(dataDir(), ["--tcp-port", "0", "--no-discovery", "--rpc", "--rpc-port", p(rpc)])},
      {name: "metrics", option: "--metrics-port", args: node(dataDir(), ["--tcp-port", "0", "--no-discovery", "--metrics", "--metrics-port", p(metrics)])},
      {name: "keymanager", option: "--keymanager-port", args: node(dataDir(), ["--tcp-port", "0", "--no-discovery", "--keymanager", "--keymanager-port", p(keymanager)])},
      // a server that binds without the node's check beforehand: the bind's own error says it
      {name: "mock engine", option: "--port", args: ["mock-engine", "--port", p(engine), "--jwt-secret", join(dataDir(), "jwt.hex")]},
    ];
    [runs, discoveryOnPortZero] = await Promise.all([Promise.all(cases.map((c) => run(c.args))), run(node(dataDir(), ["--tcp-port", "0"]))]);
  }, 2 * EXIT_WITHIN_MS);

  afterAll(async () => {
    await anyPorts.stop("SIGKILL");
    await Promise.all(held.map((h) => h.close()));
    for (const dir of dirs) rmSync(dir, {recursive: true, force: true});
  });

  it("each start is refused with exit code 1, on its own, in one line naming the option that moves the port", () => {
    const seen = cases.map((c, i) => {
      const {code, signal, stderr} = runs[i];
      const lines = stderr.trim().split("\n");
      return {name: c.name, code, signal, lines: lines.length, namesOption: new RegExp(`in use by another process; .*${c.option}$`).test(stderr.trim()), stack: /^\s+at /m.test(stderr)};
    });
    expect(seen).toEqual(cases.map((c) => ({name: c.name, code: 1, signal: null, lines: 1, namesOption: true, stack: false})));
  });

  it("the line says which port and address", () => {
    for (const [i, c] of cases.entries()) {
      const port = c.args[c.args.indexOf(c.option) + 1];
      expect(runs[i].stderr).toMatch(new RegExp(`^beacon-gateway: .* cannot listen on port ${port} \\(127\\.0\\.0\\.1\\): it is in use`));
    }
  });

  it("the node is refused before it starts anything (no database, no chain)", () => {
    for (const [i, c] of cases.entries()) if (c.args[0] === "node") expect(runs[i].stdout).not.toMatch(/starting beacon-gateway|database opened|chain ready/);
  });

  it("--tcp-port 0 with discovery on is refused at parse time, in one line naming the way out", () => {
    const {code, signal, stderr, stdout} = discoveryOnPortZero;
    expect({code, signal, stderr, stack: /^\s+at /m.test(stderr)}).toEqual({
      code: 2,
      signal: null,
      stderr: "beacon-gateway: --udp-port: discovery needs a fixed UDP port, and it follows --tcp-port 0: give --udp-port PORT, or --no-discovery\n",
      stack: false,
    });
    expect(stdout).toBe("");
  });

  it("port 0 is any free port for every port option: the node listens on ports the system picks, and stops cleanly", async () => {
    const proc = anyPorts;
    for (const msg of ["REST API listening", "JSON-RPC listening", "metrics listening", "Keymanager API listening"]) {
      const line = await proc.waitForLog((l) => l.msg === msg, EXIT_WITHIN_MS, msg);
      expect({msg, port: line.port}).toEqual({msg, port: expect.any(Number)});
      expect(line.port).toBeGreaterThan(0);
    }
    const network = await proc.waitForLog((l) => l.msg === "network started", EXIT_WITHIN_MS, "the network");
    const ports = (network.addresses as string[]).map((a) => /^\/ip4\/127\.0\.0\.1\/(tcp|udp)\/(\d+)/.exec(a)).map((m) => [m?.[1], Number(m?.[2])]);
    expect(ports).toContainEqual(["tcp", expect.any(Number)]);
    for (const [, port] of ports) expect(port).toBeGreaterThan(0);
    expect((await proc.stop("SIGTERM")).code).toBe(0);
    expect(proc.stderr.join("")).toBe("");
  }, 2 * EXIT_WITHIN_MS);
});
