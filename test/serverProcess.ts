import {type ChildProcess, spawn} from "node:child_process";
import type {Readable} from "node:stream";

/*
 * A server process started from the command line, waited for until it listens: the node (its
 * log line "REST API listening" gives the port) or any script that logs a JSON line with its
 * port. Shared by the e2e tests (test/e2e/nodeProcess.ts) and the benches (bench/).
 */

/** The node's log line once its REST API listens (with `port`). */
export const REST_LISTENING = "REST API listening";

export interface LogLine {
  level: number;
  topic?: string;
  msg: string;
  [key: string]: unknown;
}

/** Calls `onLine` with each line of `stream`, parsed as a JSON log line (a line that is not JSON: as its text, at info level). */
export function readLogLines(stream: Readable, onLine: (line: LogLine) => void): void {
  let buffer = "";
  stream.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = {level: 30, msg: text};
      }
      onLine(line);
    }
  });
}

export interface ListeningProcess {
  proc: ChildProcess;
  /** the port from the ready line */
  port: number;
  /** every JSON log line so far (it keeps growing) */
  logs: LogLine[];
  /** SIGTERM (or `signal`), resolved once it has exited */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `node <args>` (this Node) and resolves once it logs the `ready` line with its port;
 * rejects if it exits first. stderr goes to this process's (`inherit`) unless piped.
 */
export function startListening(args: string[], opts: {ready?: string; stderr?: "inherit" | "pipe"; env?: NodeJS.ProcessEnv} = {}): Promise<ListeningProcess> {
  const ready = opts.ready ?? REST_LISTENING;
  const proc = spawn(process.execPath, args, {stdio: ["ignore", "pipe", opts.stderr ?? "inherit"], env: opts.env ?? process.env});
  const logs: LogLine[] = [];
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const stop = async (signal: NodeJS.Signals = "SIGTERM"): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    proc.once("exit", (code, signal) => reject(new Error(`${args.join(" ")} exited (${code ?? signal}) before listening`)));
    readLogLines(proc.stdout!, (line) => {
      logs.push(line);
      if (line.msg === ready && line.port !== undefined) resolve({proc, port: Number(line.port), logs, stop});
    });
  });
}
