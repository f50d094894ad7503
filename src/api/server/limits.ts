import {readFileSync} from "node:fs";
import type {RequestListener, Server} from "node:http";
import {http} from "../../nodeHttp.ts";

/**
 * What one HTTP server (REST or JSON-RPC) lets a client hold: connections, time to send the
 * headers and the whole request, time a kept-alive connection may sit idle. A slow client
 * (slowloris) is dropped once the header or request timeout passes.
 */
export interface ConnectionLimits {
  /** open connections at most; more are refused at accept (kept well under the process's file descriptors) */
  maxConnections: number;
  /** seconds a client has to send the request headers */
  headerTimeoutSeconds: number;
  /** seconds a client has to send the whole request, body included */
  requestTimeoutSeconds: number;
  /** seconds a kept-alive connection may sit idle between requests */
  idleTimeoutSeconds: number;
}

/**
 * Connections at most when none is given: a quarter of the file descriptors the process may open,
 * 256 to 16,384. Node raises its soft limit to the hard one at start, so that is a quarter of the
 * hard limit (`ulimit -Hn`: often 524,288 under systemd, 1,048,576 in containers), not of the
 * 1024 a shell's soft limit often shows; the other three quarters stay for the database's files,
 * peers, the JSON-RPC server and the rest. Read from /proc/self/limits; 512 where there is none.
 */
export function defaultMaxConnections(procLimits: string | null = readProcLimits()): number {
  const soft = procLimits === null ? undefined : /^Max open files\s+(\d+|unlimited)\s/m.exec(procLimits)?.[1];
  if (soft === undefined) return FALLBACK_MAX_CONNECTIONS;
  const descriptors = soft === "unlimited" ? Infinity : Number(soft);
  return Math.max(256, Math.min(16_384, Math.floor(descriptors / 4)));
}

const FALLBACK_MAX_CONNECTIONS = 512;

function readProcLimits(): string | null {
  try {
    return readFileSync("/proc/self/limits", "utf8");
  } catch {
    return null;
  }
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: defaultMaxConnections(),
  headerTimeoutSeconds: 10,
  requestTimeoutSeconds: 30,
  idleTimeoutSeconds: 5,
};

/** The longest value echoed back in an error message; longer input is cut with "…". */
export const MAX_ECHOED_CHARS = 256;

/** `text`, cut to at most `max` characters (a client's input echoed in an error must not echo megabytes). */
export function truncateEcho(text: string, max = MAX_ECHOED_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/** An HTTP server that enforces the limits. */
export function createLimitedServer(handler: RequestListener, limits: Partial<ConnectionLimits> = {}): Server {
  // a limit left undefined keeps its default
  const given = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  const l: ConnectionLimits = {...DEFAULT_CONNECTION_LIMITS, ...given};
  const headersTimeout = l.headerTimeoutSeconds * 1000;
  const server = http.createServer(
    {
      headersTimeout,
      // Node requires requestTimeout >= headersTimeout (when both are set)
      requestTimeout: Math.max(headersTimeout, l.requestTimeoutSeconds * 1000),
      keepAliveTimeout: l.idleTimeoutSeconds * 1000,
      // how often the timeouts above are checked (Node's default, 30 s, would let a slow client stay that long)
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
    handler,
  );
  server.maxConnections = l.maxConnections;
  return server;
}
