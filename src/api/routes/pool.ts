import {ForkName, MAX_COMMITTEES_PER_SLOT, MAX_VALIDATORS_PER_COMMITTEE, isForkPostElectra} from "@lodestar/params";
import {ssz, type Attestation, type AttesterSlashing, type altair, type capella, type electra, type phase0} from "@lodestar/types";
import {
  type VersionMeta,
  fork,
  forkListData,
  forkType,
  listBody,
  listData,
  optional,
  uintId,
  valueBody,
  versionOnlyMeta,
  type SszLike,
} from "../codecs.ts";
import {route, type NoArgs} from "./types.ts";

/** Routes of the Beacon tag that feed and read the operation pools. */

/** Before electra a submitted attestation is an `Attestation`; from electra on, a `SingleAttestation`. */
export type SubmittedAttestation = phase0.Attestation | electra.SingleAttestation;

const ATTESTATIONS_LIMIT = MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT;

function submittedAttestationType({fork}: {fork: ForkName}): SszLike<SubmittedAttestation> {
  return (isForkPostElectra(fork) ? ssz.electra.SingleAttestation : ssz.phase0.Attestation) as SszLike<SubmittedAttestation>;
}

/** The `slot` and `committee_index` filters of the attestation pool. */
export interface AttestationFilter {
  slot?: number;
  committeeIndex?: number;
}
const attestationFilterArgs = {
  slot: {in: "query", name: "slot", codec: optional(uintId)},
  committeeIndex: {in: "query", name: "committee_index", codec: optional(uintId)},
} as const;

const forkHeader = {in: "header", name: "Eth-Consensus-Version", codec: fork} as const;

export const poolRoutes = {
  getPoolAttestationsV2: route<AttestationFilter, Attestation[], VersionMeta>({
    method: "GET",
    path: "/eth/v2/beacon/pool/attestations",
    version: 2,
    tag: "Beacon",
    args: attestationFilterArgs,
    response: {kind: "data", data: forkListData((meta) => forkType(meta.version, "Attestation")), meta: versionOnlyMeta},
  }),
  /** Removed from the standard API in v4 (pre-electra `Attestation`s only); kept for the product spec's clients. */
  getPoolAttestations: route<AttestationFilter, phase0.Attestation[]>({
    method: "GET",
    path: "/eth/v1/beacon/pool/attestations",
    version: 1,
    tag: "Beacon",
    args: attestationFilterArgs,
    response: {kind: "data", data: listData(ssz.phase0.Attestation), meta: {}},
  }),
  submitPoolAttestationsV2: route<{attestations: SubmittedAttestation[]; fork: ForkName}>({
    method: "POST",
    path: "/eth/v2/beacon/pool/attestations",
    version: 2,
    tag: "Beacon",
    args: {attestations: listBody(submittedAttestationType, ATTESTATIONS_LIMIT), fork: forkHeader},
    response: {kind: "empty"},
  }),
  /** Removed from the standard API in v4 (pre-electra `Attestation`s only); kept for the product spec's clients. */
  submitPoolAttestations: route<{attestations: phase0.Attestation[]}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/attestations",
    version: 1,
    tag: "Beacon",
    args: {attestations: listBody(() => ssz.phase0.Attestation)},
    response: {kind: "empty"},
  }),
  getPoolAttesterSlashingsV2: route<NoArgs, AttesterSlashing[], VersionMeta>({
    method: "GET",
    path: "/eth/v2/beacon/pool/attester_slashings",
    version: 2,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: forkListData((meta) => forkType(meta.version, "AttesterSlashing")), meta: versionOnlyMeta},
  }),
  /** Removed from the standard API in v4 (pre-electra `AttesterSlashing`s only); kept for the product spec's clients. */
  getPoolAttesterSlashings: route<NoArgs, phase0.AttesterSlashing[]>({
    method: "GET",
    path: "/eth/v1/beacon/pool/attester_slashings",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: listData(ssz.phase0.AttesterSlashing), meta: {}},
  }),
  submitPoolAttesterSlashingsV2: route<{slashing: AttesterSlashing; fork: ForkName}>({
    method: "POST",
    path: "/eth/v2/beacon/pool/attester_slashings",
    version: 2,
    tag: "Beacon",
    args: {slashing: valueBody(({fork}) => forkType<AttesterSlashing>(fork, "AttesterSlashing")), fork: forkHeader},
    response: {kind: "empty"},
  }),
  /** Removed from the standard API in v4 (pre-electra `AttesterSlashing` only); the product spec's endpoint. */
  submitPoolAttesterSlashings: route<{slashing: phase0.AttesterSlashing}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/attester_slashings",
    version: 1,
    tag: "Beacon",
    args: {slashing: valueBody(() => ssz.phase0.AttesterSlashing)},
    response: {kind: "empty"},
  }),
  getPoolProposerSlashings: route<NoArgs, phase0.ProposerSlashing[]>({
    method: "GET",
    path: "/eth/v1/beacon/pool/proposer_slashings",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: listData(ssz.phase0.ProposerSlashing), meta: {}},
  }),
  submitPoolProposerSlashings: route<{slashing: phase0.ProposerSlashing}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/proposer_slashings",
    version: 1,
    tag: "Beacon",
    args: {slashing: valueBody(() => ssz.phase0.ProposerSlashing)},
    response: {kind: "empty"},
  }),
  getPoolVoluntaryExits: route<NoArgs, phase0.SignedVoluntaryExit[]>({
    method: "GET",
    path: "/eth/v1/beacon/pool/voluntary_exits",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: listData(ssz.phase0.SignedVoluntaryExit), meta: {}},
  }),
  submitPoolVoluntaryExit: route<{exit: phase0.SignedVoluntaryExit}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/voluntary_exits",
    version: 1,
    tag: "Beacon",
    args: {exit: valueBody(() => ssz.phase0.SignedVoluntaryExit)},
    response: {kind: "empty"},
  }),
  getPoolBLSToExecutionChanges: route<NoArgs, capella.SignedBLSToExecutionChange[]>({
    method: "GET",
    path: "/eth/v1/beacon/pool/bls_to_execution_changes",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: listData(ssz.capella.SignedBLSToExecutionChange), meta: {}},
  }),
  submitPoolBLSToExecutionChange: route<{changes: capella.SignedBLSToExecutionChange[]}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/bls_to_execution_changes",
    version: 1,
    tag: "Beacon",
    args: {changes: listBody(() => ssz.capella.SignedBLSToExecutionChange)},
    response: {kind: "empty"},
  }),
  submitPoolSyncCommitteeSignatures: route<{messages: altair.SyncCommitteeMessage[]}>({
    method: "POST",
    path: "/eth/v1/beacon/pool/sync_committees",
    version: 1,
    tag: "Beacon",
    args: {messages: listBody(() => ssz.altair.SyncCommitteeMessage)},
    response: {kind: "empty"},
  }),
};
