import {generateKeyPair} from "@libp2p/crypto/keys";
import type {PeerId} from "@libp2p/interface";
import {createBeaconLibp2p, type BeaconLibp2p} from "../../../src/network/libp2p.ts";

/** The node's libp2p host on 127.0.0.1 with a fresh key: TCP on a free port, QUIC only when given a port. Not started. */
export async function loopbackHost(opts: {quicPort?: number | null; isBanned?: (id: PeerId) => boolean} = {}): Promise<BeaconLibp2p> {
  return createBeaconLibp2p({
    privateKey: (await generateKeyPair("secp256k1")).raw,
    listenAddress: "127.0.0.1",
    tcpPort: 0,
    quicPort: opts.quicPort ?? null,
    maxConnections: 10,
    gossip: {},
    isBanned: opts.isBanned ?? (() => false),
  });
}
