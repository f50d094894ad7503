import type {NetworkOptions} from "../network/options.ts";
import {InvalidValue, type OptionTable, flag, option, repeatable} from "./optionTable.ts";
import {enrList, integer, ipAddress, ipv4Address, port, tcpMultiaddr} from "./values.ts";

/** The node's networking options (libp2p, discovery, peers, subnets); backfill's is a chain option. */
export type NetworkFields = Omit<NetworkOptions, "backfillToGenesis">;

export function networkOptions(group?: string): OptionTable<NetworkFields> {
  return {
      listenAddress: option({
        name: "listen-address",
        value: "ADDR",
        default: "0.0.0.0",
        group,
        help: "IP address libp2p (TCP) and discovery (UDP) listen on",
        parse: ipAddress,
      }),
      tcpPort: option({name: "tcp-port", value: "PORT", default: "9000", group, help: "libp2p TCP port (0: any free port; with discovery give `--udp-port` too)", parse: port}),
      udpPort: option({
        name: "udp-port",
        value: "PORT",
        defaultText: "`--tcp-port`'s value",
        group,
        help: "discovery (discv5) UDP port; discovery needs a fixed one (not 0)",
        parse: (text, ctx) => {
          const udpPort = text === undefined ? ctx.get("tcpPort") : port(text);
          // discv5 advertises its UDP port in the node's ENR before any socket is bound
          if (udpPort === 0 && ctx.get("discovery")) {
            throw new InvalidValue(text === undefined ? "discovery needs a fixed UDP port, and it follows --tcp-port 0: give --udp-port PORT, or --no-discovery" : "discovery needs a fixed UDP port: give one, or --no-discovery");
          }
          return udpPort;
        },
      }),
      quicPort: option({
        name: "quic-port",
        value: "PORT",
        defaultText: "`--tcp-port`'s value + 1 (0 when that is 0)",
        group,
        help: "libp2p QUIC (quic-v1) UDP port, where the platform has QUIC's native binding",
        parse: (text, ctx) => (text === undefined ? (ctx.get("tcpPort") === 0 ? 0 : ctx.get("tcpPort") + 1) : port(text)),
      }),
      quic: flag({
        name: "no-quic",
        group,
        help: "listen and dial on TCP only",
        parse: (set) => !set,
      }),
      enrAddress: option({
        name: "enr-address",
        value: "ADDR",
        group,
        help: "public IPv4 address advertised in the ENR, for other nodes to reach this one",
        parse: ipv4Address,
      }),
      bootnodes: repeatable({
        name: "bootnodes",
        value: "LIST",
        group,
        help: "discovery bootnodes: `enr:` records, comma-separated (the option may be repeated); added to the network's built-in ones (mainnet, sepolia, hoodi: `src/config/bootnodes/`)",
        parse: enrList,
      }),
      directPeers: repeatable({
        name: "direct-peer",
        value: "MULTIADDR",
        group,
        help: "a peer to stay connected to, e.g. `/ip4/10.0.0.2/tcp/9000/p2p/16Uiu2…` (repeat for more)",
        parse: (texts) => texts.map(tcpMultiaddr),
      }),
      targetPeers: option({name: "target-peers", value: "N", default: "50", group, help: "peers to keep connected", parse: (text) => integer(text, 0, 10_000)}),
      maxPeers: option({
        name: "max-peers",
        value: "N",
        defaultText: "`55`: `--target-peers` × 1.1, rounded up",
        group,
        help: "most peers connected at once; at least `--target-peers`",
        parse: (text, ctx) => {
          const target = ctx.get("targetPeers");
          if (text === undefined) return Math.ceil((target * 11) / 10);
          const max = integer(text, 0, 100_000);
          if (max < target) throw new InvalidValue(`${max} is below --target-peers ${target}`);
          return max;
        },
      }),
      discovery: flag({
        name: "no-discovery",
        group,
        help: "do not look for peers with discv5: connect only to direct peers and accept incoming ones",
        parse: (set) => !set,
      }),
      subscribeAllSubnets: flag({
        name: "subscribe-all-subnets",
        group,
        help: "subscribe to all attestation, sync committee and data column subnets and advertise it in the ENR and metadata; from fulu on the node is a supernode, keeping every data column",
      }),
      semiSupernode: flag({
        name: "semi-supernode",
        group,
        help: "from fulu on, custody half of the data column custody groups (64 of 128), enough to rebuild every column of a block from its own: the node rebuilds the others, serves them by root for a few blocks and can answer `getBlobs` (as Lighthouse's and Lodestar's option of this name); not with `--subscribe-all-subnets`. See docs/data-columns.md",
        parse: (set, ctx) => {
          if (set && ctx.get("subscribeAllSubnets")) throw new InvalidValue("not with --subscribe-all-subnets, whose supernode keeps every column");
          return set;
        },
      }),
  };
}
