import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  computeStartSlotAtEpoch,
  createCachedBeaconState,
  createPubkeyCache,
  processSlots,
} from "@lodestar/state-transition";
import {ssz, type Root, type SignedBeaconBlock, type altair, type fulu, type phase0} from "@lodestar/types";
import {EventEmitter} from "node:events";
import type {ApiContext} from "../../../src/api/impl/index.ts";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import type {BlockErrorCode, ChainEvents, IBeaconChain, ProduceBlockArgs, ProducedBlock} from "../../../src/chain/interface.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";
import type {OperationPools} from "../../../src/pools/index.ts";
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
  readonly genesisBlock: fulu.SignedBeaconBlock;
  readonly genesisRoot: Root;
  /** the wall-clock slot the double reports */
  slot = 0;
  readonly imported: SignedBeaconBlock[] = [];
  /** when set, importBlock throws it */
  importError: Error | null = null;
  readonly produced: ProduceBlockArgs[] = [];
  readonly state: CachedBeaconStateAllForks;

  constructor(state: CachedBeaconStateAllForks) {
    this.state = state;
    this.config = state.config;
    this.genesisTime = state.genesisTime;
    this.genesisValidatorsRoot = state.genesisValidatorsRoot;
    const block = ssz.fulu.SignedBeaconBlock.defaultValue();
    block.message.stateRoot = state.hashTreeRoot();
    this.genesisBlock = block;
    this.genesisRoot = ssz.fulu.BeaconBlock.hashTreeRoot(block.message);
  }

  currentSlot(): number {
    return this.slot;
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
    return slot === 0 ? this.state : null;
  }
  async getStateByStateRoot(stateRoot: Root) {
    return rootEq(stateRoot, this.state.hashTreeRoot()) ? this.state : null;
  }
  async getBlockByRoot(blockRoot: Root) {
    return rootEq(blockRoot, this.genesisRoot) ? this.genesisBlock : null;
  }
  async getCanonicalBlockAtSlot(slot: number) {
    return slot === 0 ? this.genesisBlock : null;
  }
  isCanonical(blockRoot: Root): boolean {
    return rootEq(blockRoot, this.genesisRoot);
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
    return {block, fork: ForkName.fulu, executionPayloadValue: 12345n, consensusBlockValue: 7n};
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

export function createTestContext(validatorCount = 64) {
  const chainConfig = devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}});
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
    graffiti: () => new TextEncoder().encode("node graffiti".padEnd(32, "\0")),
    setProposerFeeRecipient: (index: number, address: Uint8Array) => void feeRecipients.set(index, address),
    isSyncing: () => node.syncing,
  };
  const ctx: ApiContext = {chain, pools, node};
  return {ctx, chain, state, node, submitted, aggregate, feeRecipients};
}
