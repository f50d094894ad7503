import {Discv5, multiaddrFromSocketAddress, type IDiscv5CreateOptions} from "@chainsafe/discv5";
import {ENR} from "@chainsafe/enr";
import {privateKeyFromRaw} from "@libp2p/crypto/keys";
import {ssz} from "@lodestar/types";
import type {EventEmitter} from "node:events";
import {isIPv4, isIPv6} from "node:net";
import {multiaddr} from "@multiformats/multiaddr";
import {getLogger} from "../log.ts";
import type {NodeIdentity} from "./identity.ts";

/**
 * Peer discovery over discv5 (phase0 p2p spec, "The discovery domain: discv5").
 *
 * The node's record in discv5 is the identity's own `SignableENR` object (one source of
 * truth): discv5 serves and pings with whatever entries and sequence number the identity gives
 * it. The network layer sets the ENR's addresses through `identity.setAddresses`. Only a record
 * with no IP at start (no `--enr-address`, a wildcard listen address) is written by discv5: the
 * address the peers' PONGs agree on (`addrVotesToUpdateEnr` of them, 10 by default), its IP and
 * UDP port, as Lodestar does; `onExternalAddress` then gives the rest of the record that IP.
 *
 * Found records are reported to `onPeer` when they can be dialled (an `ip`/`tcp` or `ip6`/`tcp6`
 * pair, or the same with `quic`) and their `eth2` entry carries our current fork digest; others
 * are ignored.
 */

const log = getLogger("network");

/**
 * After a search that no node answered (bootnodes down or unreachable, no network), the next
 * waits this long, doubled after each further silent search, up to the maximum.
 */
export const SILENT_RETRY_FIRST_MS = 10_000;
export const SILENT_RETRY_MAX_MS = 5 * 60_000;
const LOOKUP_TIMEOUT_MS = 10_000;

export interface DiscoveredPeer {
  /** libp2p peer id */
  peerId: string;
  /** `/ip4/<ip>/tcp/<port>/p2p/<peerId>` (or `/ip6/...`); null when the record has no TCP port */
  multiaddrTCP: string | null;
  /** `/ip4/<ip>/udp/<port>/quic-v1/p2p/<peerId>` (or `/ip6/...`) when the record has a `quic` port */
  multiaddrQUIC: string | null;
  /** the record, `enr:...` */
  enr: string;
}

/** Subnets a peer must advertise (at least one of) to be reported. */
export interface SubnetWanted {
  attnets?: number[];
  syncnets?: number[];
}

export interface DiscoveryOptions {
  identity: NodeIdentity;
  /** the node key (32 raw bytes); optional, as it is the identity's: checked to be that one */
  privateKey?: Uint8Array;
  /** IPv4 or IPv6 address the UDP socket binds to (`0.0.0.0`, `127.0.0.1`, `::`) */
  bindAddress: string;
  /** a real port: 0 would bind somewhere no ENR says */
  udpPort: number;
  bootEnrs: string[];
  /** the node's current fork digest (wall clock) */
  forkDigest(): Uint8Array;
  onPeer(peer: DiscoveredPeer): void;
  /** random lookups one `findPeers` runs at most (default 4) */
  maxLookups?: number;
  /** discv5 settings beyond ours (timeouts) */
  discv5Config?: IDiscv5CreateOptions["config"];
  /** the address peers see this node at, learnt when the ENR had none (see the class) */
  onExternalAddress?(address: {ip: string; udp: number}): void;
  /** milliseconds now, for the retry backoff (the wall clock by default) */
  now?: () => number;
}

/**
 * The peer `enr` stands for when it can be dialled (over TCP or QUIC), is on our fork digest and
 * has one of the wanted subnets; null otherwise.
 */
export function eth2PeerOf(enr: ENR, forkDigest: Uint8Array, wanted?: SubnetWanted): DiscoveredPeer | null {
  const eth2 = enr.kvs.get("eth2");
  if (eth2 === undefined || eth2.length !== ssz.phase0.ENRForkID.fixedSize) return null;
  if (!eth2.subarray(0, 4).every((b, i) => b === forkDigest[i])) return null;
  if (wanted && !advertisesAny(enr, wanted)) return null;
  const tcp = transportAddress(enr, "tcp");
  const quic = transportAddress(enr, "quic");
  if (tcp === null && quic === null) return null;
  const peerId = enr.peerId.toString();
  return {
    peerId,
    multiaddrTCP: tcp === null ? null : `${tcp}/p2p/${peerId}`,
    multiaddrQUIC: quic === null ? null : `${quic}/quic-v1/p2p/${peerId}`,
    enr: enr.encodeTxt(),
  };
}

/**
 * Where to dial a discovered peer, in order: over QUIC first when both ends have it (the p2p
 * spec's preferred transport where available: no TCP handshake plus noise and muxer
 * negotiation), else, or when that fails, over TCP.
 */
export function dialAddresses(peer: DiscoveredPeer, weHaveQuic: boolean): string[] {
  return [weHaveQuic ? peer.multiaddrQUIC : null, peer.multiaddrTCP].filter((a): a is string => a !== null);
}

