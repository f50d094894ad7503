import {ListCompositeType, type Type} from "@chainsafe/ssz";
import type {ChainForkConfig} from "@lodestar/config";
import {ForkName, ForkSeq, MAX_REQUEST_LIGHT_CLIENT_UPDATES, NUMBER_OF_COLUMNS, SLOTS_PER_EPOCH, type ForkPostAltair} from "@lodestar/params";
import {ssz, sszTypesFor, type altair, type deneb, type fulu, type phase0} from "@lodestar/types";

/**
 * Every Req/Resp protocol of the p2p spec (phase0 to fulu) with each of its versions: the
 * protocol id, the request and response SSZ types, whether success chunks carry context bytes,
 * how many response chunks a request allows and what it costs against the rate limit.
 *
 * `fork` below is the fork of the node's current (wall-clock) epoch, which sets the request
 * list limits (MAX_REQUEST_BLOCKS_DENEB from deneb, MAX_REQUEST_BLOB_SIDECARS_ELECTRA from electra).
 */

export type ProtocolName =
  | "status"
  | "goodbye"
  | "ping"
  | "metadata"
  | "beacon_blocks_by_range"
  | "beacon_blocks_by_root"
  | "blob_sidecars_by_range"
  | "blob_sidecars_by_root"
  | "data_column_sidecars_by_range"
  | "data_column_sidecars_by_root"
  | "light_client_bootstrap"
  | "light_client_updates_by_range"
  | "light_client_finality_update"
  | "light_client_optimistic_update";

export interface ProtocolVersion {
  name: ProtocolName;
  version: number;
  /** `/eth2/beacon_chain/req/<name>/<version>/ssz_snappy` */
  id: string;
  /** the first fork at which a requester offers this version (responders serve every version always) */
  sinceFork: ForkName;
  /** success chunks carry the fork digest of their object's epoch */
  contextBytes: boolean;
  /** false for protocols answered with exactly one chunk */
  multiChunk: boolean;
  /** the request's SSZ type; null when the request has no content (metadata) */
  requestType: ((config: ChainForkConfig, fork: ForkName) => Type<unknown>) | null;
  /** the SSZ type of a success chunk whose object belongs to `fork` */
  responseType: (fork: ForkName) => Type<unknown>;
  /** whether a success chunk may carry an object of `fork` (v1 blocks: phase0 only) */
  carriesFork: (fork: ForkName) => boolean;
  /** the most success chunks a response to `request` may have; also the request's rate-limit cost */
  maxResponseChunks: (config: ChainForkConfig, fork: ForkName, request: unknown) => number;
  /** a semantic problem with the request (answered InvalidRequest), or null */
  invalidRequest?: (request: unknown) => string | null;
}

export const PROTOCOL_PREFIX = "/eth2/beacon_chain/req";
export const ENCODING = "ssz_snappy";
export const protocolId = (name: ProtocolName, version: number): string => `${PROTOCOL_PREFIX}/${name}/${version}/${ENCODING}`;

/** @lodestar/types has no types for the list requests; they are built once per limit. */
const listTypes = new Map<string, Type<unknown>>();
function listOf(elementName: string, element: Type<unknown>, limit: number): Type<unknown> {
  const key = `${elementName}/${limit}`;
  let type = listTypes.get(key);
  if (!type) {
    type = new ListCompositeType(element as never, limit) as unknown as Type<unknown>;
    listTypes.set(key, type);
  }
  return type;
}

const atLeast = (fork: ForkName, since: ForkName): boolean => ForkSeq[fork] >= ForkSeq[since];
const anyFork = (): boolean => true;
const one = (): number => 1;

/** MAX_REQUEST_BLOCKS, or MAX_REQUEST_BLOCKS_DENEB from deneb */
export function maxRequestBlocks(config: ChainForkConfig, fork: ForkName): number {
  return atLeast(fork, ForkName.deneb) ? config.MAX_REQUEST_BLOCKS_DENEB : config.MAX_REQUEST_BLOCKS;
}

