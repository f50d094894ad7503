import {ForkName, MAX_COMMITTEES_PER_SLOT, MAX_VALIDATORS_PER_COMMITTEE, isForkPostElectra} from "@lodestar/params";
import {ssz, type altair, type electra, type phase0} from "@lodestar/types";
import {fork, listBody, type SszLike} from "../codecs.ts";
import {route} from "./types.ts";

/** Routes of the Beacon tag that feed the operation pools. */

/** Before electra a submitted attestation is an `Attestation`; from electra on, a `SingleAttestation`. */
export type SubmittedAttestation = phase0.Attestation | electra.SingleAttestation;

const ATTESTATIONS_LIMIT = MAX_VALIDATORS_PER_COMMITTEE * MAX_COMMITTEES_PER_SLOT;

function submittedAttestationType({fork}: {fork: ForkName}): SszLike<SubmittedAttestation> {
  return (isForkPostElectra(fork) ? ssz.electra.SingleAttestation : ssz.phase0.Attestation) as SszLike<SubmittedAttestation>;
}

export const poolRoutes = {
  submitPoolAttestationsV2: route<{attestations: SubmittedAttestation[]; fork: ForkName}>({
    method: "POST",
    path: "/eth/v2/beacon/pool/attestations",
    version: 2,
    tag: "Beacon",
    args: {
      attestations: listBody(submittedAttestationType, ATTESTATIONS_LIMIT),
      fork: {in: "header", name: "Eth-Consensus-Version", codec: fork},
    },
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
    legacy: {method: "post_v1_beacon_pool_attestations", params: ["attestations"]},
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
