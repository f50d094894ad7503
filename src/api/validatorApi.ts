import type {ValidatorBeaconApi} from "../validator/beaconApi.ts";
import type {ApiClient} from "./client.ts";
import {blockId} from "./codecs.ts";

/**
 * The validator client's view of the Beacon API over the route-table client. Each method names
 * one operationId and reshapes its answer; paths, JSON and SSZ are the table's business.
 */
export function createValidatorBeaconApi(client: ApiClient): ValidatorBeaconApi {
  return {
    async getGenesis() {
      return (await client.request("getGenesis", {})).data;
    },

    async getSpec() {
      // list values (BLOB_SCHEDULE) are JSON arrays; chainConfigFromJson reads them as they are
      return (await client.request("getSpec", {})).data as Record<string, string>;
    },

    async getForkSchedule() {
      return (await client.request("getForkSchedule", {})).data;
    },

    async getValidators(pubkeys) {
      const {data} = await client.request("postStateValidators", {stateId: "head", filter: {ids: pubkeys, statuses: []}});
      return data.map(({index, status, validator}) => ({index, pubkey: validator.pubkey, status}));
    },

    async getProposerDuties(epoch) {
      const {data, meta} = await client.request("getProposerDuties", {epoch});
      return {dependentRoot: meta.dependentRoot, duties: data};
    },

    async getAttesterDuties(epoch, indices) {
      const {data, meta} = await client.request("getAttesterDuties", {epoch, validators: indices});
      return {dependentRoot: meta.dependentRoot, duties: data};
    },

    async getSyncCommitteeDuties(epoch, indices) {
      return (await client.request("getSyncCommitteeDuties", {epoch, indices})).data;
    },

    async produceBlock(slot, randaoReveal, graffiti, builderBoostFactor) {
      const {data, meta} = await client.request("produceBlockV3", {slot, randaoReveal, graffiti, builderBoostFactor});
      return {block: data.block, fork: meta.version, blobs: {blobs: data.blobs, kzgProofs: data.kzgProofs}, blinded: meta.executionPayloadBlinded};
    },

    async publishBlock(signedBlock, fork, {blobs, kzgProofs}) {
      await client.request("publishBlockV2", {signedBlockContents: {signedBlock, kzgProofs, blobs}, broadcastValidation: "gossip", fork});
    },

    async publishBlindedBlock(signedBlindedBlock, fork) {
      await client.request("publishBlindedBlockV2", {signedBlindedBlock, broadcastValidation: "gossip", fork});
    },

    async registerValidator(registrations) {
      await client.request("registerValidator", {registrations});
    },

    async produceAttestationData(committeeIndex, slot) {
      return (await client.request("produceAttestationData", {slot, committeeIndex})).data;
    },

    async submitAttestations(attestations, fork) {
      await client.request("submitPoolAttestationsV2", {attestations, fork});
    },

    async getAggregatedAttestation(attestationDataRoot, slot, committeeIndex) {
      const {data, meta} = await client.request("getAggregatedAttestationV2", {attestationDataRoot, slot, committeeIndex});
      return {attestation: data, fork: meta.version};
    },

    async publishAggregateAndProofs(signedAggregateAndProofs, fork) {
      await client.request("publishAggregateAndProofsV2", {signedAggregateAndProofs, fork});
    },

    async headEvents(signal) {
      const {data} = await client.request("eventstream", {topics: ["head"]}, {signal});
      return (async function* () {
        for await (const event of data) if (event.topic === "head") yield event.data;
      })();
    },

    async prepareBeaconCommitteeSubnet(subscriptions) {
      await client.request("prepareBeaconCommitteeSubnet", {subscriptions});
    },

    async getBlockRoot(id) {
      const {data, meta} = await client.request("getBlockRoot", {blockId: blockId.parse([id], "block_id")});
      // sync committee messages vote for a block: never one whose payload the engine has not validated
      if (meta.executionOptimistic) throw new Error(`block ${id} is optimistic: no sync committee message on it until the execution engine validates it`);
      return data.root;
    },

    async submitSyncCommitteeMessages(messages) {
      await client.request("submitPoolSyncCommitteeSignatures", {messages});
    },

    async produceSyncCommitteeContribution(slot, subcommitteeIndex, beaconBlockRoot) {
      return (await client.request("produceSyncCommitteeContribution", {slot, subcommitteeIndex, beaconBlockRoot})).data;
    },

    async publishContributionAndProofs(contributionAndProofs) {
      await client.request("publishContributionAndProofs", {contributionAndProofs});
    },

    async getLiveness(epoch, indices) {
      const {data} = await client.request("getLiveness", {epoch, indices});
      return data;
    },

    async prepareBeaconProposer(preparations) {
      await client.request("prepareBeaconProposer", {preparations});
    },
  };
}
