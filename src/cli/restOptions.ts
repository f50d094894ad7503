import {type OptionTable, flag, option} from "./optionTable.ts";
import {integer, port, serverAddress} from "./values.ts";
import {DEFAULT_CONNECTION_LIMITS} from "../api/server/limits.ts";

/** The node's REST API options (src/cli/optionTable.ts): where it listens, and what one client may ask of it. */

export interface RestFields {
  rest: boolean;
  restPort: number;
  restAddress: string;
  restAllowOrigin: string | null;
  restMaxConnections: number;
  restHeaderTimeout: number;
  restRequestTimeout: number;
  restIdleTimeout: number;
  /** MiB */
  restBodyLimit: number;
  restMaxQueryIds: number;
  restMaxBodyIds: number;
  restMaxEventStreams: number;
  /** MiB */
  restEventQueue: number;
}

export function restOptions(group?: string): OptionTable<RestFields> {
  return {
    rest: flag({name: "rest", group, help: "enable the REST API"}),
    restPort: option({name: "rest-port", value: "PORT", default: "5052", group, help: "REST port (0: any free port, logged at start)", parse: port}),
    restAddress: option({
      name: "rest-address",
      value: "ADDR",
      default: "127.0.0.1",
      group,
      help: "REST listen address; keep it local on a validating node",
      parse: serverAddress,
    }),
    restAllowOrigin: option({
      name: "rest-allow-origin",
      value: "ORIGIN",
      group,
      help: "value of `Access-Control-Allow-Origin`",
      parse: (text) => text ?? null,
    }),
    restMaxConnections: option({
      name: "rest-max-connections",
      value: "N",
      defaultText: "a quarter of the file descriptors the process may open (`ulimit -Hn`), 256 to 16384",
      group,
      help: "open REST connections at most; one more is closed at accept (keep it well under the file-descriptor limit)",
      parse: (text) => (text !== undefined ? integer(text, 1, 65536) : DEFAULT_CONNECTION_LIMITS.maxConnections),
    }),
    restHeaderTimeout: option({
      name: "rest-header-timeout",
      value: "SECONDS",
      default: "10",
      group,
      help: "seconds a client has to send its request headers; a slower (slowloris) client is dropped",
      parse: (text) => integer(text, 1, 3600),
    }),
    restRequestTimeout: option({
      name: "rest-request-timeout",
      value: "SECONDS",
      default: "30",
      group,
      help: "seconds a client has to send a whole request, body included (at least the header timeout)",
      parse: (text) => integer(text, 1, 3600),
    }),
    restBodyLimit: option({
      name: "rest-body-limit",
      value: "MIB",
      default: "20",
      group,
      help: "largest REST request body in MiB (a block with blobs is the largest a client sends); a larger one is a 413 and the connection is closed unread",
      parse: (text) => integer(text, 1, 1024),
    }),
    restMaxQueryIds: option({
      name: "rest-max-query-ids",
      value: "N",
      default: "64",
      group,
      help: "validator ids one query may name (`?id=`; the spec's maxItems is 64); more is a 414",
      parse: (text) => integer(text, 1, 1_000_000),
    }),
    restMaxBodyIds: option({
      name: "rest-max-body-ids",
      value: "N",
      default: "100000",
      group,
      help: "validator ids one POST body may name; more is a 400, before any id is read",
      parse: (text) => integer(text, 1, 10_000_000),
    }),
    restMaxEventStreams: option({
      name: "rest-max-event-streams",
      value: "N",
      default: "64",
      group,
      help: "event streams (`/eth/v1/events`) open at once; one more is a 429",
      parse: (text) => integer(text, 1, 65536),
    }),
    restEventQueue: option({
      name: "rest-event-queue",
      value: "MIB",
      default: "4",
      group,
      help: "MiB of events queued for one event-stream client that reads too slowly; past it the client is dropped",
      parse: (text) => integer(text, 1, 1024),
    }),
    restIdleTimeout: option({
      name: "rest-idle-timeout",
      value: "SECONDS",
      default: "5",
      group,
      help: "seconds a kept-alive REST connection may sit idle between requests",
      parse: (text) => integer(text, 1, 3600),
    }),
  };
}