/** Dials a discovered peer at its addresses in `dialAddresses`' order until one connects; resolves to that address, or null. */
export async function dialDiscovered(peer: DiscoveredPeer, weHaveQuic: boolean, dial: (address: string) => Promise<unknown>): Promise<string | null> {
  for (const address of dialAddresses(peer, weHaveQuic)) {
    try {
      await dial(address);
      return address;
    } catch (e) {
      log.debug({address, err: (e as Error).message}, "discovered peer not reachable there");
    }
  }
  return null;
}

/**
 * `/ip4/<ip>/tcp|udp/<port>`, else `/ip6/<ip6>/tcp|udp/<port6 or port>` (EIP-778: `tcp` serves
 * both unless `tcp6` is given; the same for `quic`/`quic6`, whose port is UDP); null when the
 * entries are missing or malformed.
 */
function transportAddress(enr: ENR, key: "tcp" | "quic"): string | null {
  const port = (name: string): number | null => {
    const bytes = enr.kvs.get(name);
    if (bytes === undefined || bytes.length === 0 || bytes.length > 2) return null;
    const value = bytes.reduce((acc, b) => acc * 256 + b, 0);
    return value === 0 ? null : value;
  };
  const protocol = key === "tcp" ? "tcp" : "udp";
  const ip4 = enr.kvs.get("ip");
  const port4 = port(key);
  if (ip4?.length === 4 && port4 !== null) return `/ip4/${ip4.join(".")}/${protocol}/${port4}`;
  const ip6 = enr.kvs.get("ip6");
  const port6 = port(`${key}6`) ?? port4;
  if (ip6?.length === 16 && port6 !== null) return `/ip6/${enr.ip6}/${protocol}/${port6}`;
  return null;
}

function advertisesAny(enr: ENR, wanted: SubnetWanted): boolean {
  const has = (key: string, subnets: number[] | undefined, bytes: number): boolean => {
    const field = enr.kvs.get(key);
    if (!subnets || subnets.length === 0 || field === undefined || field.length !== bytes) return false;
    return subnets.some((i) => ((field[Math.floor(i / 8)] >> i % 8) & 1) === 1);
  };
  return has("attnets", wanted.attnets, ssz.phase0.AttestationSubnets.fixedSize) || has("syncnets", wanted.syncnets, ssz.altair.SyncSubnets.fixedSize);
}

export class Discovery {
  private readonly opts: DiscoveryOptions;
  private readonly discv5: Discv5;
  private readonly maxLookups: number;
  private started = false;
  private search: Promise<number> | null = null;
  private readonly now: () => number;
  /** searches in a row that no node answered */
  private silentSearches = 0;
  /** no search before this time (ms): the backoff after silent searches */
  private retryAt = 0;

  constructor(opts: DiscoveryOptions) {
    const {udpPort, bindAddress} = opts;
    if (!Number.isInteger(udpPort) || udpPort < 1 || udpPort > 65535) throw new Error(`the discovery UDP port must be from 1 to 65535: ${udpPort}`);
    const family = isIPv4(bindAddress) ? 4 : isIPv6(bindAddress) ? 6 : null;
    if (family === null) throw new Error(`the discovery bind address must be an IPv4 or IPv6 address: ${bindAddress}`);
    const key = opts.identity.privateKey;
    if (opts.privateKey && !(opts.privateKey.length === key.length && opts.privateKey.every((b, i) => b === key[i]))) {
      throw new Error("the discovery key must be the identity's: the ENR is signed with it");
    }
    this.opts = opts;
    this.maxLookups = opts.maxLookups ?? 4;
    this.now = opts.now ?? Date.now;
    // discv5 takes multiaddrs of its own @multiformats/multiaddr (v12), made here by its own helper
    const bind = multiaddrFromSocketAddress({ip: {type: family, octets: multiaddr(`/ip${family}/${bindAddress}`).bytes.subarray(1)}, port: udpPort});
    const {ip, ip6} = opts.identity.addresses();
    const learnAddress = ip === undefined && ip6 === undefined;
    this.discv5 = Discv5.create({
      enr: opts.identity.signableEnr(),
      // the same key type; discv5's @libp2p/interface is an older copy whose types differ in name only
      privateKey: privateKeyFromRaw(opts.identity.privateKey) as unknown as IDiscv5CreateOptions["privateKey"],
      bindAddrs: family === 4 ? {ip4: bind} : {ip6: bind},
      // discv5 11 leaves a finished lookup's timer running for lookupTimeout (60 s by default),
      // which held a stopped node's process open that long: lookups finish within seconds
      config: {lookupTimeout: LOOKUP_TIMEOUT_MS, ...opts.discv5Config, enrUpdate: learnAddress},
    });
    if (learnAddress) {
      // discv5's typed events do not resolve here (its strict-event-emitter-types default import): its EventEmitter
      (this.discv5 as unknown as EventEmitter).on("multiaddrUpdated", (address: {toOptions(): {host: string; port: number}}) => {
        const options = address.toOptions();
        log.info({ip: options.host, udp: options.port}, "external address learnt from discovery peers");
        opts.onExternalAddress?.({ip: options.host, udp: options.port});
      });
    }
  }

