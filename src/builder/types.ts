import {ListCompositeType} from "@chainsafe/ssz";
import {type ForkName, type ForkPostBellatrix, VALIDATOR_REGISTRY_LIMIT, isForkPostBellatrix, isForkPostDeneb, isForkPostFulu, isForkPostGloas} from "@lodestar/params";
import {
  type BuilderBid,
  type ExecutionPayload,
  type ExecutionPayloadAndBlobsBundle,
  type SignedBlindedBeaconBlock,
  type SignedBuilderBid,
  type bellatrix,
  ssz,
  sszTypesFor,
} from "@lodestar/types";

/**
 * The builder API's types (builder-specs `specs/<fork>/builder.md`), per fork, from @lodestar/types:
 * what a relay bids (`SignedBuilderBid`), what a proposer sends it (`SignedBlindedBeaconBlock`),
 * what it answers (`ExecutionPayload` before deneb, `ExecutionPayloadAndBlobsBundle` from deneb,
 * with fulu's cell proofs from fulu), and the registrations it keeps.
 */

/** A fork's type, by the interface all ssz types share. */
export interface BuilderType<T> {
  toJson(value: T): unknown;
  fromJson(json: unknown): T;
  serialize(value: T): Uint8Array;
  deserialize(bytes: Uint8Array): T;
  hashTreeRoot(value: T): Uint8Array;
}

/** What `submitBlindedBlock` (v1) answers: the payload, with its blobs bundle from deneb on. */
export type UnblindedPayload = ExecutionPayload | ExecutionPayloadAndBlobsBundle;

export interface BuilderForkTypes {
  SignedBuilderBid: BuilderType<SignedBuilderBid>;
  BuilderBid: BuilderType<BuilderBid>;
  SignedBlindedBeaconBlock: BuilderType<SignedBlindedBeaconBlock>;
  /** `ExecutionPayload` (bellatrix, capella) or `ExecutionPayloadAndBlobsBundle` (deneb on) */
  PayloadResponse: BuilderType<UnblindedPayload>;
}

/** Bellatrix to fulu: from gloas the builder is part of the protocol (ePBS), with other messages. */
export function isBuilderFork(fork: ForkName): fork is ForkPostBellatrix {
  return isForkPostBellatrix(fork) && !isForkPostGloas(fork);
}

export function assertBuilderFork(fork: ForkName): asserts fork is ForkPostBellatrix {
  if (!isBuilderFork(fork)) throw new Error(`The builder API has no types for ${fork}: it covers bellatrix to fulu`);
}

export function builderTypes(fork: ForkName): BuilderForkTypes {
  assertBuilderFork(fork);
  const types = sszTypesFor(fork) as unknown as Record<string, BuilderType<never>>;
  return {
    SignedBuilderBid: types.SignedBuilderBid,
    BuilderBid: types.BuilderBid,
    SignedBlindedBeaconBlock: types.SignedBlindedBeaconBlock,
    PayloadResponse: isForkPostDeneb(fork) ? types.ExecutionPayloadAndBlobsBundle : types.ExecutionPayload,
  };
}

/** From fulu a relay publishes the unblinded block itself (`submitBlindedBlockV2`, 202). */
export function relayPublishes(fork: ForkName): boolean {
  return isForkPostFulu(fork);
}

/** `List[SignedValidatorRegistrationV1, VALIDATOR_REGISTRY_LIMIT]`: the body of `registerValidator`. */
export const SignedValidatorRegistrations = new ListCompositeType(ssz.bellatrix.SignedValidatorRegistrationV1, VALIDATOR_REGISTRY_LIMIT);
export type SignedValidatorRegistration = bellatrix.SignedValidatorRegistrationV1;

/** A payload response seen as its parts: the payload, and the blobs bundle (deneb on; absent before). */
export function payloadParts(fork: ForkName, response: UnblindedPayload): {payload: ExecutionPayload; blobsBundle: {commitments: Uint8Array[]; proofs: Uint8Array[]; blobs: Uint8Array[]} | null} {
  if (!isForkPostDeneb(fork)) return {payload: response as ExecutionPayload, blobsBundle: null};
  const {executionPayload, blobsBundle} = response as ExecutionPayloadAndBlobsBundle;
  return {payload: executionPayload, blobsBundle};
}
