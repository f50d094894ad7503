import {createServer, type IncomingMessage, type Server, type ServerResponse} from "node:http";
import type {AddressInfo} from "node:net";
import {toHex} from "@lodestar/utils";

/**
 * A beacon node over real HTTP that answers the few routes the beacon node failover is tested
 * with: its sync status (as set), genesis, the head block root (its own, so a test sees which
 * node answered), and two publications (fee recipients, sync committee messages), recorded.
 * `behaviour` makes it answer an error or never answer; `stop` closes its port (connections
 * refused), `start` opens the same port again.
 */
export interface SyncFlags {
  is_syncing: boolean;
  is_optimistic: boolean;
  el_offline: boolean;
}

export class FakeBeaconNode {
  readonly headRoot: Uint8Array;
  genesisValidatorsRoot: Uint8Array;
  sync: SyncFlags = {is_syncing: false, is_optimistic: false, el_offline: false};
  /** answer; answer 500 (every route but the sync status and genesis); or never answer (every route) */
  behaviour: "ok" | "error" | "hang" = "ok";
  /** `METHOD path` of every request, in order */
  readonly requests: string[] = [];
  /** bodies of the publications received */
  readonly published: string[] = [];
  /** requests left without an answer (behaviour "hang") */
  readonly hanging: ServerResponse[] = [];
  private server: Server | null = null;
  private port = 0;

  constructor(id: number, genesisValidatorsRoot: Uint8Array) {
    this.headRoot = new Uint8Array(32).fill(id);
    this.genesisValidatorsRoot = genesisValidatorsRoot;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Closes the port and every connection: requests are refused from now on. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const res of this.hanging.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  count(path: string): number {
    return this.requests.filter((r) => r.endsWith(` ${path}`)).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0];
    this.requests.push(`${req.method} ${path}`);
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const json = (status: number, value?: unknown) => res.writeHead(status, {"content-type": "application/json"}).end(value === undefined ? undefined : JSON.stringify(value));
    if (this.behaviour === "hang") return void this.hanging.push(res);
    if (path === "/eth/v1/node/syncing") return void json(200, {data: {head_slot: "10", sync_distance: "0", ...this.sync}});
    if (path === "/eth/v1/beacon/genesis") {
      return void json(200, {data: {genesis_time: "0", genesis_validators_root: toHex(this.genesisValidatorsRoot), genesis_fork_version: "0x00000000"}});
    }
    if (this.behaviour === "error") return void json(500, {code: 500, message: "internal error"});
    if (path === "/eth/v1/beacon/blocks/head/root") return void json(200, {execution_optimistic: false, finalized: false, data: {root: toHex(this.headRoot)}});
    if (path === "/eth/v1/validator/prepare_beacon_proposer" || path === "/eth/v1/beacon/pool/sync_committees") {
      this.published.push(body);
      return void json(200);
    }
    json(404, {code: 404, message: `no route ${path}`});
  }
}
