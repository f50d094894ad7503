import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {EMPTY_BLOBS_BUNDLE} from "../../../src/execution/engine.ts";
import type {PublishedSidecars} from "../../../src/chain/blobs/published.ts";
import {ForkName, ForkSeq, SLOTS_PER_EPOCH} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type CachedBeaconStateExecutions,
  computeEpochAtSlot,
  computeStartSlotAtEpoch,
  createCachedBeaconState,
  createPubkeyCache,
  getEffectiveBalanceIncrementsZeroInactive,
  processSlots,
} from "@lodestar/state-transition";
import {ssz, type BeaconBlock, type Root, type SignedBeaconBlock, type altair, type bellatrix, type fulu, type phase0} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import {EventEmitter} from "node:events";
import type {ApiContext} from "../../../src/api/impl/index.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import type {BlockErrorCode, ChainEvents, IBeaconChain, ProduceBlockArgs, ProducedBlock} from "../../../src/chain/interface.ts";
import {ProducedPayloads} from "../../../src/chain/producedPayloads.ts";
import {anchorProtoBlock} from "../../../src/chain/protoBlock.ts";
import {devChainConfig, type DevFork} from "../../../src/config/chainConfig.ts";
import {NodeIdentity} from "../../../src/network/identity.ts";
import {ForkChoice} from "../../../src/forkchoice/index.ts";
import {ValidatorLiveness} from "../../../src/chain/liveness.ts";
import {TestLightClient} from "./lightClientDouble.ts";
import type {OperationPools, PoolEvents} from "../../../src/pools/index.ts";
import {PoolError} from "../../../src/pools/types.ts";

/**
 * A small chain double over a real fulu genesis (64 interop validators, head = genesis), and
 * pool and node doubles that record what they are given. The real chain's end-to-end tests
 * come from the chain's own suite.
 */

const rootEq = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** A BlockError as the chain throws it (name and code are what the API looks at). */
export function blockError(code: BlockErrorCode, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), {name: "BlockError", code});
}

export class TestChain implements IBeaconChain {
  readonly config: BeaconConfig;
  readonly genesisTime: number;
  readonly genesisValidatorsRoot: Root;
  readonly emitter = new EventEmitter<ChainEvents>();
  /** the real record: tests feed it with record() */
  readonly liveness = new ValidatorLiveness();
  readonly lightClient = new TestLightClient();
  readonly genesisBlock: fulu.SignedBeaconBlock;
  readonly genesisRoot: Root;
  /** a real fork choice anchored at the genesis block; tests add nodes with onTick/onBlock */
  readonly forkChoice: ForkChoice;
  private readonly producedPayloads = new ProducedPayloads();
  /** the wall-clock slot the double reports */
  slot = 0;
  readonly imported: SignedBeaconBlock[] = [];
  /** when set, importBlock throws it */
  importError: Error | null = null;
  readonly produced: ProduceBlockArgs[] = [];
  readonly state: CachedBeaconStateAllForks;
  /** blocks and canonical states a test adds beyond genesis (the head stays genesis) */
  private readonly addedBlocks = new Map<string, SignedBeaconBlock>();
  private readonly addedStates = new Map<number, CachedBeaconStateAllForks>();

  constructor(state: CachedBeaconStateAllForks) {
    this.state = state;
    this.config = state.config;
    this.genesisTime = state.genesisTime;
    this.genesisValidatorsRoot = state.genesisValidatorsRoot;
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.stateRoot = state.hashTreeRoot();
    this.genesisBlock = block;
    this.genesisRoot = ssz.fulu.BeaconBlock.hashTreeRoot(block.message);
    const executionHash = state.config.getForkSeq(state.slot) >= ForkSeq.bellatrix ? (state as CachedBeaconStateExecutions).latestExecutionPayloadHeader.blockHash : null;
    this.forkChoice = new ForkChoice({
      anchor: anchorProtoBlock(state, toRootHex(this.genesisRoot), executionHash),
      currentSlot: 0,
      opts: {slotsPerEpoch: SLOTS_PER_EPOCH, secondsPerSlot: state.config.SECONDS_PER_SLOT, proposerScoreBoostPercent: 40},
      getJustifiedBalances: () => Array.from(getEffectiveBalanceIncrementsZeroInactive(state)),
    });
  }

