import {peerIdFromString} from "@libp2p/peer-id";
import {multiaddr} from "@multiformats/multiaddr";
import {Compressor, Decompressor} from "snappy";
import {createBeaconConfig as ourBeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {devChainConfig, type DevFork} from "../../src/config/chainConfig.ts";
import {ByteSource} from "../../src/network/reqresp/byteSource.ts";
import {createHostilePeer, NodeView, waitFor, type HostilePeer} from "../e2e/hostilePeer.ts";
import {NodeProcess, getJson, restNodeArgs, tempDataDir} from "../e2e/nodeProcess.ts";
import {chainConfigFromJson, createBeaconConfig, type BeaconConfig} from "../../node_modules/@lodestar/api/node_modules/@lodestar/config/lib/index.js";

/**
 * A node process and a libp2p peer that asks it req/resp questions over raw streams, for the
 * wire oracle tests. Each answer is taken apart without the node's code: the response chunk by
 * hand (result byte, context bytes, varint length), the snappy frames by the snappy package (the
 * Rust snap crate), and the context bytes checked against @lodestar/config 1.48.0 (the copy under
 * @lodestar/api, not the node's 1.46).
 */

export const PROTOCOL = (name: string, version: number) => `/eth2/beacon_chain/req/${name}/${version}/ssz_snappy`;
export const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
export const fromHex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/^0x/, ""), "hex"));

function varint(n: number): Uint8Array {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return Uint8Array.from(out);
}

/** ssz_snappy, by the snappy package: varint length, then frames */
async function encodeRequest(payload: Uint8Array): Promise<Uint8Array> {
  const c = new Compressor();
  return Buffer.concat([varint(payload.length), c.update(payload), await c.finish()]);
}

export interface Chunk {
  result: number;
  context: Uint8Array | null;
  payload: Uint8Array;
}

/** The response chunks of a whole stream, parsed by p2p-interface.md's layout with frames decoded by the snappy package. */
export async function parseChunks(bytes: Uint8Array, contextBytes: boolean): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  let at = 0;
  while (at < bytes.length) {
    const result = bytes[at++]!;
    const context = contextBytes && result === 0 ? bytes.subarray(at, (at += 4)) : null;
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++]!;
      length += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    // frames until they hold `length` bytes (framing_format.txt: a type byte and a 3-byte little-endian
    // length each; a compressed block opens with the varint of its uncompressed size), then all of
    // them decoded by the snappy package
    const start = at;
    let got = 0;
    while (got < length) {
      if (at + 4 > bytes.length) throw new Error(`a chunk ends after ${got} of ${length} bytes`);
      const type = bytes[at]!;
      const frameLength = bytes[at + 1]! | (bytes[at + 2]! << 8) | (bytes[at + 3]! << 16);
      if (type === 0x01) got += frameLength - 4;
      if (type === 0x00) {
        for (let i = at + 8, shift = 0; ; i++, shift += 7) {
          got += (bytes[i]! & 0x7f) * 2 ** shift;
          if (bytes[i]! < 0x80) break;
        }
      }
      at += 4 + frameLength;
    }
    const d = new Decompressor();
    const payload = Buffer.concat([d.update(bytes.subarray(start, at)), await d.finish()]);
    if (payload.length !== length) throw new Error(`the frames hold ${payload.length} bytes, the prefix says ${length}`);
    chunks.push({result, context, payload});
  }
  return chunks;
}

export interface WireSession {
  view: NodeView;
  /** @lodestar/config 1.48.0 for the node's chain, from its /eth/v1/config/spec */
  config: BeaconConfig;
  genesisTime: number;
  /** One request on a new stream: the whole answer, as bytes. */
  request(protocol: string, payload: Uint8Array | null): Promise<Uint8Array>;
  /** The fork digest of `slot`'s fork, by @lodestar/config 1.48.0 (with fulu's blob parameters). */
  digestAt(slot: number): Uint8Array;
  stop(): Promise<void>;
}

/**
 * Starts a node on 1-second slots with `--genesis-fork genesisFork` (and `forkEpochs`, as
 * `--fork-epochs` takes them), a blob in every payload, waits until its head passes `headSlot`,
 * and connects a peer to it.
 */
export async function startWireSession(name: string, genesisFork: DevFork, forkEpochs: Partial<Record<DevFork, number>>, headSlot: number): Promise<WireSession> {
  const data = tempDataDir(name);
  const schedule = Object.entries(forkEpochs).map(([fork, epoch]) => `${fork}=${epoch}`);
  const forkArgs = schedule.length > 0 ? ["--fork-epochs", schedule.join(",")] : [];
  const node = new NodeProcess(restNodeArgs(data.dir, ["--seconds-per-slot", "1", "--genesis-fork", genesisFork, ...forkArgs, "--dev-blobs-per-block", "1"]));
  let peer: HostilePeer | undefined;
  const stop = async () => {
    await peer?.stop();
    await node.stop("SIGKILL");
    data.remove();
  };
  try {
    const url = await node.restUrl();
    const view = new NodeView(url);
    const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
    const genesisTime = Number(genesis.genesis_time);
    const spec = (await getJson<{data: Record<string, string>}>(url, "/eth/v1/config/spec")).body.data;
    const config = createBeaconConfig(chainConfigFromJson(spec), fromHex(genesis.genesis_validators_root));
    const identity = (await getJson(url, "/eth/v1/node/identity")).body.data;
    const nodePeerId = identity.peer_id as string;
    const slotNow = () => Math.max(0, Math.floor(Date.now() / 1000 - genesisTime));
    const digestAt = (slot: number) => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(computeEpochAtSlot(slot)));
    // the ranges asked are of the first blocks: well before the head, so stored whatever the node's write delay
    await waitFor(`the head past slot ${headSlot}`, 40_000 + headSlot * 1000, async () => (await view.headSlot()) >= headSlot, 250);
    // the peer's own side of the handshake is the node's code (it answers the node's status requests)
    const ours = ourBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork, forkEpochs}), fromHex(genesis.genesis_validators_root));
    peer = await createHostilePeer(ours, () => computeEpochAtSlot(slotNow()), () => view.chainStatus(digestAt(slotNow())));
    const address = multiaddr((identity.p2p_addresses as string[]).find((a) => a.startsWith("/ip4/127.0.0.1/tcp/"))!);
    await peer.libp2p.dial(address, {signal: AbortSignal.timeout(10_000)});
    // requests go once the node has taken the peer in (its status exchange done)
    const peerId = peer.peerId;
    await waitFor("the node to accept the peer", 20_000, async () => (await view.peerState(peerId)) === "connected", 250);
    const libp2p = peer.libp2p;
    const request = async (protocol: string, payload: Uint8Array | null): Promise<Uint8Array> => {
      const signal = AbortSignal.timeout(20_000);
      const stream = await libp2p.dialProtocol(peerIdFromString(nodePeerId), protocol, {signal});
      // the node's stream reader only gathers the bytes (everything else here is independent of it)
      const source = new ByteSource(stream);
      if (payload) stream.send(await encodeRequest(payload));
      await stream.close({signal});
      // taken out as it comes: ByteSource pauses the stream while more than 1 MiB lies unread
      const parts: Uint8Array[] = [];
      for (let more = true; more; ) {
        more = await source.fill(signal);
        parts.push(source.buffer.subarray());
        source.buffer.consume(source.buffer.byteLength);
      }
      return Buffer.concat(parts);
    };
    return {view, config, genesisTime, request, digestAt, stop};
  } catch (e) {
    await stop();
    throw e;
  }
}
