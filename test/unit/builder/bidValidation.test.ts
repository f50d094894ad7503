import {describe, expect, it} from "@jest/globals";
import {DOMAIN_APPLICATION_BUILDER, ForkName} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type deneb} from "@lodestar/types";
import {type BidExpectations, InvalidBidError, expectedGasLimit, validateBid} from "../../../src/builder/bidValidation.ts";
import {testConfig} from "../db/helpers.ts";

/**
 * One test per rule: a bid right in everything but that rule, signed again by its builder, is
 * refused for that rule (so each test fails without its check). The signature is made here with
 * @lodestar/state-transition's computeDomain, as builder-specs defines it.
 */

const builderKey = interopSecretKey(7);
const ZERO_ROOT = new Uint8Array(32);

const exp: BidExpectations = {
  fork: ForkName.deneb,
  parentHash: new Uint8Array(32).fill(1),
  parentBlockNumber: 41,
  parentGasLimit: 30_000_000,
  timestamp: 1_700_000_120,
  prevRandao: new Uint8Array(32).fill(2),
  withdrawalsRoot: ssz.capella.Withdrawals.hashTreeRoot([{index: 3, validatorIndex: 4, address: new Uint8Array(20).fill(5), amount: 6n}]),
  feeRecipient: new Uint8Array(20).fill(9),
  registeredGasLimit: 36_000_000,
  maxBlobsPerBlock: 6,
};

function sign(message: deneb.BuilderBid, forkVersion = testConfig.GENESIS_FORK_VERSION, validatorsRoot = ZERO_ROOT): deneb.SignedBuilderBid {
  const domain = computeDomain(DOMAIN_APPLICATION_BUILDER, forkVersion, validatorsRoot);
  return {message, signature: builderKey.sign(computeSigningRoot(ssz.deneb.BuilderBid, message, domain)).toBytes()};
}

function goodBid(change: (bid: deneb.BuilderBid) => void = () => {}): deneb.SignedBuilderBid {
  const bid = ssz.deneb.BuilderBid.defaultValue();
  Object.assign(bid.header, {
    parentHash: exp.parentHash,
    feeRecipient: exp.feeRecipient,
    prevRandao: exp.prevRandao,
    blockNumber: 42,
    gasLimit: 30_029_295,
    timestamp: exp.timestamp,
    withdrawalsRoot: exp.withdrawalsRoot,
  });
  bid.blobKzgCommitments = Array.from({length: 6}, () => new Uint8Array(48));
  bid.value = 1n;
  bid.pubkey = builderKey.toPublicKey().toBytes();
  change(bid);
  return sign(bid);
}

function ruleBroken(signed: deneb.SignedBuilderBid, version: ForkName = ForkName.deneb, expectations = exp): string | null {
  try {
    validateBid(testConfig, version, signed, expectations);
    return null;
  } catch (e) {
    if (e instanceof InvalidBidError) return e.rule;
    throw e;
  }
}

describe("bid validation", () => {
  it("a bid right in every rule passes", () => {
    expect(ruleBroken(goodBid())).toBeNull();
  });

  it("signature: by the bid's pubkey in the builder domain of the genesis fork version and a zero validators root", () => {
    const other = goodBid();
    other.signature = interopSecretKey(8).sign(computeSigningRoot(ssz.deneb.BuilderBid, other.message, computeDomain(DOMAIN_APPLICATION_BUILDER, testConfig.GENESIS_FORK_VERSION, ZERO_ROOT))).toBytes();
    expect(ruleBroken(other)).toBe("signature");
    // the fork's own version, or a real validators root, is not the builder domain
    expect(ruleBroken(sign(goodBid().message, testConfig.DENEB_FORK_VERSION))).toBe("signature");
    expect(ruleBroken(sign(goodBid().message, testConfig.GENESIS_FORK_VERSION, new Uint8Array(32).fill(3)))).toBe("signature");
    expect(ruleBroken({...goodBid(), signature: new Uint8Array(96)})).toBe("signature");
  });

  it("fork: the bid's version is the proposal's fork (Lighthouse checks it)", () => {
    expect(ruleBroken(goodBid(), ForkName.electra)).toBe("fork");
  });

  it("parent_hash: the state's latest execution payload header's block hash", () => {
    expect(ruleBroken(goodBid((b) => (b.header.parentHash = new Uint8Array(32).fill(0xee))))).toBe("parent_hash");
  });

  it("block_number: the parent's plus one (Lighthouse checks it)", () => {
    expect(ruleBroken(goodBid((b) => (b.header.blockNumber = 43)))).toBe("block_number");
  });

  it("timestamp: the slot's time", () => {
    expect(ruleBroken(goodBid((b) => (b.header.timestamp = exp.timestamp + 6)))).toBe("timestamp");
  });

  it("prev_randao: the state's randao mix", () => {
    expect(ruleBroken(goodBid((b) => (b.header.prevRandao = new Uint8Array(32).fill(0xee))))).toBe("prev_randao");
  });

  it("withdrawals_root: the root of the state's expected withdrawals", () => {
    expect(ruleBroken(goodBid((b) => (b.header.withdrawalsRoot = ssz.capella.Withdrawals.hashTreeRoot([]))))).toBe("withdrawals_root");
  });

  it("gas_limit: toward the registered preference by at most parent/1024 - 1 (as Lighthouse and geth's CalcGasLimit)", () => {
    expect(expectedGasLimit(30_000_000, 36_000_000)).toBe(30_029_295);
    expect(expectedGasLimit(30_000_000, 29_990_000)).toBe(29_990_000);
    expect(expectedGasLimit(30_000_000, 30_000_000)).toBe(30_000_000);
    expect(expectedGasLimit(30_000_000, 1)).toBe(29_970_705);
    expect(ruleBroken(goodBid((b) => (b.header.gasLimit = 36_000_000)))).toBe("gas_limit");
    expect(ruleBroken(goodBid((b) => (b.header.gasLimit = 30_000_000)))).toBe("gas_limit");
  });

  it("blob_kzg_commitments: at most the fork's maximum blobs per block", () => {
    expect(ruleBroken(goodBid((b) => b.blobKzgCommitments.push(new Uint8Array(48))))).toBe("blob_kzg_commitments");
  });

  it("fee_recipient: the proposer's registered one (builder-specs process_bid)", () => {
    expect(ruleBroken(goodBid((b) => (b.header.feeRecipient = new Uint8Array(20).fill(0xee))))).toBe("fee_recipient");
  });

  it("value: more than zero", () => {
    expect(ruleBroken(goodBid((b) => (b.value = 0n)))).toBe("value");
  });
});