  async start(): Promise<void> {
    if (this.started) return;
    const {identity} = this.opts;
    const {ip, ip6, udp, udp6} = identity.addresses();
    const reachable = (ip !== undefined && udp !== undefined) || (ip6 !== undefined && (udp6 ?? udp) !== undefined);
    if (!reachable) log.warn("the ENR has no IP address and UDP port: other nodes cannot add this node to their tables");
    await this.discv5.start();
    this.started = true;
    this.addBootEnrs();
    log.info({bind: this.discoveryAddresses(), bootnodes: this.opts.bootEnrs.length, enr: identity.enr()}, "discv5 started");
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.discv5.stop();
    await this.search;
  }

  /** The bound UDP address(es) with `/p2p/<peerId>`, for `identity.setListenAddresses`. */
  discoveryAddresses(): string[] {
    return this.discv5.bindAddrs.map((a) => `${a.toString()}/p2p/${this.opts.identity.peerId}`);
  }

  /** The records in the routing table (`enr:...`). */
  knownEnrs(): string[] {
    return this.discv5.kadValues().map((enr) => enr.encodeTxt());
  }

  /**
   * Reports up to `count` peers to `onPeer`: first from the routing table, then from random
   * lookups (at most `maxLookups`). With `wanted`, only peers advertising one of those subnets.
   * One search runs at a time: a call while one runs gets that one's result. After searches
   * that no node answered, calls resolve to 0 until the backoff has passed or a node contacts
   * this one. Resolves to the number reported.
   */
  findPeers(count: number, wanted?: SubnetWanted): Promise<number> {
    if (!this.started) return Promise.resolve(0);
    // backing off, unless a node has contacted us since (its session is a way into the network)
    if (this.search === null && this.now() < this.retryAt && this.discv5.connectedPeerCount === 0) return Promise.resolve(0);
    this.search ??= this.runSearch(count, wanted).finally(() => (this.search = null));
    return this.search;
  }

  private async runSearch(count: number, wanted: SubnetWanted | undefined): Promise<number> {
    // the record discv5 serves must carry the wall-clock fork before we talk to anyone
    this.opts.identity.refresh();
    const reported = new Set<string>();
    const consider = (enr: ENR): void => {
      if (reported.size >= count || reported.has(enr.nodeId)) return;
      const peer = eth2PeerOf(enr, this.opts.forkDigest(), wanted);
      if (peer === null) return;
      reported.add(enr.nodeId);
      this.opts.onPeer(peer);
    };
    this.discv5.kadValues().forEach(consider);
    for (let i = 0; i < this.maxLookups && reported.size < count && this.started; i++) {
      // a lookup with an empty table would only wait for its timeout
      if (this.discv5.kadValues().length === 0) this.addBootEnrs();
      if (this.discv5.kadValues().length === 0) break;
      const found = await this.discv5.findRandomNode();
      if (!this.started) break;
      found.forEach(consider);
      // no node answers: another lookup would only wait for the same timeouts
      if (found.length === 0 && this.discv5.connectedPeerCount === 0) break;
    }
    log.debug({reported: reported.size, wanted: count, table: this.discv5.kadValues().length}, "discv5 search done");
    if (this.started) this.noteAnswers(reported.size > 0 || this.discv5.connectedPeerCount > 0);
    return reported.size;
  }

  /** Backs off while no node answers, saying so once (and once when nodes answer again). */
  private noteAnswers(answered: boolean): void {
    if (answered) {
      if (this.silentSearches > 0) log.info({table: this.discv5.kadValues().length}, "discovery: nodes answer again");
      this.silentSearches = 0;
      this.retryAt = 0;
      return;
    }
    this.silentSearches++;
    const waitMs = Math.min(SILENT_RETRY_FIRST_MS * 2 ** (this.silentSearches - 1), SILENT_RETRY_MAX_MS);
    this.retryAt = this.now() + waitMs;
    if (this.silentSearches === 1) {
      const n = this.opts.bootEnrs.length;
      const interval = `at growing intervals, up to every ${SILENT_RETRY_MAX_MS / 60_000} min`;
      // without bootnodes (a dev chain's first node) waiting to be contacted is what is expected
      if (n === 0) log.info({retryAfterMs: waitMs}, `discovery: no bootnodes (--bootnodes) and no node has contacted this one; looking again ${interval}`);
      else log.warn({bootnodes: n, retryAfterMs: waitMs}, `discovery: none of the ${n} bootnodes answered (down, or unreachable from here); asking again ${interval}`);
    } else {
      log.debug({silentSearches: this.silentSearches, retryAfterMs: waitMs}, "discovery: still no node answers");
    }
  }

  private addBootEnrs(): void {
    for (const text of this.opts.bootEnrs) {
      try {
        this.discv5.addEnr(ENR.decodeTxt(text));
      } catch (e) {
        log.warn({enr: text, reason: (e as Error).message}, "ignoring a boot ENR");
      }
    }
  }
}