/** MAX_REQUEST_BLOB_SIDECARS, or MAX_REQUEST_BLOB_SIDECARS_ELECTRA from electra */
export function maxRequestBlobSidecars(config: ChainForkConfig, fork: ForkName): number {
  return atLeast(fork, ForkName.electra) ? config.MAX_REQUEST_BLOB_SIDECARS_ELECTRA : config.MAX_REQUEST_BLOB_SIDECARS;
}

/** MAX_BLOBS_PER_BLOCK of the epoch: none before deneb, then per fork and, from fulu, per blob schedule entry. */
export function maxBlobsPerBlock(config: ChainForkConfig, epoch: number): number {
  return atLeast(config.getForkInfoAtEpoch(epoch).name, ForkName.deneb) ? config.getMaxBlobsPerBlock(epoch) : 0;
}

/** The most blobs any block of the slot range may carry. */
function maxBlobsInRange(config: ChainForkConfig, startSlot: number, count: number): number {
  const first = Math.floor(startSlot / SLOTS_PER_EPOCH);
  const last = Math.floor(Math.min(startSlot + Math.max(count, 1) - 1, Number.MAX_SAFE_INTEGER) / SLOTS_PER_EPOCH);
  return Math.max(maxBlobsPerBlock(config, first), maxBlobsPerBlock(config, last));
}

function blocksByRangeChunks(config: ChainForkConfig, fork: ForkName, request: unknown): number {
  const {count, step} = request as phase0.BeaconBlocksByRangeRequest;
  // step is deprecated: a responder may answer a larger step with a single block
  return Math.min(step > 1 ? 1 : count, maxRequestBlocks(config, fork));
}

/** step must be 1 (phase0: deprecated, a larger one may get a single block); 0 has no meaning at all */
function invalidStep(request: unknown): string | null {
  return (request as phase0.BeaconBlocksByRangeRequest).step === 0 ? "step is 0" : null;
}

const status = (version: 1 | 2): ProtocolVersion => {
  const type = version === 1 ? ssz.phase0.Status : ssz.fulu.Status;
  return {
    name: "status",
    version,
    id: protocolId("status", version),
    sinceFork: version === 1 ? ForkName.phase0 : ForkName.fulu,
    contextBytes: false,
    multiChunk: false,
    requestType: () => type,
    responseType: () => type,
    carriesFork: anyFork,
    maxResponseChunks: one,
  };
};

const metadata = (version: 1 | 2 | 3): ProtocolVersion => {
  const type = version === 1 ? ssz.phase0.Metadata : version === 2 ? ssz.altair.Metadata : ssz.fulu.Metadata;
  return {
    name: "metadata",
    version,
    id: protocolId("metadata", version),
    sinceFork: version === 1 ? ForkName.phase0 : version === 2 ? ForkName.altair : ForkName.fulu,
    contextBytes: false,
    multiChunk: false,
    requestType: null,
    responseType: () => type,
    carriesFork: anyFork,
    maxResponseChunks: one,
  };
};

const blocksByRange = (version: 1 | 2): ProtocolVersion => ({
  name: "beacon_blocks_by_range",
  version,
  id: protocolId("beacon_blocks_by_range", version),
  sinceFork: ForkName.phase0,
  contextBytes: version === 2,
  multiChunk: true,
  requestType: () => ssz.phase0.BeaconBlocksByRangeRequest,
  responseType: (fork) => sszTypesFor(fork).SignedBeaconBlock,
  carriesFork: version === 1 ? (fork) => fork === ForkName.phase0 : anyFork,
  maxResponseChunks: blocksByRangeChunks,
  invalidRequest: invalidStep,
});

