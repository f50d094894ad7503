import {createChainForkConfig, type BeaconConfig, type ChainConfig} from "@lodestar/config";
import {DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type SignedBeaconBlock, type phase0} from "@lodestar/types";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {BeaconChain} from "../../../../../src/chain/beaconChain.ts";
import {initChain} from "../../../../../src/chain/init.ts";
import {Clock} from "../../../../../src/clock/clock.ts";
import {type DevFork, devChainConfig} from "../../../../../src/config/chainConfig.ts";
import {BeaconDb} from "../../../../../src/db/beaconDb.ts";
import {MockExecutionEngine} from "../../../../../src/execution/mockEngine.ts";
import type {BlobsBundle, ExecutionEngine} from "../../../../../src/execution/engine.ts";
import {createGossipValidators, type GossipValidatorFn} from "../../../../../src/network/gossip/validation/index.ts";
import {type GossipType, type ParsedTopic, forkDigestHex} from "../../../../../src/network/gossip/topics.ts";

export const SECONDS_PER_SLOT = 2;
const GENESIS_TIME = 1_700_000_000;

/**
 * A real chain (genesis of 64 interop validators, the mock engine, a LevelDB in a temp dir) whose
 * clock reads a time the test sets, with the gossip validators over it and its pools.
 */
export interface ChainEnv {
  chain: BeaconChain;
  config: BeaconConfig;
  validators: Record<GossipType, GossipValidatorFn>;
  /** blocks the block validator handed to onFutureBlock */
  futureBlocks: SignedBeaconBlock[];
  /** the background import of the last block ACCEPTed: the imported block, or the error it was refused with */
  lastGossipImport(): Promise<unknown> | undefined;
  /** total milliseconds the validators waited through `sleep` */
  slept: {ms: number};
  setTime(slot: number, msIntoSlot?: number): void;
  topic(type: GossipType, subnet?: number): ParsedTopic;
  /** a block of the chain's proposer for `slot` on the current head, produced by the chain and signed */
  produceBlock(slot: number): Promise<SignedBeaconBlock>;
  /** the same, with the blobs its payload carries */
  produceBlockContents(slot: number): Promise<{block: SignedBeaconBlock; blobsBundle: BlobsBundle}>;
  signBlock(block: BeaconBlock, signer?: number): SignedBeaconBlock;
  headRoot(): Uint8Array;
  attestationData(slot: number): Promise<phase0.AttestationData>;
  signAttestation(data: phase0.AttestationData, validatorIndex: number): Uint8Array;
  /** which subnets a validator of the node aggregates on (the validators' `aggregatesOn`; all of them to start) */
  setAggregatesOn(aggregatesOn: (subnet: number, slot: number) => boolean): void;
  sign(validatorIndex: number, signingRoot: Uint8Array): Uint8Array;
  close(): Promise<void>;
}

export interface ChainEnvOptions {
  /** blobs in each payload the mock engine builds */
  blobsPerBlock?: number;
  /** how long an import waits for a block's sidecars */
  dataAvailabilityWaitMs?: number;
  /** the execution engine (a MockExecutionEngine unless given) */
  engine?: ExecutionEngine;
  /** the state cache's budget (the chain's default unless given) */
  stateCacheBytes?: number;
}

/**
 * The mock engine without its blob pool (engine_getBlobs): the blocks of these tests are built by
 * the chain's own engine, whose pool would otherwise hand a waiting block its blobs, and the
 * tests are of the sidecars that come over gossip and req/resp.
 */
function engineWithoutBlobPool(engine: MockExecutionEngine): ExecutionEngine {
  return {
    notifyNewPayload: (fork, payload) => engine.notifyNewPayload(fork, payload),
    notifyForkchoiceUpdate: () => engine.notifyForkchoiceUpdate(),
    buildPayload: (...args) => engine.buildPayload(...args),
  };
}

