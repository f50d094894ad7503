import type {ForkName} from "@lodestar/params";
import type {LightClientBootstrap, LightClientFinalityUpdate, LightClientOptimisticUpdate, LightClientUpdate} from "@lodestar/types";
import {type SszLike, type VersionMeta, forkType, parseFork, root, sszData, uint64, versionOnlyMeta} from "../codecs.ts";
import {route, type DataCodec, type NoArgs, type NoMeta} from "./types.ts";

/** Routes of the Beacon tag's light-client server (beacon-apis `apis/beacon/light_client/`). */

/** A value with its fork, as the light-client answers and events carry it: `{version, data}`. */
export interface Versioned<T> {
  version: ForkName;
  data: T;
}

type JsonCodec<T> = Pick<SszLike<T>, "toJson" | "fromJson">;
const isObject = (json: unknown): json is Record<string, unknown> => typeof json === "object" && json !== null;

/** `{version, data}` in JSON, the data in the type of its version (the SSE events of the light-client topics). */
export function versionedJson<T>(typeName: string): JsonCodec<Versioned<T>> {
  return {
    toJson: ({version, data}) => ({version, data: forkType<T>(version, typeName).toJson(data)}),
    fromJson(json) {
      const version = isObject(json) && typeof json.version === "string" ? parseFork(json.version) : undefined;
      if (!version || !isObject(json)) throw new Error(`${typeName}: missing or unknown version`);
      return {version, data: forkType<T>(version, typeName).fromJson(json.data)};
    },
  };
}

/** An update of the range answer, with the fork digest its SSZ chunk carries as context. */
export interface LightClientUpdateChunk extends Versioned<LightClientUpdate> {
  forkDigest: Uint8Array;
}

/**
 * The SSZ answer of the range: per update `response_chunk_len (u64 LE) ‖ fork digest (4) ‖ SSZ`.
 * Which type a chunk has depends on the chain's fork digests, which the reader must know.
 */
export function encodeUpdateChunks(chunks: LightClientUpdateChunk[]): Uint8Array {
  const parts = chunks.map(({version, data, forkDigest}) => {
    const payload = forkType<LightClientUpdate>(version, "LightClientUpdate").serialize(data);
    const part = new Uint8Array(8 + 4 + payload.length);
    new DataView(part.buffer).setBigUint64(0, BigInt(4 + payload.length), true);
    part.set(forkDigest, 8);
    part.set(payload, 12);
    return part;
  });
  return Buffer.concat(parts);
}

/** The chunks of an SSZ range answer; `forkOfDigest` names the fork of each chunk's context (throws on an unknown one). */
export function decodeUpdateChunks(bytes: Uint8Array, forkOfDigest: (digest: Uint8Array) => ForkName): LightClientUpdateChunk[] {
  const chunks: LightClientUpdateChunk[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = 0; offset < bytes.length; ) {
    if (offset + 12 > bytes.length) throw new Error(`truncated response_chunk at byte ${offset}`);
    const length = Number(view.getBigUint64(offset, true));
    if (length < 4 || offset + 8 + length > bytes.length) throw new Error(`response_chunk_len ${length} at byte ${offset} does not fit`);
    const forkDigest = bytes.slice(offset + 8, offset + 12);
    const version = forkOfDigest(forkDigest);
    const data = forkType<LightClientUpdate>(version, "LightClientUpdate").deserialize(bytes.subarray(offset + 12, offset + 8 + length));
    chunks.push({version, data, forkDigest});
    offset += 8 + length;
  }
  return chunks;
}

/** The range answer: a bare JSON array of `{version, data}` (no envelope), or SSZ chunks. */
const updatesData: DataCodec<Versioned<LightClientUpdate>[], NoMeta, LightClientUpdateChunk[]> = {
  toJson: (chunks) => chunks.map(({version, data}) => versionedJson<LightClientUpdate>("LightClientUpdate").toJson({version, data})),
  fromJson(json) {
    if (!Array.isArray(json)) throw new Error("expected a JSON array of {version, data}");
    return json.map((item) => versionedJson<LightClientUpdate>("LightClientUpdate").fromJson(item));
  },
  ssz: {
    serialize: (chunks) => encodeUpdateChunks(chunks),
    deserialize() {
      throw new Error("SSZ light-client updates carry fork digests: read them with decodeUpdateChunks and the chain's digests, or ask for JSON");
    },
  },
};

const versionedSsz = <T>(typeName: string) => sszData<T, VersionMeta>((meta) => forkType<T>(meta.version, typeName), {ssz: true});

export const lightClientRoutes = {
  getLightClientBootstrap: route<{blockRoot: Uint8Array}, LightClientBootstrap, VersionMeta>({
    method: "GET",
    path: "/eth/v1/beacon/light_client/bootstrap/{block_root}",
    version: 1,
    tag: "Beacon",
    args: {blockRoot: {in: "path", name: "block_root", codec: root}},
    response: {kind: "data", data: versionedSsz("LightClientBootstrap"), meta: versionOnlyMeta},
  }),
  /** `start_period` and `count` are any uint64: periods past the chain's have no update, counts are capped */
  getLightClientUpdatesByRange: route<{startPeriod: bigint; count: bigint}, Versioned<LightClientUpdate>[], NoMeta, LightClientUpdateChunk[]>({
    method: "GET",
    path: "/eth/v1/beacon/light_client/updates",
    version: 1,
    tag: "Beacon",
    args: {startPeriod: {in: "query", name: "start_period", codec: uint64}, count: {in: "query", name: "count", codec: uint64}},
    response: {kind: "data", data: updatesData, meta: {}, unwrapped: true},
  }),
  getLightClientFinalityUpdate: route<NoArgs, LightClientFinalityUpdate, VersionMeta>({
    method: "GET",
    path: "/eth/v1/beacon/light_client/finality_update",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: versionedSsz("LightClientFinalityUpdate"), meta: versionOnlyMeta},
  }),
  getLightClientOptimisticUpdate: route<NoArgs, LightClientOptimisticUpdate, VersionMeta>({
    method: "GET",
    path: "/eth/v1/beacon/light_client/optimistic_update",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: versionedSsz("LightClientOptimisticUpdate"), meta: versionOnlyMeta},
  }),
};
