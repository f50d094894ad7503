import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {peerIdFromString} from "@libp2p/peer-id";
import {multiaddr} from "@multiformats/multiaddr";
import {Compressor, Decompressor} from "snappy";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {ListCompositeType} from "@chainsafe/ssz";
import {createBeaconConfig as ourBeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ByteSource} from "../../src/network/reqresp/byteSource.ts";
import {createHostilePeer, NodeView, waitFor, type HostilePeer} from "../e2e/hostilePeer.ts";
import {NodeProcess, getJson, restNodeArgs, tempDataDir} from "../e2e/nodeProcess.ts";
import {chainConfigFromJson, createBeaconConfig, type BeaconConfig} from "../../node_modules/@lodestar/api/node_modules/@lodestar/config/lib/index.js";
import {ssz} from "../../node_modules/@lodestar/api/node_modules/@lodestar/types/lib/index.js";

/**
 * The wire after bellatrix, against another team's types: a fulu node (a blob in every payload,
 * so data columns) is asked status v2, metadata v3, beacon_blocks_by_range v2 and
 * data_column_sidecars_by_range/by_root v1 over raw libp2p streams. Each answer is taken apart
 * here without the node's code: the response chunk by hand (result byte, context bytes, varint
 * length), the snappy frames by the snappy package (the Rust snap crate), the payload by the types
 * of @lodestar/types 1.50 (the copy under @lodestar/api 1.48.0, not the node's 1.46) and the
 * context bytes by that release's config (@lodestar/config 1.48.0). Each payload must re-serialize
 * to the bytes sent, and name what the REST API names (roots, commitments, custody group count).
 * Not covered here: blob_sidecars_by_range/by_root (a deneb chain; fulu serves columns instead).
 */

const data = tempDataDir("oracle-wire");
let node: NodeProcess;
let view: NodeView;
let peer: HostilePeer;
let config: BeaconConfig;
let nodePeerId: string;
let genesisTime: number;

/** the slots the by_range requests ask for */
const RANGE = {startSlot: 1, count: 5};
const PROTOCOL = (name: string, version: number) => `/eth2/beacon_chain/req/${name}/${version}/ssz_snappy`;
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/^0x/, ""), "hex"));
const currentEpoch = () => computeEpochAtSlot(Math.max(0, Math.floor(Date.now() / 1000 - genesisTime)));

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

interface Chunk {
  result: number;
  context: Uint8Array | null;
  payload: Uint8Array;
}

/** The response chunks of a whole stream, parsed by p2p-interface.md's layout with frames decoded by the snappy package. */
async function parseChunks(bytes: Uint8Array, contextBytes: boolean): Promise<Chunk[]> {
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

/** One request on a new stream: the whole answer, as bytes. */
async function request(protocol: string, payload: Uint8Array | null): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(20_000);
  const stream = await peer.libp2p.dialProtocol(peerIdFromString(nodePeerId), protocol, {signal});
  // the node's stream reader only gathers the bytes (everything else here is independent of it)
  const source = new ByteSource(stream);
  if (payload) stream.send(await encodeRequest(payload));
  await stream.close({signal});
  while (await source.fill(signal));
  return source.buffer.subarray();
}

/** The fork digest of `slot`'s fork, by @lodestar/config 1.48.0 (with fulu's blob parameters). */
const digestAt = (slot: number) => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(computeEpochAtSlot(slot)));

beforeAll(async () => {
  node = new NodeProcess(restNodeArgs(data.dir, ["--seconds-per-slot", "1", "--genesis-fork", "fulu", "--dev-blobs-per-block", "1"]));
  const url = await node.restUrl();
  view = new NodeView(url);
  const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
  genesisTime = Number(genesis.genesis_time);
  const spec = (await getJson<{data: Record<string, string>}>(url, "/eth/v1/config/spec")).body.data;
  config = createBeaconConfig(chainConfigFromJson(spec), fromHex(genesis.genesis_validators_root));
  const identity = (await getJson(url, "/eth/v1/node/identity")).body.data;
  nodePeerId = identity.peer_id;
  // the ranges asked are of the first blocks: well before the head, so stored whatever the node's write delay
  await waitFor("a few blocks", 40_000, async () => (await view.headSlot()) >= RANGE.startSlot + RANGE.count + 3, 250);
  // the peer's own side of the handshake is the node's code (it answers the node's status requests)
  const ours = ourBeaconConfig(devChainConfig({secondsPerSlot: 1, genesisFork: "fulu", forkEpochs: {}}), fromHex(genesis.genesis_validators_root));
  peer = await createHostilePeer(ours, currentEpoch, () => view.chainStatus(digestAt(Math.floor(Date.now() / 1000 - genesisTime))));
  const address = multiaddr((identity.p2p_addresses as string[]).find((a) => a.startsWith("/ip4/127.0.0.1/tcp/"))!);
  await peer.libp2p.dial(address, {signal: AbortSignal.timeout(10_000)});
  // requests go once the node has taken the peer in (its status exchange done)
  await waitFor("the node to accept the peer", 20_000, async () => (await view.peerState(peer.peerId)) === "connected", 250);
}, 90_000);

afterAll(async () => {
  await peer?.stop();
  await node?.stop("SIGKILL");
  data.remove();
});