  currentSlot(): number {
    return this.slot;
  }
  /** set by a test: the disk is full */
  writesPaused: Error | null = null;
  writesPausedError(): Error | null {
    return this.writesPaused;
  }
  getHead() {
    return {slot: 0, blockRoot: this.genesisRoot, stateRoot: this.state.hashTreeRoot(), executionBlockHash: new Uint8Array(32)};
  }
  getHeadState(): CachedBeaconStateAllForks {
    return this.state;
  }
  getFinalizedCheckpoint(): phase0.Checkpoint {
    return {epoch: 0, root: this.genesisRoot};
  }
  getJustifiedCheckpoint(): phase0.Checkpoint {
    return {epoch: 0, root: this.genesisRoot};
  }
  async getHeadStateAtEpoch(epoch: number): Promise<CachedBeaconStateAllForks> {
    const slot = computeStartSlotAtEpoch(epoch);
    return slot <= this.state.slot ? this.state : processSlots(this.state.clone(), slot);
  }
  async getStateByBlockRoot(blockRoot: Root) {
    return rootEq(blockRoot, this.genesisRoot) ? this.state : null;
  }
  async getStateBySlot(slot: number) {
    return slot === 0 ? this.state : (this.addedStates.get(slot) ?? null);
  }
  async getBlockPreState(block: BeaconBlock) {
    return rootEq(block.parentRoot, this.genesisRoot) ? processSlots(this.state.clone(), block.slot) : null;
  }
  /** Makes a block (a child of genesis, canonical) known by root and slot; returns its root. */
  addBlock(signedBlock: SignedBeaconBlock): Root {
    const root = this.config.getForkTypes(signedBlock.message.slot).BeaconBlock.hashTreeRoot(signedBlock.message);
    this.addedBlocks.set(toHex(root), signedBlock);
    return root;
  }
  /** Makes a state the canonical state at its slot. */
  addState(state: CachedBeaconStateAllForks): void {
    this.addedStates.set(state.slot, state);
  }
  async getStateByStateRoot(stateRoot: Root) {
    return rootEq(stateRoot, this.state.hashTreeRoot()) ? this.state : null;
  }
  async getBlockByRoot(blockRoot: Root) {
    return rootEq(blockRoot, this.genesisRoot) ? this.genesisBlock : (this.addedBlocks.get(toHex(blockRoot)) ?? null);
  }
  async getBlockBytesByRoot(blockRoot: Root) {
    const block = await this.getBlockByRoot(blockRoot);
    return block && this.config.getForkTypes(block.message.slot).SignedBeaconBlock.serialize(block);
  }
  async getCanonicalBlockRootAtSlot(slot: number) {
    const block = await this.getCanonicalBlockAtSlot(slot);
    return block && this.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message);
  }
  async getCanonicalBlockAtSlot(slot: number) {
    return slot === 0 ? this.genesisBlock : ([...this.addedBlocks.values()].find((b) => b.message.slot === slot) ?? null);
  }
  isCanonical(blockRoot: Root): boolean {
    return rootEq(blockRoot, this.genesisRoot) || this.addedBlocks.has(toHex(blockRoot));
  }
  /** roots (0x hex) a test marks as imported optimistically */
  optimisticRoots = new Set<string>();
  isOptimistic(blockRoot: Root): boolean {
    return this.optimisticRoots.has(toHex(blockRoot));
  }
  isHeadOptimistic(): boolean {
    return this.isOptimistic(this.getHead().blockRoot);
  }
  async importBlock(signedBlock: SignedBeaconBlock) {
    if (this.importError) throw this.importError;
    this.imported.push(signedBlock);
    return {blockRoot: new Uint8Array(32), slot: signedBlock.message.slot, isHead: true};
  }
  async produceBlock(args: ProduceBlockArgs): Promise<ProducedBlock> {
    this.produced.push(args);
    const block = ssz.fulu.BeaconBlock.defaultValue();
    block.slot = args.slot;
    block.proposerIndex = 3;
    block.parentRoot = this.genesisRoot;
    block.body.randaoReveal = args.randaoReveal;
    block.body.graffiti = args.graffiti ?? new Uint8Array(32);
    // a payload of its own per slot, kept as the real chain keeps it (to publish the block blinded)
    block.body.executionPayload.blockHash = new Uint8Array(32).fill(args.slot % 256);
    block.body.executionPayload.transactions = [Uint8Array.from([2, args.slot % 256])];
    return this.producedPayloads.remember({block, fork: ForkName.fulu, executionPayloadValue: 12345n, consensusBlockValue: 7n, blobsBundle: EMPTY_BLOBS_BUNDLE});
  }
  getProducedPayload(blockHash: Uint8Array) {
    return this.producedPayloads.get(blockHash);
  }
  getProducedBlobs(blockHash: Uint8Array) {
    return this.producedPayloads.getBlobs(blockHash);
  }
  // the sample chain's blocks commit to no blobs
  acceptPublishedBlobs(): PublishedSidecars {
    return {kind: "blobs", sidecars: []};
  }
  async getBlobSidecars() {
    return null;
  }
  async getDataColumnSidecars() {
    return [];
  }
  async getDataColumnSidecarBytes() {
    return null;
  }
  async produceAttestationData(committeeIndex: number, slot: number): Promise<phase0.AttestationData> {
    return {slot, index: committeeIndex, beaconBlockRoot: this.genesisRoot, source: {epoch: 0, root: new Uint8Array(32)}, target: {epoch: 0, root: this.genesisRoot}};
  }
}

