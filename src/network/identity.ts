import {ENR, portToBuf, SignableENR} from "@chainsafe/enr";
import {generateKeyPair, privateKeyFromRaw} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import type {BeaconConfig} from "@lodestar/config";
import {ATTESTATION_SUBNET_COUNT, FAR_FUTURE_EPOCH, ForkSeq, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {ssz, type altair, type fulu, type phase0} from "@lodestar/types";
import {BitArray} from "@chainsafe/ssz";
import {multiaddr} from "@multiformats/multiaddr";
import {chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync} from "node:fs";
import {isIPv4, isIPv6} from "node:net";
import {join} from "node:path";
import {getLogger} from "../log.ts";

/**
 * The node's network identity: a secp256k1 key made at first start and kept in the data dir,
 * the libp2p peer id it gives, the node's signed ENR and its p2p MetaData.
 *
 * The ENR is one `SignableENR` object for the node's whole life, changed in place: discv5 is
 * given that very object (`signableEnr()`), so the record it serves and the one the API shows
 * are the same. Only this class writes to it; each change is one new sequence number, kept in
 * the data dir, so the number only ever grows. The `eth2` entry (and from a scheduled fulu
 * `nfd` and `cgc`) follow the wall clock across fork boundaries (`refresh()`); addresses and
 * subnets are set by the network layer once it runs.
 */

const log = getLogger("network");

const KEY_FILE = "node.key";
const ENR_FILE = "enr";

/** MetaData as the Beacon API shows it: v1 (phase0), v2 (+syncnets, altair), v3 (+custody_group_count, fulu). */
export type MetadataVersion = 1 | 2 | 3;
export type ApiMetadata = phase0.Metadata | altair.Metadata | fulu.Metadata;

/** What the API sees of the identity. */
export interface NetworkIdentity {
  /** the libp2p peer id (`16Uiu2...`) */
  readonly peerId: string;
  /** the signed ENR as text (`enr:...`), current for the wall-clock epoch */
  enr(): string;
  /** libp2p multiaddrs the node serves req/resp on, each ending in `/p2p/<peerId>` (none without networking) */
  p2pAddresses(): string[];
  /** discv5 multiaddrs, each ending in `/p2p/<peerId>` (none without networking) */
  discoveryAddresses(): string[];
  /** the full local MetaData (fulu's shape) */
  metadata(): fulu.Metadata;
  /** the MetaData with the fields of the wall-clock fork only (see MetadataVersion) */
  metadataForApi(): ApiMetadata;
}

/** What the ENR's fork entries are computed from. */
export interface ForkSource {
  config: BeaconConfig;
  /** the wall-clock epoch */
  currentEpoch(): number;
}

/** The addresses the ENR advertises (EIP-778): `tcp`/`udp` serve IPv6 too unless `tcp6`/`udp6` say otherwise. */
export interface EnrAddresses {
  ip?: string;
  ip6?: string;
  tcp?: number;
  udp?: number;
  tcp6?: number;
  udp6?: number;
  /** libp2p QUIC UDP port (the key Lighthouse and Prysm advertise) */
  quic?: number;
  quic6?: number;
}

/** The secp256k1 private key (32 raw bytes) kept in `dir`, made on first use. The file is readable by its owner only. */
export async function loadOrCreateNodeKey(dir: string): Promise<Uint8Array> {
  mkdirSync(dir, {recursive: true, mode: 0o700});
  const file = join(dir, KEY_FILE);
  if (!existsSync(file)) {
    const key = await generateKeyPair("secp256k1");
    // "wx": never overwrite a key another process wrote meanwhile
    writeFileSync(file, Buffer.from(key.raw).toString("hex") + "\n", {mode: 0o600, flag: "wx"});
    log.info({file}, "generated a new node key");
    return key.raw;
  }
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o077) {
    log.warn({file, mode: mode.toString(8)}, "node key was readable by others; restricting it to its owner");
    chmodSync(file, 0o600);
  }
  const hex = readFileSync(file, "utf8").trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${file} is not a secp256k1 node key (64 hex digits); move it away to make a new identity`);
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** The ENR's `eth2` entry for `epoch` (the p2p spec's ENRForkID, fulu rules: BPO boundaries count as forks). */
export function enrForkId(config: BeaconConfig, epoch: number): {forkId: phase0.ENRForkID; nextForkDigest: Uint8Array} {
  const current = config.getForkBoundaryAtEpoch(epoch);
  const next = config.forkBoundariesAscendingEpochOrder.find((b) => b.epoch > epoch && b.epoch !== FAR_FUTURE_EPOCH);
  const forkId = {
    forkDigest: config.forkBoundary2ForkDigest(current),
    // a BPO boundary keeps the fork (and so its version): next_fork_version only changes at regular forks
    nextForkVersion: config.forks[(next ?? current).fork].version,
    nextForkEpoch: next?.epoch ?? FAR_FUTURE_EPOCH,
  };
  return {forkId, nextForkDigest: next ? config.forkBoundary2ForkDigest(next) : new Uint8Array(4)};
}

/** `uint64` big endian with no leading zero bytes (0 is the empty string), as the ENR's `cgc`. */
function minimalBigEndian(n: number): Uint8Array {
  const bytes: number[] = [];
  for (let v = BigInt(n); v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
  return Uint8Array.from(bytes);
}

/** The address bytes of an ENR `ip` / `ip6` entry: a multiaddr's bytes after its one-byte protocol code. */
function ipBytes(ip: string, family: 4 | 6): Uint8Array {
  const valid = family === 4 ? isIPv4(ip) : isIPv6(ip);
  if (!valid || ip === "0.0.0.0" || ip === "::") throw new Error(`not an IPv${family} address other nodes can reach: ${ip}`);
  return multiaddr(`/ip${family}/${ip}`).bytes.subarray(1);
}

function portBytes(name: string, port: number): Uint8Array {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name} must be a port from 1 to 65535: ${port}`);
  return portToBuf(port);
}

