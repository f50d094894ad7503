import type {SecretKey} from "@chainsafe/blst";
import type {BeaconConfig} from "@lodestar/config";
import {DOMAIN_BEACON_PROPOSER, type ForkName, ForkSeq, isForkPostDeneb, isForkPostElectra} from "@lodestar/params";
import {computeSigningRoot, executionPayloadToPayloadHeader, signedBlindedBlockToFull} from "@lodestar/state-transition";
import type {BuilderBid, ExecutionPayload, SignedBeaconBlock, SignedBlindedBeaconBlock, SignedBuilderBid, capella} from "@lodestar/types";
import {toHex, toPubkeyHex, toRootHex} from "@lodestar/utils";
import type {BlobsBundle, ExecutionEngine} from "../execution/engine.ts";
import {mockBlockHash} from "../execution/mockEngine.ts";
import {builderDomain, isValidBuilderSignature, isValidRegistrationSignature} from "../execution/validatorRegistration.ts";
import {getLogger} from "../log.ts";
import type {MockBuilderFault} from "./faults.ts";
import {expectedGasLimit} from "./bidValidation.ts";
import {type SignedValidatorRegistration, type UnblindedPayload, builderTypes, isBuilderFork, relayPublishes} from "./types.ts";

/**
 * `beacon-gateway mock-builder`'s relay: it keeps validator registrations (builder-specs
 * `process_registration`), builds a payload through the Engine API for each header asked of it
 * (`is_eligible_for_bid`: the proposal's slot, parent hash and proposer, a registered key), marks
 * it with the extra_data text below, gives it the registered fee recipient and moves its gas limit
 * toward the registered one, signs the bid with its own key, and reveals the payload for a blinded
 * block signed by the proposer over that very header. From fulu it publishes the full block itself.
 *
 * The engine's payload is re-hashed after those changes the way the dev chain's mock engine
 * hashes payloads: the mock builder works with `mock-engine` (or a node's in-process mock), not
 * with a real execution client, whose block hash is a keccak of the RLP header.
 *
 * Faults, for tests: no bid, a late bid, a bad signature, a wrong parent, a higher or lower value,
 * the payload withheld after the signed blinded block arrives.
 */

export const MOCK_BUILDER_EXTRA_DATA = "beacon-gateway mock-builder";

/** builder-specs bellatrix/builder.md MAX_REGISTRATION_LOOKAHEAD */
const MAX_REGISTRATION_LOOKAHEAD = 10;
/** proposals whose attributes are kept (a few slots) */
const KEPT_PROPOSALS = 8;
/** built payloads kept for unblinding */
const KEPT_PAYLOADS = 16;

const log = getLogger("builder");

/** A request the relay refuses (400, with the reason). */
export class BuilderRequestError extends Error {
  readonly status: number;
  constructor(message: string, status = 400) {
    super(message);
    this.status = status;
  }
}

/** The beacon node's `payload_attributes` event, reduced to what a bid needs. */
export interface ProposalAttributes {
  slot: number;
  proposerIndex: number;
  parentHash: Uint8Array;
  parentBlockNumber: number;
  parentBlockRoot: Uint8Array;
  timestamp: number;
  prevRandao: Uint8Array;
  /** capella on */
  withdrawals?: capella.Withdrawal[];
}

export interface MockBuilderDeps {
  config: BeaconConfig;
  engine: ExecutionEngine;
  secretKey: SecretKey;
  /** wei bid for each payload (the fault `higher-value` bids 100 times it, `lower-value` 1 wei) */
  bidValue: bigint;
  /** how long a late bid waits before it answers */
  lateBidMs: number;
  /** the public key of a validator index (from the beacon node) */
  proposerPubkey(index: number): Promise<Uint8Array>;
  /** fulu on: publishes the unblinded block with its blobs through the beacon node */
  publishBlock(fork: ForkName, signed: SignedBeaconBlock, blobsBundle: BlobsBundle | null): Promise<void>;
  nowSeconds?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface BuiltBid {
  fork: ForkName;
  proposerPubkey: Uint8Array;
  payload: ExecutionPayload;
  blobsBundle: BlobsBundle | null;
  header: BuilderBid["header"];
}

export class MockBuilder {
  fault: MockBuilderFault = "none";
  readonly pubkey: Uint8Array;
  private readonly registrations = new Map<string, SignedValidatorRegistration["message"]>();
  private readonly proposals = new Map<string, ProposalAttributes>();
  private readonly built = new Map<string, BuiltBid>();
  private readonly nowSeconds: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  private readonly deps: MockBuilderDeps;

