/** How the node takes part in the p2p network (the node's command line fills these). */
export interface NetworkOptions {
  /** libp2p (TCP) and discv5 (UDP) listen address */
  listenAddress: string;
  /** libp2p TCP port; 0 for any free port */
  tcpPort: number;
  /** discv5 UDP port */
  udpPort: number;
  /** libp2p QUIC UDP port; 0 for any free port */
  quicPort: number;
  /** whether libp2p also listens and dials on QUIC (where its binding loads) */
  quic: boolean;
  /** IPv4 address advertised in the ENR (by default a specific listen address, else none) */
  enrAddress: string | undefined;
  /** discv5 bootnodes, as `enr:` text */
  bootnodes: string[];
  /** multiaddrs of peers always dialed and kept (`/ip4/…/tcp/…[/p2p/…]`) */
  directPeers: string[];
  targetPeers: number;
  maxPeers: number;
  /** whether discv5 discovery runs */
  discovery: boolean;
  /** join every attestation and sync committee subnet, and say so in the ENR and metadata */
  subscribeAllSubnets: boolean;
  /** after checkpoint sync, backfill blocks down to genesis, not only MIN_EPOCHS_FOR_BLOCK_REQUESTS back */
  backfillToGenesis: boolean;
  /** from fulu on, custody half of the custody groups: enough to rebuild every data column */
  semiSupernode: boolean;
}
