import type {PortClaim} from "../ports.ts";
import type {NodeOptions} from "./nodeOptions.ts";

/**
 * The ports `beacon-gateway node` will listen on, each with the option that moves it: checked
 * before the node's modules load (src/ports.ts), so that a taken port refuses the start in a
 * second. QUIC's port is claimed whenever QUIC is on (where its native binding does not load the
 * node listens on TCP only: `--no-quic` says so).
 */
export function nodePortClaims(opts: NodeOptions): PortClaim[] {
  const network = opts.listenAddress;
  const claims: PortClaim[] = [{what: "libp2p (TCP)", option: "--tcp-port", protocol: "tcp", port: opts.tcpPort, address: network}];
  if (opts.discovery) claims.push({what: "discovery (UDP)", option: "--udp-port", protocol: "udp", port: opts.udpPort, address: network});
  if (opts.quic) claims.push({what: "libp2p QUIC (UDP)", option: "--quic-port", protocol: "udp", port: opts.quicPort, address: network});
  if (opts.rest) claims.push({what: "the REST API", option: "--rest-port", protocol: "tcp", port: opts.restPort, address: opts.restAddress});
  if (opts.rpc) claims.push({what: "the JSON-RPC server", option: "--rpc-port", protocol: "tcp", port: opts.rpcPort, address: opts.rpcAddress});
  if (opts.metrics) claims.push({what: "the metrics server", option: "--metrics-port", protocol: "tcp", port: opts.metricsPort, address: opts.metricsAddress});
  if (opts.keymanager) claims.push({what: "the keymanager API", option: "--keymanager-port", protocol: "tcp", port: opts.keymanagerPort, address: opts.keymanagerAddress});
  return claims;
}