const bytesEqual = (a: Uint8Array | undefined, b: Uint8Array): boolean => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

const ADDRESS_KEYS = ["ip", "ip6", "tcp", "udp", "tcp6", "udp6", "quic", "quic6"] as const;

export class NodeIdentity implements NetworkIdentity {
  readonly peerId: string;
  /** the ENR node id (64 hex digits): as a uint256, the `node_id` of the p2p spec's subnet functions */
  readonly nodeId: string;
  /** the secp256k1 key, 32 raw bytes (`privateKeyFromRaw` makes the libp2p key) */
  readonly privateKey: Uint8Array;
  private readonly forks: ForkSource;
  /** where the ENR is kept (in memory only when null) */
  private readonly enrFile: string | null;
  /** the one record, changed in place (discv5 holds it too) */
  private readonly record: SignableENR;
  private meta: fulu.Metadata;
  private p2p: string[] = [];
  private discovery: string[] = [];

  constructor(privateKey: Uint8Array, forks: ForkSource, dir: string | null = null) {
    this.privateKey = privateKey;
    this.forks = forks;
    this.enrFile = dir === null ? null : join(dir, ENR_FILE);
    this.peerId = peerIdFromPrivateKey(privateKeyFromRaw(privateKey)).toString();
    // no subnets joined until the network layer says so; custody: the spec's minimum
    this.meta = {
      seqNumber: 0n,
      attnets: BitArray.fromBitLen(ATTESTATION_SUBNET_COUNT),
      syncnets: BitArray.fromBitLen(SYNC_COMMITTEE_SUBNET_COUNT),
      custodyGroupCount: forks.config.CUSTODY_REQUIREMENT,
    };
    const stored = this.storedRecord();
    this.record = stored ?? SignableENR.createV4(privateKey, this.forkEntries());
    this.nodeId = this.record.nodeId;
    if (stored) this.refresh();
    else this.store();
  }

  /** The key kept in `dir` (made on first start), and the ENR kept beside it. */
  static async load(dir: string, forks: ForkSource): Promise<NodeIdentity> {
    const identity = new NodeIdentity(await loadOrCreateNodeKey(dir), forks, dir);
    log.info({peerId: identity.peerId, enr: identity.enr()}, "node identity");
    return identity;
  }

