import {once} from "node:events";
import type {Server} from "node:http";
import type {AddressInfo} from "node:net";
import {type PortClaim, portError} from "./ports.ts";

export interface ListeningServer {
  /** the port bound (the one picked when 0 was asked for) */
  port: number;
  /** stops accepting, ends open connections, resolves once closed */
  close(): Promise<void>;
}

/**
 * Binds an HTTP server; rejects if the address cannot be bound (in use, not local, ...): with
 * `claim` (what listens, and its port option), as a PortUnavailable that names the option.
 */
export async function listen(server: Server, port: number, address: string, claim?: Pick<PortClaim, "what" | "option">): Promise<ListeningServer> {
  server.listen(port, address);
  try {
    await Promise.race([once(server, "listening"), once(server, "error").then(([err]) => Promise.reject(err))]);
  } catch (e) {
    throw claim ? portError(e, {...claim, port, address}) : e;
  }
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
