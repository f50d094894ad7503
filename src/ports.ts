import {createSocket} from "node:dgram";
import {once} from "node:events";
import {createServer, isIPv6} from "node:net";

/**
 * A port the node is told to listen on, and the option that moves it: what a user reads when the
 * port cannot be bound (another process holds it: TCP 9000 is Lodestar's default too).
 */
export interface PortClaim {
  /** what listens there, for the message: "the REST API", "libp2p (TCP)" */
  what: string;
  /** the option that sets the port: "--rest-port" */
  option: string;
  protocol: "tcp" | "udp";
  port: number;
  address: string;
}

/** A port that cannot be bound; its message names the option to change (main.ts prints it alone, exit code 1). */
export class PortUnavailable extends Error {
  override name = "PortUnavailable";
}

/** The error a user reads for a failed bind of `claim`; other errors (a bug) as they are. */
export function portError(err: unknown, claim: Omit<PortClaim, "protocol">): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${claim.what} cannot listen on port ${claim.port} (${claim.address})`;
  if (code === "EADDRINUSE") return new PortUnavailable(`${where}: it is in use by another process; stop that, or give another port with ${claim.option}`);
  if (code === "EACCES") return new PortUnavailable(`${where}: this user may not bind it; give a port from 1024 up with ${claim.option}`);
  if (code === "EADDRNOTAVAIL") return new PortUnavailable(`${where}: ${claim.address} is not an address of this machine`);
  return err;
}

/** Binds the claimed port and lets it go at once: rejects with PortUnavailable when it cannot be bound. */
async function probe(claim: PortClaim): Promise<void> {
  try {
    if (claim.protocol === "tcp") {
      const server = createServer();
      server.listen({port: claim.port, host: claim.address, exclusive: true});
      await Promise.race([once(server, "listening"), once(server, "error").then(([e]) => Promise.reject(e))]);
      await new Promise((resolve) => server.close(resolve));
    } else {
      const socket = createSocket({type: isIPv6(claim.address) ? "udp6" : "udp4"});
      await new Promise<void>((resolve, reject) => {
        socket.once("error", reject);
        socket.bind(claim.port, claim.address, () => resolve());
      });
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    }
  } catch (e) {
    throw portError(e, claim);
  }
}

/**
 * Checks, before anything starts, that each claimed port (0: any free port, not checked) can be
 * bound now: a node refused for a taken port is refused in a second, every taken port named in
 * one line, rather than after its database and chain are up.
 */
export async function checkPortsFree(claims: PortClaim[]): Promise<void> {
  const results = await Promise.allSettled(claims.filter((c) => c.port !== 0).map(probe));
  const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (refused.length === 0) return;
  const other = refused.find((e) => !(e instanceof PortUnavailable));
  if (other) throw other;
  throw new PortUnavailable(refused.map((e) => (e as Error).message).join("; "));
}