  constructor(deps: MockBuilderDeps) {
    this.deps = deps;
    this.pubkey = deps.secretKey.toPublicKey().toBytes();
    this.nowSeconds = deps.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
    this.sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  registrationOf(pubkey: Uint8Array): SignedValidatorRegistration["message"] | undefined {
    return this.registrations.get(toPubkeyHex(pubkey));
  }

  /** builder-specs `process_registration`, without the validator-set check (the mock has no state). All or nothing. */
  registerValidators(list: SignedValidatorRegistration[]): void {
    const now = this.nowSeconds();
    list.forEach((signed, i) => {
      const {message} = signed;
      if (message.timestamp > now + MAX_REGISTRATION_LOOKAHEAD) throw new BuilderRequestError(`registration ${i}: timestamp ${message.timestamp} is in the future`);
      const previous = this.registrations.get(toPubkeyHex(message.pubkey));
      if (previous && message.timestamp < previous.timestamp) throw new BuilderRequestError(`registration ${i}: timestamp older than the registration kept`);
      if (!isValidRegistrationSignature(this.deps.config, signed)) throw new BuilderRequestError(`registration ${i}: invalid signature`);
    });
    for (const {message} of list) this.registrations.set(toPubkeyHex(message.pubkey), message);
  }

  onPayloadAttributes(attrs: ProposalAttributes): void {
    this.proposals.set(proposalKey(attrs.slot, attrs.parentHash), attrs);
    while (this.proposals.size > KEPT_PROPOSALS) this.proposals.delete(this.proposals.keys().next().value as string);
  }

  /** `getHeader`: a bid, or null (204) when the relay has none for this proposal. */
  async getHeader(slot: number, parentHash: Uint8Array, pubkey: Uint8Array): Promise<{version: ForkName; bid: SignedBuilderBid} | null> {
    const fork = this.deps.config.getForkName(slot);
    if (!isBuilderFork(fork)) throw new BuilderRequestError(`no builder blocks at ${fork}`);
    const fault = this.fault;
    if (fault === "no-bid") return null;
    const registration = this.registrationOf(pubkey);
    if (!registration) throw new BuilderRequestError(`validator ${toPubkeyHex(pubkey)} is not registered`);
    const proposal = this.proposals.get(proposalKey(slot, parentHash));
    // no payload_attributes for this slot on this parent: the relay cannot build (is_eligible_for_bid)
    if (!proposal) return null;
    const proposer = await this.deps.proposerPubkey(proposal.proposerIndex);
    if (!Buffer.from(proposer).equals(pubkey)) throw new BuilderRequestError(`${toPubkeyHex(pubkey)} is not the proposer of slot ${slot}`);

    const built = await this.deps.engine.buildPayload(
      fork,
      {blockHash: parentHash, blockNumber: proposal.parentBlockNumber, gasLimit: 0},
      {
        timestamp: proposal.timestamp,
        prevRandao: proposal.prevRandao,
        suggestedFeeRecipient: registration.feeRecipient,
        withdrawals: proposal.withdrawals,
        parentBeaconBlockRoot: isForkPostDeneb(fork) ? proposal.parentBlockRoot : undefined,
      }
    );
    const payload = built.payload;
    payload.extraData = new TextEncoder().encode(MOCK_BUILDER_EXTRA_DATA);
    payload.feeRecipient = registration.feeRecipient;
    payload.gasLimit = expectedGasLimit(payload.gasLimit, registration.gasLimit);
    payload.blockHash = mockBlockHash(fork, payload);
    const header = executionPayloadToPayloadHeader(ForkSeq[fork], payload);
    const blobsBundle = isForkPostDeneb(fork) ? built.blobsBundle : null;
    this.built.set(toRootHex(payload.blockHash), {fork, proposerPubkey: pubkey, payload, blobsBundle, header});
    while (this.built.size > KEPT_PAYLOADS) this.built.delete(this.built.keys().next().value as string);

    const bid = {header, value: this.valueFor(fault), pubkey: this.pubkey} as Record<string, unknown>;
    if (isForkPostDeneb(fork)) bid.blobKzgCommitments = built.blobsBundle.commitments;
    if (isForkPostElectra(fork)) bid.executionRequests = built.executionRequests;
    if (fault === "wrong-parent") (header as {parentHash: Uint8Array}).parentHash = new Uint8Array(32).fill(0xee);
    const message = bid as unknown as BuilderBid;
    const signingRoot = computeSigningRoot(builderTypes(fork).BuilderBid as never, message, builderDomain(this.deps.config));
    // a bad signature: the bid signed over another root
    const signature = this.deps.secretKey.sign(fault === "bad-signature" ? new Uint8Array(32).fill(1) : signingRoot).toBytes();
    if (fault === "late-bid") await this.sleep(this.deps.lateBidMs);
    log.info({slot, parentHash: toRootHex(parentHash), blockHash: toRootHex(payload.blockHash), value: String(message.value), fault}, "bid");
    return {version: fork, bid: {message, signature} as SignedBuilderBid};
  }

  /**
   * `submitBlindedBlock`: the payload of a header this relay bid, for a block the proposer signed
   * over it (`verify_blinded_block_signature`). Before fulu it is returned; from fulu (`v2`) the
   * relay publishes the full block.
   */
  async submitBlindedBlock(signed: SignedBlindedBeaconBlock, v2: boolean): Promise<{fork: ForkName; payload: UnblindedPayload} | null> {
    const slot = signed.message.slot;
    const fork = this.deps.config.getForkName(slot);
    if (!isBuilderFork(fork)) throw new BuilderRequestError(`no builder blocks at ${fork}`);
    if (v2 !== relayPublishes(fork)) throw new BuilderRequestError(v2 ? `submitBlindedBlockV2 is for fulu blocks on, not ${fork}` : `from fulu, blinded blocks go to /eth/v2/builder/blinded_blocks`);
    const header = signed.message.body.executionPayloadHeader;
    const kept = this.built.get(toRootHex(header.blockHash));
    if (!kept) throw new BuilderRequestError(`unknown payload ${toRootHex(header.blockHash)}: not one this relay bid`);
    const headerType = this.deps.config.getPostBellatrixForkTypes(slot).ExecutionPayloadHeader;
    if (!Buffer.from(headerType.hashTreeRoot(header as never)).equals(headerType.hashTreeRoot(kept.header as never))) {
      throw new BuilderRequestError("the block's execution payload header is not the one bid");
    }
    const signingRoot = computeSigningRoot(this.deps.config.getPostBellatrixForkTypes(slot).BlindedBeaconBlock as never, signed.message, this.deps.config.getDomain(slot, DOMAIN_BEACON_PROPOSER));
    if (!isValidBuilderSignature(signingRoot, kept.proposerPubkey, signed.signature)) throw new BuilderRequestError("invalid proposer signature on the blinded block");
    if (this.fault === "withhold") {
      log.warn({slot, blockHash: toRootHex(header.blockHash)}, "payload withheld (fault)");
      throw new BuilderRequestError("payload withheld by the mock builder (fault injected)", 500);
    }
    log.info({slot, blockHash: toRootHex(header.blockHash), graffiti: toHex(signed.message.body.graffiti)}, "revealing payload");
    if (v2) {
      await this.deps.publishBlock(fork, signedBlindedBlockToFull(fork, signed, kept.payload), kept.blobsBundle);
      return null;
    }
    const payload = kept.blobsBundle ? {executionPayload: kept.payload, blobsBundle: kept.blobsBundle} : kept.payload;
    return {fork, payload: payload as UnblindedPayload};
  }

  private valueFor(fault: MockBuilderFault): bigint {
    if (fault === "higher-value") return this.deps.bidValue * 100n;
    if (fault === "lower-value") return 1n;
    return this.deps.bidValue;
  }
}

function proposalKey(slot: number, parentHash: Uint8Array): string {
  return `${slot}:${toRootHex(parentHash)}`;
}