describe("the node's req/resp answers, read with @lodestar/types 1.50 and the snappy package", () => {
  it("status v2: a fulu Status of the node's chain", async () => {
    const url = view.url;
    const mine = await view.chainStatus(digestAt(Math.floor(Date.now() / 1000 - genesisTime)));
    const chunks = await parseChunks(await request(PROTOCOL("status", 2), ssz.fulu.Status.serialize({...mine, earliestAvailableSlot: 0})), false);
    expect(chunks.map((c) => c.result)).toEqual([0]);
    const status = ssz.fulu.Status.deserialize(chunks[0]!.payload);
    expect(ssz.fulu.Status.serialize(status)).toEqual(chunks[0]!.payload);
    expect(hex(status.forkDigest)).toBe(hex(mine.forkDigest));
    const finalized = (await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.finalized;
    expect({epoch: status.finalizedEpoch, root: "0x" + hex(status.finalizedRoot)}).toEqual({epoch: Number(finalized.epoch), root: finalized.root});
    const headRoot = (await getJson(url, `/eth/v1/beacon/blocks/${status.headSlot}/root`)).body.data.root;
    expect("0x" + hex(status.headRoot)).toBe(headRoot);
  }, 20_000);

  it("metadata v3: a fulu MetaData with the custody group count the REST API reports", async () => {
    const chunks = await parseChunks(await request(PROTOCOL("metadata", 3), null), false);
    expect(chunks.map((c) => c.result)).toEqual([0]);
    const metadata = ssz.fulu.Metadata.deserialize(chunks[0]!.payload);
    expect(ssz.fulu.Metadata.serialize(metadata)).toEqual(chunks[0]!.payload);
    const identity = (await getJson(view.url, "/eth/v1/node/identity")).body.data.metadata;
    expect(String(metadata.custodyGroupCount)).toBe(identity.custody_group_count);
    expect("0x" + hex(metadata.attnets.uint8Array)).toBe(identity.attnets);
  }, 20_000);

  it("beacon_blocks_by_range v2: fulu blocks under their fork digest, the chain's roots", async () => {
    const chunks = await parseChunks(await request(PROTOCOL("beacon_blocks_by_range", 2), ssz.phase0.BeaconBlocksByRangeRequest.serialize({...RANGE, step: 1})), true);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) {
      expect(chunk.result).toBe(0);
      const block = ssz.fulu.SignedBeaconBlock.deserialize(chunk.payload);
      expect(ssz.fulu.SignedBeaconBlock.serialize(block)).toEqual(chunk.payload);
      expect(hex(chunk.context!)).toBe(hex(digestAt(block.message.slot)));
      const answer = await getJson(view.url, `/eth/v1/beacon/blocks/${block.message.slot}/root`);
      expect({slot: block.message.slot, status: answer.status, body: answer.status === 200 ? undefined : answer.body}).toEqual({slot: block.message.slot, status: 200, body: undefined});
      expect("0x" + hex(ssz.fulu.BeaconBlock.hashTreeRoot(block.message))).toBe(answer.body.data.root);
    }
  }, 20_000);

  it("data_column_sidecars by range and by root: fulu sidecars of the columns asked, naming their blocks", async () => {
    // the custody columns the node names in its ENR-derived metadata are not exposed over REST: ask a few, take what comes
    const columns = [0, 1, 2, 3, 64, 127];
    const byRange = await parseChunks(
      await request(PROTOCOL("data_column_sidecars_by_range", 1), ssz.fulu.DataColumnSidecarsByRangeRequest.serialize({...RANGE, columns})),
      true
    );
    expect(byRange.length).toBeGreaterThan(0);
    const custody = new Set<number>();
    const blocks = new Map<string, {status: number; body: any}>();
    for (const chunk of byRange) {
      expect(chunk.result).toBe(0);
      const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.payload);
      expect(ssz.fulu.DataColumnSidecar.serialize(sidecar)).toEqual(chunk.payload);
      const slot = sidecar.signedBlockHeader.message.slot;
      expect(hex(chunk.context!)).toBe(hex(digestAt(slot)));
      // the sidecar's header is a block of the node's, and its commitments that block's
      const root = "0x" + hex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message));
      const answer = blocks.get(root) ?? (await getJson(view.url, `/eth/v2/beacon/blocks/${root}`));
      blocks.set(root, answer);
      expect({slot, status: answer.status}).toEqual({slot, status: 200});
      const block = answer.body.data.message;
      expect(Number(block.slot)).toBe(slot);
      expect(sidecar.kzgCommitments.map((c) => "0x" + hex(c))).toEqual(block.body.blob_kzg_commitments);
      expect(sidecar.column.length).toBe(block.body.blob_kzg_commitments.length);
      expect(columns).toContain(sidecar.index);
      custody.add(sidecar.index);
    }
    // at least its own custody's share of what was asked (the proposer of every block keeps them all)
    expect(custody.size).toBeGreaterThan(0);

    const first = ssz.fulu.DataColumnSidecar.deserialize(byRange[0]!.payload);
    const blockRoot = ssz.phase0.BeaconBlockHeader.hashTreeRoot(first.signedBlockHeader.message);
    const byRoot = await parseChunks(
      await request(PROTOCOL("data_column_sidecars_by_root", 1), new ListCompositeType(ssz.fulu.DataColumnsByRootIdentifier, 128).serialize([{blockRoot, columns: [...custody]}])),
      true
    );
    expect(byRoot.map((c) => c.result)).toEqual([...custody].map(() => 0));
    for (const chunk of byRoot) {
      const sidecar = ssz.fulu.DataColumnSidecar.deserialize(chunk.payload);
      expect(hex(ssz.phase0.BeaconBlockHeader.hashTreeRoot(sidecar.signedBlockHeader.message))).toBe(hex(blockRoot));
      expect(ssz.fulu.DataColumnSidecar.serialize(sidecar)).toEqual(chunk.payload);
    }
  }, 30_000);
});
