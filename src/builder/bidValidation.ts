import type {ChainForkConfig} from "@lodestar/config";
import {type ForkName, isForkPostCapella, isForkPostDeneb} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import type {BuilderBid, SignedBuilderBid, capella, deneb} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {builderDomain, isValidBuilderSignature} from "../execution/validatorRegistration.ts";
import {builderTypes} from "./types.ts";

/**
 * The checks a bid passes before the node signs anything over it: builder-specs
 * bellatrix/validator.md `process_bid` (parent hash, fee recipient, the builder's signature) and
 * what the established clients add (Lighthouse's `verify_builder_bid`: the fork, prev_randao,
 * timestamp, block number, withdrawals root, gas limit, the blob commitments' count). One function
 * per rule; `validateBid` runs them all. A bid that fails one is not used: the node builds locally.
 */

export class InvalidBidError extends Error {
  readonly rule: string;
  constructor(rule: string, message: string) {
    super(`Invalid bid (${rule}): ${message}`);
    this.name = "InvalidBidError";
    this.rule = rule;
  }
}

/** What the bid must agree with: the proposal's state and payload attributes, and the proposer's registration. */
export interface BidExpectations {
  fork: ForkName;
  /** state.latest_execution_payload_header.block_hash */
  parentHash: Uint8Array;
  parentBlockNumber: number;
  parentGasLimit: number;
  /** the payload attributes of the proposal */
  timestamp: number;
  prevRandao: Uint8Array;
  /** capella on: hash_tree_root of the expected withdrawals */
  withdrawalsRoot: Uint8Array | null;
  /** the proposer's registration */
  feeRecipient: Uint8Array;
  registeredGasLimit: number;
  /** the fork's maximum blobs per block */
  maxBlobsPerBlock: number;
}

/** Geth's and the yellow paper's bound: a block's gas limit differs from its parent's by less than parent / 1024. */
const GAS_LIMIT_BOUND_DIVISOR = 1024;
/** Geth's MinGasLimit. */
const MIN_GAS_LIMIT = 5000;

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(b);

/**
 * The gas limit a payload on a parent with `parentGasLimit` has when its proposer prefers `target`:
 * as close to the target as the protocol lets one block move (Lighthouse's `expected_gas_limit`,
 * geth's `CalcGasLimit`).
 */
export function expectedGasLimit(parentGasLimit: number, target: number): number {
  const maxDelta = Math.max(Math.floor(parentGasLimit / GAS_LIMIT_BOUND_DIVISOR) - 1, 0);
  const wanted = Math.max(target, MIN_GAS_LIMIT);
  if (wanted > parentGasLimit) return parentGasLimit + Math.min(wanted - parentGasLimit, maxDelta);
  return parentGasLimit - Math.min(parentGasLimit - wanted, maxDelta);
}

export function checkFork(version: ForkName, exp: BidExpectations): void {
  if (version !== exp.fork) throw new InvalidBidError("fork", `a ${version} bid for a ${exp.fork} block`);
}

/** builder-specs `verify_bid_signature`: by the bid's pubkey, in the builder domain (genesis fork version, zero validators root). */
export function checkSignature(config: ChainForkConfig, signed: SignedBuilderBid, exp: BidExpectations): void {
  const signingRoot = computeSigningRoot(builderTypes(exp.fork).BuilderBid as never, signed.message, builderDomain(config));
  if (!isValidBuilderSignature(signingRoot, signed.message.pubkey, signed.signature)) {
    throw new InvalidBidError("signature", `not signed by the builder key ${toHex(signed.message.pubkey)}`);
  }
}

export function checkParentHash(bid: BuilderBid, exp: BidExpectations): void {
  const got = bid.header.parentHash;
  if (!eq(got, exp.parentHash)) throw new InvalidBidError("parent_hash", `${toHex(got)}, the parent's is ${toHex(exp.parentHash)}`);
}

export function checkBlockNumber(bid: BuilderBid, exp: BidExpectations): void {
  const want = exp.parentBlockNumber + 1;
  if (bid.header.blockNumber !== want) throw new InvalidBidError("block_number", `${bid.header.blockNumber}, expected ${want}`);
}

export function checkTimestamp(bid: BuilderBid, exp: BidExpectations): void {
  if (bid.header.timestamp !== exp.timestamp) throw new InvalidBidError("timestamp", `${bid.header.timestamp}, the slot's is ${exp.timestamp}`);
}

export function checkPrevRandao(bid: BuilderBid, exp: BidExpectations): void {
  if (!eq(bid.header.prevRandao, exp.prevRandao)) throw new InvalidBidError("prev_randao", `${toHex(bid.header.prevRandao)}, expected ${toHex(exp.prevRandao)}`);
}

export function checkWithdrawalsRoot(bid: BuilderBid, exp: BidExpectations): void {
  if (!isForkPostCapella(exp.fork) || exp.withdrawalsRoot === null) return;
  const got = (bid.header as capella.ExecutionPayloadHeader).withdrawalsRoot;
  if (!eq(got, exp.withdrawalsRoot)) throw new InvalidBidError("withdrawals_root", `${toHex(got)}, the state's withdrawals give ${toHex(exp.withdrawalsRoot)}`);
}

/** The registered preference, moved toward within the protocol's bound (Lighthouse checks it the same way). */
export function checkGasLimit(bid: BuilderBid, exp: BidExpectations): void {
  const want = expectedGasLimit(exp.parentGasLimit, exp.registeredGasLimit);
  if (bid.header.gasLimit !== want) {
    throw new InvalidBidError("gas_limit", `${bid.header.gasLimit}, expected ${want} (parent ${exp.parentGasLimit}, registered ${exp.registeredGasLimit})`);
  }
}

export function checkBlobCommitments(bid: BuilderBid, exp: BidExpectations): void {
  if (!isForkPostDeneb(exp.fork)) return;
  const count = (bid as deneb.BuilderBid).blobKzgCommitments.length;
  if (count > exp.maxBlobsPerBlock) throw new InvalidBidError("blob_kzg_commitments", `${count} commitments, at most ${exp.maxBlobsPerBlock} at ${exp.fork}`);
}

/** builder-specs `process_bid`: `header.fee_recipient == fee_recipient`, the proposer's registered one. */
export function checkFeeRecipient(bid: BuilderBid, exp: BidExpectations): void {
  if (!eq(bid.header.feeRecipient, exp.feeRecipient)) {
    throw new InvalidBidError("fee_recipient", `${toHex(bid.header.feeRecipient)}, the proposer registered ${toHex(exp.feeRecipient)}`);
  }
}

/** A bid worth nothing to the proposer is no bid (the relay should have answered 204). */
export function checkValue(bid: BuilderBid): void {
  if (bid.value <= 0n) throw new InvalidBidError("value", "zero");
}

/** Every rule; throws the first `InvalidBidError`. The signature last: the cheap checks first. */
export function validateBid(config: ChainForkConfig, version: ForkName, signed: SignedBuilderBid, exp: BidExpectations): void {
  checkFork(version, exp);
  const bid = signed.message;
  checkParentHash(bid, exp);
  checkBlockNumber(bid, exp);
  checkTimestamp(bid, exp);
  checkPrevRandao(bid, exp);
  checkWithdrawalsRoot(bid, exp);
  checkGasLimit(bid, exp);
  checkBlobCommitments(bid, exp);
  checkFeeRecipient(bid, exp);
  checkValue(bid);
  checkSignature(config, signed, exp);
}