  enr(): string {
    this.refresh();
    return this.record.encodeTxt();
  }

  /**
   * The live record, for discv5 (`Discv5.create({enr})`): discv5 reads its entries and sequence
   * number as this class changes them. Nothing else may write to it.
   */
  signableEnr(): SignableENR {
    this.refresh();
    return this.record;
  }

  p2pAddresses(): string[] {
    return [...this.p2p];
  }

  discoveryAddresses(): string[] {
    return [...this.discovery];
  }

  /** What the node listens on (libp2p, discv5) as multiaddrs; `/p2p/<peerId>` is added where missing. */
  setListenAddresses(p2p: string[], discovery: string[]): void {
    this.p2p = p2p.map((a) => this.withPeerId(a));
    this.discovery = discovery.map((a) => this.withPeerId(a));
  }

  metadata(): fulu.Metadata {
    return {...this.meta, attnets: this.meta.attnets.clone(), syncnets: this.meta.syncnets.clone()};
  }

  /** 1 before altair, 2 from altair, 3 from fulu, by the wall-clock epoch (the Beacon API's MetaData: "present in Altair", "present from the Fulu fork"). */
  metadataVersion(): MetadataVersion {
    const fork = this.forks.config.getForkSeqAtEpoch(this.forks.currentEpoch());
    return fork >= ForkSeq.fulu ? 3 : fork >= ForkSeq.altair ? 2 : 1;
  }

  metadataForApi(): ApiMetadata {
    const {seqNumber, attnets, syncnets, custodyGroupCount} = this.metadata();
    const version = this.metadataVersion();
    if (version === 1) return {seqNumber, attnets};
    if (version === 2) return {seqNumber, attnets, syncnets};
    return {seqNumber, attnets, syncnets, custodyGroupCount};
  }

  /**
   * The addresses the ENR advertises, all at once: an address not given is removed. Signs the
   * record again (next sequence number) only when an entry changes.
   */
  setAddresses(addresses: EnrAddresses): void {
    const wanted: Record<string, Uint8Array | undefined> = {
      ip: addresses.ip === undefined ? undefined : ipBytes(addresses.ip, 4),
      ip6: addresses.ip6 === undefined ? undefined : ipBytes(addresses.ip6, 6),
    };
    for (const key of ["tcp", "udp", "tcp6", "udp6", "quic", "quic6"] as const) {
      const port = addresses[key];
      wanted[key] = port === undefined ? undefined : portBytes(key, port);
    }
    if (this.change(wanted)) log.info({enr: this.record.encodeTxt()}, "ENR addresses updated");
  }

  /** The ENR's current addresses. */
  addresses(): EnrAddresses {
    const r = this.record;
    const all: EnrAddresses = {ip: r.ip, ip6: r.ip6, tcp: r.tcp, udp: r.udp, tcp6: r.tcp6, udp6: r.udp6, quic: r.quic, quic6: r.quic6};
    return Object.fromEntries(ADDRESS_KEYS.filter((k) => all[k] !== undefined).map((k) => [k, all[k]])) as EnrAddresses;
  }

  /**
   * The persistent attestation subnets and the sync committee subnets the node advertises: the
   * MetaData (its seq_number raised by one when either changes, as the p2p spec requires) and the
   * ENR's `attnets` / `syncnets` entries together.
   */
  setSubnets(subnets: {attnets?: BitArray; syncnets?: BitArray}): void {
    const {attnets = this.meta.attnets, syncnets = this.meta.syncnets} = subnets;
    if (attnets.bitLen !== ATTESTATION_SUBNET_COUNT) throw new Error(`attnets must have ${ATTESTATION_SUBNET_COUNT} bits, not ${attnets.bitLen}`);
    if (syncnets.bitLen !== SYNC_COMMITTEE_SUBNET_COUNT) throw new Error(`syncnets must have ${SYNC_COMMITTEE_SUBNET_COUNT} bits, not ${syncnets.bitLen}`);
    if (bytesEqual(attnets.uint8Array, this.meta.attnets.uint8Array) && bytesEqual(syncnets.uint8Array, this.meta.syncnets.uint8Array)) return;
    this.meta = {...this.meta, seqNumber: this.meta.seqNumber + 1n, attnets: attnets.clone(), syncnets: syncnets.clone()};
    this.change(this.subnetEntries());
  }