/** Slots at which the pool doubles reject a submission, to exercise the batch failure path. */
export const REJECTED_SLOT = 7;

function recordingPools() {
  const submitted = {attestations: [] as unknown[], aggregates: [] as unknown[], syncMessages: [] as unknown[], contributions: [] as unknown[]};
  const check = (slot: number) => {
    if (slot === REJECTED_SLOT) throw new PoolError(`rejected: slot ${slot}`);
  };
  const aggregate = ssz.electra.Attestation.defaultValue();
  aggregate.data.slot = 1;
  const pools = {
    emitter: new EventEmitter<PoolEvents>(),
    attestations: {
      async submitAttestation(att: {data: phase0.AttestationData}) {
        check(att.data.slot);
        submitted.attestations.push(att);
      },
      async submitAggregateAndProof(signed: {message: {aggregate: {data: phase0.AttestationData}}}) {
        check(signed.message.aggregate.data.slot);
        submitted.aggregates.push(signed);
      },
      getAggregate: (slot: number) => (slot === aggregate.data.slot ? aggregate : null),
    },
    syncCommittee: {
      async submitSyncCommitteeMessage(msg: altair.SyncCommitteeMessage) {
        check(msg.slot);
        submitted.syncMessages.push(msg);
      },
      async submitContributionAndProof(signed: altair.SignedContributionAndProof) {
        check(signed.message.contribution.slot);
        submitted.contributions.push(signed);
      },
      produceContribution: (slot: number, subcommitteeIndex: number, beaconBlockRoot: Uint8Array) =>
        slot === 1 ? {...ssz.altair.SyncCommitteeContribution.defaultValue(), slot, subcommitteeIndex, beaconBlockRoot} : null,
    },
  };
  return {pools: pools as unknown as OperationPools, submitted, aggregate};
}

export type TestContext = ReturnType<typeof createTestContext>;

/** `genesisFork` other than fulu: for answers that depend on the state's fork (the double's genesis block stays a fulu block). */
export function createTestContext(validatorCount = 64, genesisFork: DevFork = "fulu") {
  const chainConfig = devChainConfig({secondsPerSlot: 2, genesisFork, forkEpochs: {}});
  const genesis = createInteropGenesisState(chainConfig, validatorCount, Math.floor(Date.now() / 1000));
  // fresh epoch caches under a BeaconConfig that knows the genesis validators root
  const config = createBeaconConfig(chainConfig, genesis.genesisValidatorsRoot);
  const state = createCachedBeaconState(genesis, {config, pubkeyCache: createPubkeyCache()});
  const chain = new TestChain(state);
  const {pools, submitted, aggregate} = recordingPools();
  const feeRecipients = new Map<number, Uint8Array>();
  const node = {
    syncing: false,
    version: "beacon-gateway/v0.1.0-test/linux-x64",
    graffitiSetting: new TextEncoder().encode("node graffiti".padEnd(32, "\0")) as Uint8Array,
    graffiti: () => node.graffitiSetting,
    setGraffiti: async (value: Uint8Array) => void (node.graffitiSetting = value),
    // a fixed key, kept in memory only
    identity: new NodeIdentity(new Uint8Array(32).fill(7), {config, currentEpoch: () => computeEpochAtSlot(chain.slot)}),
    setProposerFeeRecipient: (index: number, address: Uint8Array) => void feeRecipients.set(index, address),
    registrations: [] as bellatrix.ValidatorRegistrationV1[],
    setValidatorRegistration: (registration: bellatrix.ValidatorRegistrationV1) => void node.registrations.push(registration),
    isSyncing: () => node.syncing,
  };
  const ctx: ApiContext = {chain, pools, node};
  return {ctx, chain, state, node, submitted, aggregate, feeRecipients};
}
