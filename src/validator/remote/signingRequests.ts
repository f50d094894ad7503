import type {Type} from "@chainsafe/ssz";
import type {BeaconConfig} from "@lodestar/config";
import {ForkName, ForkSeq, isForkPostDeneb, isForkPostElectra} from "@lodestar/params";
import {blindedOrFullBlockToHeader, computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {ssz, sszTypesFor} from "@lodestar/types";
import type {AggregateAndProof, BeaconBlock, BlindedBeaconBlock, Epoch, Root, Slot, altair, bellatrix, phase0} from "@lodestar/types";
import {toHex} from "@lodestar/utils";

/**
 * The typed signing requests of the Web3Signer ETH2 API (`POST /api/v1/eth2/sign/{identifier}`,
 * its OpenAPI in vendor/web3signer): one per kind of message a validator signs, each with the
 * message in the consensus JSON encoding, `fork_info` (the beacon state's `Fork` at the message's
 * epoch and the genesis validators root: Web3Signer computes the domain from them) and
 * `signingRoot` (the root we computed; Web3Signer checks it against its own).
 */

/** What is being signed: the message of one request type. */
export type SignableMessage =
  | {type: "BLOCK_V2"; block: BeaconBlock | BlindedBeaconBlock}
  | {type: "ATTESTATION"; data: phase0.AttestationData}
  | {type: "AGGREGATION_SLOT"; slot: Slot}
  | {type: "AGGREGATE_AND_PROOF"; message: AggregateAndProof}
  | {type: "RANDAO_REVEAL"; epoch: Epoch}
  | {type: "SYNC_COMMITTEE_MESSAGE"; slot: Slot; beaconBlockRoot: Root}
  | {type: "SYNC_COMMITTEE_SELECTION_PROOF"; slot: Slot; subcommitteeIndex: number}
  | {type: "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF"; message: altair.ContributionAndProof}
  | {type: "VOLUNTARY_EXIT"; exit: phase0.VoluntaryExit}
  | {type: "VALIDATOR_REGISTRATION"; registration: bellatrix.ValidatorRegistrationV1};

export type SigningRequestBody = Record<string, unknown> & {type: string; signingRoot: string};

/** Web3Signer's fork names: upper case (`PHASE0`, `ELECTRA`…). */
const versionName = (fork: ForkName): string => fork.toUpperCase();

/** The beacon state's `Fork` at `epoch` (previous and current version, the current fork's first epoch). */
function forkAt(config: BeaconConfig, epoch: Epoch): {previous_version: string; current_version: string; epoch: string} {
  const fork = config.getForkInfoAtEpoch(epoch);
  return {previous_version: toHex(fork.prevVersion), current_version: toHex(fork.version), epoch: String(fork.epoch)};
}

/** The epoch whose fork signs the message; undefined for messages without fork_info (builder registrations). */
function signingEpoch(message: SignableMessage): Epoch | undefined {
  switch (message.type) {
    case "BLOCK_V2":
      return computeEpochAtSlot(message.block.slot);
    case "ATTESTATION":
      return message.data.target.epoch;
    case "AGGREGATION_SLOT":
    case "SYNC_COMMITTEE_MESSAGE":
    case "SYNC_COMMITTEE_SELECTION_PROOF":
      return computeEpochAtSlot(message.slot);
    case "AGGREGATE_AND_PROOF":
      return computeEpochAtSlot(message.message.aggregate.data.slot);
    case "RANDAO_REVEAL":
      return message.epoch;
    case "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF":
      return computeEpochAtSlot(message.message.contribution.slot);
    case "VOLUNTARY_EXIT":
      return message.exit.epoch;
    case "VALIDATOR_REGISTRATION":
      return undefined;
  }
}

/** The message part of the request: the type (some change with the fork) and its field. */
function messageFields(config: BeaconConfig, message: SignableMessage): Record<string, unknown> & {type: string} {
  switch (message.type) {
    case "BLOCK_V2": {
      const fork = config.getForkInfo(message.block.slot);
      // from bellatrix on the header (its body root) is sent, which serves blinded blocks too
      const beaconBlock =
        fork.seq >= ForkSeq.bellatrix
          ? {version: versionName(fork.name), block_header: ssz.phase0.BeaconBlockHeader.toJson(blindedOrFullBlockToHeader(config, message.block))}
          : {version: versionName(fork.name), block: config.getForkTypes(message.block.slot).BeaconBlock.toJson(message.block as BeaconBlock)};
      return {type: "BLOCK_V2", beacon_block: beaconBlock};
    }
    case "ATTESTATION":
      return {type: "ATTESTATION", attestation: ssz.phase0.AttestationData.toJson(message.data)};
    case "AGGREGATION_SLOT":
      return {type: "AGGREGATION_SLOT", aggregation_slot: {slot: String(message.slot)}};
    case "AGGREGATE_AND_PROOF": {
      const fork = config.getForkName(message.message.aggregate.data.slot);
      // AGGREGATE_AND_PROOF (every Web3Signer version) until electra, whose aggregates only V2 carries
      if (!isForkPostElectra(fork)) return {type: "AGGREGATE_AND_PROOF", aggregate_and_proof: ssz.phase0.AggregateAndProof.toJson(message.message as phase0.AggregateAndProof)};
      return {type: "AGGREGATE_AND_PROOF_V2", aggregate_and_proof: {version: versionName(fork), data: (sszTypesFor(fork).AggregateAndProof as Type<AggregateAndProof>).toJson(message.message)}};
    }
    case "RANDAO_REVEAL":
      return {type: "RANDAO_REVEAL", randao_reveal: {epoch: String(message.epoch)}};
    case "SYNC_COMMITTEE_MESSAGE":
      return {type: "SYNC_COMMITTEE_MESSAGE", sync_committee_message: {beacon_block_root: toHex(message.beaconBlockRoot), slot: String(message.slot)}};
    case "SYNC_COMMITTEE_SELECTION_PROOF":
      return {type: "SYNC_COMMITTEE_SELECTION_PROOF", sync_aggregator_selection_data: {slot: String(message.slot), subcommittee_index: String(message.subcommitteeIndex)}};
    case "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF":
      return {type: "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF", contribution_and_proof: ssz.altair.ContributionAndProof.toJson(message.message)};
    case "VOLUNTARY_EXIT":
      return {type: "VOLUNTARY_EXIT", voluntary_exit: ssz.phase0.VoluntaryExit.toJson(message.exit)};
    case "VALIDATOR_REGISTRATION":
      return {type: "VALIDATOR_REGISTRATION", validator_registration: ssz.bellatrix.ValidatorRegistrationV1.toJson(message.registration)};
  }
}

/** The `fork_info` of a message signed at `epoch`. */
function forkInfo(config: BeaconConfig, message: SignableMessage, epoch: Epoch): {fork: ReturnType<typeof forkAt>; genesis_validators_root: string} {
  let fork = forkAt(config, epoch);
  if (message.type === "VOLUNTARY_EXIT" && isForkPostDeneb(config.getForkName(computeStartSlotAtEpoch(epoch)))) {
    // EIP-7044: exits are signed with capella's version from deneb on, whatever their epoch
    const capella = toHex(config.forks[ForkName.capella].version);
    fork = {previous_version: capella, current_version: capella, epoch: String(config.forks[ForkName.capella].epoch)};
  }
  return {fork, genesis_validators_root: toHex(config.genesisValidatorsRoot)};
}

/** The JSON body asking a remote signer to sign `message`, whose signing root is `signingRoot`. */
export function signingRequestBody(config: BeaconConfig, message: SignableMessage, signingRoot: Uint8Array): SigningRequestBody {
  const epoch = signingEpoch(message);
  return {
    ...messageFields(config, message),
    ...(epoch !== undefined ? {fork_info: forkInfo(config, message, epoch)} : {}),
    signingRoot: toHex(signingRoot),
  };
}

/** The request types of the API (those this client sends, and the older ones a signer may still be sent), with the field each carries. */
export const REQUEST_MESSAGE_FIELD: Readonly<Record<string, string>> = {
  BLOCK: "block",
  BLOCK_V2: "beacon_block",
  ATTESTATION: "attestation",
  AGGREGATION_SLOT: "aggregation_slot",
  AGGREGATE_AND_PROOF: "aggregate_and_proof",
  AGGREGATE_AND_PROOF_V2: "aggregate_and_proof",
  DEPOSIT: "deposit",
  RANDAO_REVEAL: "randao_reveal",
  SYNC_COMMITTEE_MESSAGE: "sync_committee_message",
  SYNC_COMMITTEE_SELECTION_PROOF: "sync_aggregator_selection_data",
  SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF: "contribution_and_proof",
  VOLUNTARY_EXIT: "voluntary_exit",
  VALIDATOR_REGISTRATION: "validator_registration",
};

/** The request types that carry no fork_info (their domains do not depend on the chain's forks). */
export const WITHOUT_FORK_INFO: ReadonlySet<string> = new Set(["DEPOSIT", "VALIDATOR_REGISTRATION"]);