const blocksByRoot = (version: 1 | 2): ProtocolVersion => ({
  name: "beacon_blocks_by_root",
  version,
  id: protocolId("beacon_blocks_by_root", version),
  sinceFork: ForkName.phase0,
  contextBytes: version === 2,
  multiChunk: true,
  requestType: (config, fork) => listOf("Root", ssz.Root, maxRequestBlocks(config, fork)),
  responseType: (fork) => sszTypesFor(fork).SignedBeaconBlock,
  carriesFork: version === 1 ? (fork) => fork === ForkName.phase0 : anyFork,
  maxResponseChunks: (_config, _fork, request) => (request as Uint8Array[]).length,
});

/** Every protocol version, newest version of each protocol first. */
export const PROTOCOLS: readonly ProtocolVersion[] = [
  status(2),
  status(1),
  {
    name: "goodbye",
    version: 1,
    id: protocolId("goodbye", 1),
    sinceFork: ForkName.phase0,
    contextBytes: false,
    multiChunk: false,
    requestType: () => ssz.phase0.Goodbye,
    responseType: () => ssz.phase0.Goodbye,
    carriesFork: anyFork,
    maxResponseChunks: one,
  },
  {
    name: "ping",
    version: 1,
    id: protocolId("ping", 1),
    sinceFork: ForkName.phase0,
    contextBytes: false,
    multiChunk: false,
    requestType: () => ssz.phase0.Ping,
    responseType: () => ssz.phase0.Ping,
    carriesFork: anyFork,
    maxResponseChunks: one,
  },
  metadata(3),
  metadata(2),
  metadata(1),
  blocksByRange(2),
  blocksByRange(1),
  blocksByRoot(2),
  blocksByRoot(1),
  {
    name: "blob_sidecars_by_range",
    version: 1,
    id: protocolId("blob_sidecars_by_range", 1),
    sinceFork: ForkName.deneb,
    contextBytes: true,
    multiChunk: true,
    requestType: () => ssz.deneb.BlobSidecarsByRangeRequest,
    responseType: () => ssz.deneb.BlobSidecar,
    carriesFork: (fork) => atLeast(fork, ForkName.deneb),
    maxResponseChunks: (config, fork, request) => {
      const {startSlot, count} = request as deneb.BlobSidecarsByRangeRequest;
      return Math.min(count * maxBlobsInRange(config, startSlot, count), maxRequestBlobSidecars(config, fork));
    },
  },
  {
    name: "blob_sidecars_by_root",
    version: 1,
    id: protocolId("blob_sidecars_by_root", 1),
    sinceFork: ForkName.deneb,
    contextBytes: true,
    multiChunk: true,
    requestType: (config, fork) => listOf("BlobIdentifier", ssz.deneb.BlobIdentifier, maxRequestBlobSidecars(config, fork)),
    responseType: () => ssz.deneb.BlobSidecar,
    carriesFork: (fork) => atLeast(fork, ForkName.deneb),
    maxResponseChunks: (_config, _fork, request) => (request as deneb.BlobIdentifier[]).length,
  },
  {
    name: "data_column_sidecars_by_range",
    version: 1,
    id: protocolId("data_column_sidecars_by_range", 1),
    sinceFork: ForkName.fulu,
    contextBytes: true,
    multiChunk: true,
    requestType: () => ssz.fulu.DataColumnSidecarsByRangeRequest,
    responseType: () => ssz.fulu.DataColumnSidecar,
    carriesFork: (fork) => atLeast(fork, ForkName.fulu),
    maxResponseChunks: (config, _fork, request) => {
      const {count, columns} = request as fulu.DataColumnSidecarsByRangeRequest;
      return Math.min(count * columns.length, config.MAX_REQUEST_DATA_COLUMN_SIDECARS);
    },
    invalidRequest: (request) => {
      const {columns} = request as fulu.DataColumnSidecarsByRangeRequest;
      return invalidColumns(columns);
    },
  },
  {
    name: "data_column_sidecars_by_root",
    version: 1,
    id: protocolId("data_column_sidecars_by_root", 1),
    sinceFork: ForkName.fulu,
    contextBytes: true,
    multiChunk: true,
    requestType: (config) => listOf("DataColumnsByRootIdentifier", ssz.fulu.DataColumnsByRootIdentifier, config.MAX_REQUEST_BLOCKS_DENEB),
    responseType: () => ssz.fulu.DataColumnSidecar,
    carriesFork: (fork) => atLeast(fork, ForkName.fulu),
    maxResponseChunks: (config, _fork, request) => {
      const total = (request as fulu.DataColumnsByRootIdentifier[]).reduce((sum, id) => sum + id.columns.length, 0);
      return Math.min(total, config.MAX_REQUEST_DATA_COLUMN_SIDECARS);
    },
    invalidRequest: (request) => {
      for (const id of request as fulu.DataColumnsByRootIdentifier[]) {
        const problem = invalidColumns(id.columns);
        if (problem) return problem;
      }
      return null;
    },
  },
  {
    name: "light_client_bootstrap",
    version: 1,
    id: protocolId("light_client_bootstrap", 1),
    sinceFork: ForkName.altair,
    contextBytes: true,
    multiChunk: false,
    requestType: () => ssz.Root,
    responseType: (fork) => lightClientTypes(fork).LightClientBootstrap,
    carriesFork: (fork) => atLeast(fork, ForkName.altair),
    maxResponseChunks: one,
  },
  {
    name: "light_client_updates_by_range",
    version: 1,
    id: protocolId("light_client_updates_by_range", 1),
    sinceFork: ForkName.altair,
    contextBytes: true,
    multiChunk: true,
    requestType: () => ssz.altair.LightClientUpdatesByRange,
    responseType: (fork) => lightClientTypes(fork).LightClientUpdate,
    carriesFork: (fork) => atLeast(fork, ForkName.altair),
    maxResponseChunks: (_config, _fork, request) => Math.min(Number((request as altair.LightClientUpdatesByRange).count), MAX_REQUEST_LIGHT_CLIENT_UPDATES),
  },
  {
    name: "light_client_finality_update",
    version: 1,
    id: protocolId("light_client_finality_update", 1),
    sinceFork: ForkName.altair,
    contextBytes: true,
    multiChunk: false,
    requestType: null,
    responseType: (fork) => lightClientTypes(fork).LightClientFinalityUpdate,
    carriesFork: (fork) => atLeast(fork, ForkName.altair),
    maxResponseChunks: one,
  },
  {
    name: "light_client_optimistic_update",
    version: 1,
    id: protocolId("light_client_optimistic_update", 1),
    sinceFork: ForkName.altair,
    contextBytes: true,
    multiChunk: false,
    requestType: null,
    responseType: (fork) => lightClientTypes(fork).LightClientOptimisticUpdate,
    carriesFork: (fork) => atLeast(fork, ForkName.altair),
    maxResponseChunks: one,
  },
];

/** The light-client types of a fork from altair on (earlier forks have none: altair's stand in, never carried). */
function lightClientTypes(fork: ForkName) {
  return sszTypesFor(atLeast(fork, ForkName.altair) ? (fork as ForkPostAltair) : ForkName.altair);
}

function invalidColumns(columns: number[]): string | null {
  const bad = columns.find((c) => c >= NUMBER_OF_COLUMNS);
  return bad === undefined ? null : `column index ${bad} is not below NUMBER_OF_COLUMNS (${NUMBER_OF_COLUMNS})`;
}

/** The versions of one protocol, newest first. */
export function versionsOf(name: ProtocolName): ProtocolVersion[] {
  return PROTOCOLS.filter((p) => p.name === name);
}

/** The versions a requester offers at `fork`, newest first: multistream-select then picks the newest the peer has. */
export function versionsToOffer(name: ProtocolName, fork: ForkName): ProtocolVersion[] {
  return versionsOf(name).filter((p) => atLeast(fork, p.sinceFork));
}

export function protocolById(id: string): ProtocolVersion | undefined {
  return PROTOCOLS.find((p) => p.id === id);
}