export async function createChainEnv(genesisFork: DevFork, overrides: Partial<ChainConfig> = {}, opts: ChainEnvOptions = {}): Promise<ChainEnv> {
  const dir = mkdtempSync(join(tmpdir(), "bg-gossip-"));
  const chainConfig = createChainForkConfig({
    ...(devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork, forkEpochs: {}}) as unknown as ChainConfig),
    ...overrides,
  });
  const db = await BeaconDb.open(join(dir, "beacon"), chainConfig);
  let now = GENESIS_TIME * 1000;
  const slept = {ms: 0};
  const chain = await initChain(
    chainConfig,
    db,
    opts.engine ?? engineWithoutBlobPool(new MockExecutionEngine({blobsPerBlock: opts.blobsPerBlock})),
    (t) => new Clock(t, SECONDS_PER_SLOT, SLOTS_PER_EPOCH, () => now),
    {validatorCount: 64, genesisTime: GENESIS_TIME},
    {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20), dataAvailabilityWaitMs: opts.dataAvailabilityWaitMs, stateCacheBytes: opts.stateCacheBytes,
      // the wait for sidecars moves the test's clock, not the wall clock's
      dataAvailabilitySleep: async (ms) => {
        now += ms;
      },
    }
  );
  const config = chain.config;
  const futureBlocks: SignedBeaconBlock[] = [];
  const gossipImports: Array<Promise<unknown>> = [];
  let aggregatesOn = (_subnet: number, _slot: number): boolean => true;
  const validators = createGossipValidators({
    config,
    chain,
    pools: chain.pools,
    clock: chain.clock,
    aggregatesOn: (subnet, slot) => aggregatesOn(subnet, slot),
    onFutureBlock: (block) => futureBlocks.push(block),
    // the outcome (imported or refused) is awaited by the test that cares
    importBlock: (block) => void gossipImports.push(chain.importBlock(block).catch((e: unknown) => e)),
    sleep: async (ms) => {
      now += ms;
      slept.ms += ms;
    },
  });
  const sign = (validatorIndex: number, signingRoot: Uint8Array) => interopSecretKey(validatorIndex).sign(signingRoot).toBytes();
  const signBlock = (block: BeaconBlock, signer = block.proposerIndex): SignedBeaconBlock => {
    const domain = config.getDomain(block.slot, DOMAIN_BEACON_PROPOSER);
    const type = config.getForkTypes(block.slot).BeaconBlock;
    return {message: block, signature: sign(signer, computeSigningRoot(type, block as never, domain))} as SignedBeaconBlock;
  };
  const produceBlockContents = async (slot: number) => {
    const proposer = (await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot))).epochCtx.getBeaconProposer(slot);
    const randao = sign(proposer, computeSigningRoot(ssz.Epoch, computeEpochAtSlot(slot), config.getDomain(slot, DOMAIN_RANDAO)));
    const {block, blobsBundle} = await chain.produceBlock({slot, randaoReveal: randao});
    return {block: signBlock(block), blobsBundle};
  };
  return {
    chain,
    config,
    validators,
    setAggregatesOn: (fn) => void (aggregatesOn = fn),
    futureBlocks,
    lastGossipImport: () => gossipImports[gossipImports.length - 1],
    slept,
    setTime: (slot, msIntoSlot = 0) => {
      now = (GENESIS_TIME + slot * SECONDS_PER_SLOT) * 1000 + msIntoSlot;
    },
    topic: (type, subnet) => {
      const boundary = config.getForkBoundaryAtEpoch(computeEpochAtSlot(chain.clock.currentSlot()));
      return {type, subnet, boundary, forkDigest: forkDigestHex(config, boundary)};
    },
    produceBlock: async (slot) => (await produceBlockContents(slot)).block,
    produceBlockContents,
    signBlock,
    headRoot: () => chain.getHead().blockRoot,
    attestationData: (slot) => chain.produceAttestationData(0, slot),
    signAttestation: (data, validatorIndex) => {
      const domain = config.getDomain(data.slot, DOMAIN_BEACON_ATTESTER, computeStartSlotAtEpoch(data.target.epoch));
      return sign(validatorIndex, computeSigningRoot(ssz.phase0.AttestationData, data, domain));
    },
    sign,
    close: async () => {
      await chain.close();
      await db.close();
      rmSync(dir, {recursive: true, force: true});
    },
  };
}

/** A fresh copy of a block (ssz caches roots on objects, so edits must not touch the original). */
export function copyBlock(config: BeaconConfig, block: BeaconBlock): BeaconBlock {
  const type = config.getForkTypes(block.slot).BeaconBlock;
  return type.fromJson(type.toJson(block as never)) as BeaconBlock;
}