  /**
   * The custody group count the node advertises (MetaData v3 and the ENR's `cgc`, from a
   * scheduled fulu on); the sequence number rises when it changes.
   */
  setCustodyGroupCount(count: number): void {
    if (count === this.meta.custodyGroupCount) return;
    this.meta = {...this.meta, seqNumber: this.meta.seqNumber + 1n, custodyGroupCount: count};
    this.change(this.forkEntries());
  }

  /**
   * Brings the fork entries to the wall-clock epoch (a new sequence number at a fork boundary).
   * The network layer calls it at each epoch, so that discv5 serves the new `eth2` in time.
   */
  refresh(): void {
    this.change(this.forkEntries());
  }

  private subnetEntries(): Record<string, Uint8Array> {
    return {
      attnets: ssz.phase0.AttestationSubnets.serialize(this.meta.attnets),
      syncnets: ssz.altair.SyncSubnets.serialize(this.meta.syncnets),
    };
  }

  /** The entries that follow the clock and the MetaData: fork id, subnets, and from a scheduled fulu custody and next fork digest. */
  private forkEntries(): Record<string, Uint8Array> {
    const {config} = this.forks;
    const {forkId, nextForkDigest} = enrForkId(config, this.forks.currentEpoch());
    const wanted: Record<string, Uint8Array> = {eth2: ssz.phase0.ENRForkID.serialize(forkId), ...this.subnetEntries()};
    if (config.FULU_FORK_EPOCH !== FAR_FUTURE_EPOCH) {
      wanted.cgc = minimalBigEndian(this.meta.custodyGroupCount);
      wanted.nfd = nextForkDigest;
    }
    return wanted;
  }

  /**
   * Puts `wanted` into the record (undefined: remove the entry) with ONE new sequence number,
   * and keeps it. `set`/`delete` raise the sequence number each and drop the signature, which is
   * made again from the entries and `seq` when next read; so `seq` is set after them.
   */
  private change(wanted: Record<string, Uint8Array | undefined>): boolean {
    const kvs = this.record.kvs;
    const changed = Object.entries(wanted).filter(([k, v]) => (v === undefined ? kvs.has(k) : !bytesEqual(kvs.get(k), v)));
    if (changed.length === 0) return false;
    const seq = this.record.seq + 1n;
    for (const [k, v] of changed) {
      if (v === undefined) this.record.delete(k);
      else this.record.set(k, v);
    }
    this.record.seq = seq;
    this.store();
    return true;
  }

  private withPeerId(address: string): string {
    const ma = multiaddr(address);
    const peer = ma.getComponents().find((c) => c.name === "p2p");
    if (peer === undefined) return `${ma.toString()}/p2p/${this.peerId}`;
    if (peer.value !== this.peerId) throw new Error(`${address} names another peer than this node (${this.peerId})`);
    return ma.toString();
  }

  /** The ENR kept in the data dir when it is valid and this key's; null otherwise (a fresh record then starts). */
  private storedRecord(): SignableENR | null {
    if (this.enrFile === null || !existsSync(this.enrFile)) return null;
    try {
      const stored = ENR.decodeTxt(readFileSync(this.enrFile, "utf8").trim());
      if (stored.peerId.toString() !== this.peerId) throw new Error("the ENR belongs to another key");
      return new SignableENR(stored.kvs, stored.seq, this.privateKey);
    } catch (e) {
      log.warn({file: this.enrFile, reason: (e as Error).message}, "ignoring the stored ENR");
      return null;
    }
  }

  private store(): void {
    if (this.enrFile === null) return;
    const tmp = `${this.enrFile}.tmp`;
    writeFileSync(tmp, this.record.encodeTxt() + "\n");
    renameSync(tmp, this.enrFile);
  }
}
