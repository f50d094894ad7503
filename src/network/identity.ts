import {ENR, SignableENR} from "@chainsafe/enr";
import {generateKeyPair, privateKeyFromRaw} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import type {BeaconConfig} from "@lodestar/config";
import {ATTESTATION_SUBNET_COUNT, FAR_FUTURE_EPOCH, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {ssz, type fulu, type phase0} from "@lodestar/types";
import {BitArray} from "@chainsafe/ssz";
import {chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {getLogger} from "../log.ts";

/**
 * The node's network identity: a secp256k1 key made at first start and kept in the data dir,
 * the libp2p peer id it gives, the node's signed ENR and its p2p MetaData.
 *
 * The identity is real before the node has networking: the peer id and the ENR are the ones
 * the network layer will use. Until then the ENR carries no IP address and no ports, and the
 * node has no p2p or discovery addresses. The ENR's `eth2` entry (and from fulu `nfd` and
 * `cgc`) follow the wall clock across fork boundaries; each change raises the ENR's sequence
 * number and is kept in the data dir, so the number only ever grows.
 */

const log = getLogger("network");

const KEY_FILE = "node.key";
const ENR_FILE = "enr";

/** What the API sees of the identity. */
export interface NetworkIdentity {
  /** the libp2p peer id (`16Uiu2...`) */
  readonly peerId: string;
  /** the signed ENR as text (`enr:...`), current for the wall-clock epoch */
  enr(): string;
  /** libp2p multiaddrs the node serves req/resp on (none without networking) */
  p2pAddresses(): string[];
  /** discv5 multiaddrs (none without networking) */
  discoveryAddresses(): string[];
  metadata(): fulu.Metadata;
}

/** What the ENR's fork entries are computed from. */
export interface ForkSource {
  config: BeaconConfig;
  /** the wall-clock epoch */
  currentEpoch(): number;
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

const bytesEqual = (a: Uint8Array | undefined, b: Uint8Array): boolean => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

export class NodeIdentity implements NetworkIdentity {
  readonly peerId: string;
  private readonly privateKey: Uint8Array;
  private readonly forks: ForkSource;
  /** where the ENR is kept (in memory only when null) */
  private readonly enrFile: string | null;
  private record: SignableENR;
  private readonly meta: fulu.Metadata;

  constructor(privateKey: Uint8Array, forks: ForkSource, dir: string | null = null) {
    this.privateKey = privateKey;
    this.forks = forks;
    this.enrFile = dir === null ? null : join(dir, ENR_FILE);
    this.peerId = peerIdFromPrivateKey(privateKeyFromRaw(privateKey)).toString();
    // no subnets joined without networking; custody: the spec's minimum
    this.meta = {
      seqNumber: 0n,
      attnets: BitArray.fromBitLen(ATTESTATION_SUBNET_COUNT),
      syncnets: BitArray.fromBitLen(SYNC_COMMITTEE_SUBNET_COUNT),
      custodyGroupCount: forks.config.CUSTODY_REQUIREMENT,
    };
    const stored = this.storedRecord();
    this.record = stored ?? SignableENR.createV4(privateKey, this.wantedEntries());
    if (stored) this.refresh();
    else this.store();
  }

  /** The key kept in `dir` (made on first start), and the ENR kept beside it. */
  static async load(dir: string, forks: ForkSource): Promise<NodeIdentity> {
    const identity = new NodeIdentity(await loadOrCreateNodeKey(dir), forks, dir);
    log.info({peerId: identity.peerId, enr: identity.enr()}, "node identity (no networking yet: the ENR has no address)");
    return identity;
  }

  enr(): string {
    this.refresh();
    return this.record.encodeTxt();
  }

  p2pAddresses(): string[] {
    return [];
  }

  discoveryAddresses(): string[] {
    return [];
  }

  metadata(): fulu.Metadata {
    return {...this.meta, attnets: this.meta.attnets.clone(), syncnets: this.meta.syncnets.clone()};
  }

  /** The entries the ENR must hold now (besides its key): fork id, subnets, and from a scheduled fulu custody and next fork digest. */
  private wantedEntries(): Record<string, Uint8Array> {
    const {config} = this.forks;
    const {forkId, nextForkDigest} = enrForkId(config, this.forks.currentEpoch());
    const wanted: Record<string, Uint8Array> = {
      eth2: ssz.phase0.ENRForkID.serialize(forkId),
      attnets: ssz.phase0.AttestationSubnets.serialize(this.meta.attnets),
      syncnets: ssz.altair.SyncSubnets.serialize(this.meta.syncnets),
    };
    if (config.FULU_FORK_EPOCH !== FAR_FUTURE_EPOCH) {
      wanted.cgc = minimalBigEndian(this.meta.custodyGroupCount);
      wanted.nfd = nextForkDigest;
    }
    return wanted;
  }

  /** A new signed record (the next sequence number) when an entry differs from what it must hold now. */
  private refresh(): void {
    const wanted = this.wantedEntries();
    const kvs = this.record.kvs;
    if (Object.entries(wanted).every(([k, v]) => bytesEqual(kvs.get(k), v))) return;
    this.record = new SignableENR(new Map([...kvs, ...Object.entries(wanted)]), this.record.seq + 1n, this.privateKey);
    this.store();
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
