import type {ChainForkConfig} from "@lodestar/config";
import {isForkPostElectra, type ForkName} from "@lodestar/params";
import type {phase0} from "@lodestar/types";
import {ApiClientError, type ApiClient} from "../api/client.ts";
import {routes} from "../api/routes/index.ts";
import type {TopicLogger} from "../log.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";

/**
 * Older routes for nodes built before the newest ones, the way validator clients went across
 * upgrades: block production v3 → v2, block publishing v2 → v1, validators by POST → by GET, pool
 * attestations v2 → v1, aggregate attestation and aggregate-and-proofs v2 → v1 (these v1 routes
 * carry pre-electra types only, so they serve pre-electra forks only).
 *
 * The newer route is tried first. When the node answers it with "no such route" (404, 405, 501)
 * and the older route works, the older one is chosen for that node and fork, logged once, and
 * used from then on; once the newer route has worked it is kept. Attester slashings v2 → v1 are
 * not here: this validator client submits none.
 */

/** How a node that lacks a route answers it. */
const ROUTE_MISSING = new Set([404, 405, 501]);

type Choice = "newer" | "older";

export class RouteFallbacks {
  private readonly chosen = new Map<string, Choice>();
  private readonly client: ApiClient;
  private readonly log: TopicLogger;

  constructor(client: ApiClient, log: TopicLogger) {
    this.client = client;
    this.log = log;
  }

  /** Which route a node and fork were found to serve, once known (for logs and tests). */
  choice(newer: keyof typeof routes, fork: string): Choice | undefined {
    return this.chosen.get(`${newer}:${fork}`);
  }

  /** `callNewer`, or `callOlder` when the node lacks the newer route; `callOlder` undefined: no older route for this fork. */
  async call<T>(newer: keyof typeof routes, older: keyof typeof routes, fork: string, callNewer: () => Promise<T>, callOlder: (() => Promise<T>) | undefined): Promise<T> {
    const key = `${newer}:${fork}`;
    const choice = this.chosen.get(key);
    if (choice === "older" && callOlder) return callOlder();
    try {
      const result = await callNewer();
      this.chosen.set(key, "newer");
      return result;
    } catch (err) {
      if (choice === "newer" || !callOlder || !(err instanceof ApiClientError) || !ROUTE_MISSING.has(err.status)) throw err;
      const result = await callOlder().catch((olderErr: unknown) => {
        // the older route failed too: neither is chosen yet, and the newer route's error is the answer
        throw olderErr instanceof ApiClientError && ROUTE_MISSING.has(olderErr.status) ? err : olderErr;
      });
      if (this.chosen.get(key) === "older") return result; // a call running alongside chose it first, and logged it
      this.chosen.set(key, "older");
      const {method: newMethod, path: newPath} = routes[newer];
      const {method: oldMethod, path: oldPath} = routes[older];
      this.log.info({fork, status: err.status, lacking: `${newMethod} ${newPath}`, using: `${oldMethod} ${oldPath}`}, "Beacon node lacks a route: using the older one");
      return result;
    }
  }

  /** The validator client's Beacon API with these fallbacks, for a chain of `config`. */
  wrap(api: ValidatorBeaconApi, config: ChainForkConfig): ValidatorBeaconApi {
    const {client} = this;
    const preElectra = (fork: ForkName) => !isForkPostElectra(fork);
    return {
      ...api,

      getValidators: (pubkeys) =>
        this.call("postStateValidators", "getStateValidators", "any", () => api.getValidators(pubkeys), async () => {
          const found = [];
          // the GET route takes at most 64 ids a request (the spec's maxItems)
          for (let i = 0; i < pubkeys.length; i += 64) {
            const {data} = await client.request("getStateValidators", {stateId: "head", id: pubkeys.slice(i, i + 64)});
            found.push(...data.map(({index, status, validator}) => ({index, pubkey: validator.pubkey, status})));
          }
          return found;
        }),

      produceBlock: (slot, randaoReveal, graffiti, builderBoostFactor) =>
        this.call("produceBlockV3", "produceBlockV2", config.getForkName(slot), () => api.produceBlock(slot, randaoReveal, graffiti, builderBoostFactor), async () => {
          const {data, meta} = await client.request("produceBlockV2", {slot, randaoReveal, graffiti});
          return {block: data.block, fork: meta.version, blobs: {blobs: data.blobs, kzgProofs: data.kzgProofs}};
        }),

      publishBlock: (signedBlock, fork, blobs) =>
        this.call("publishBlockV2", "publishBlock", fork, () => api.publishBlock(signedBlock, fork, blobs), async () => {
          await client.request("publishBlock", {signedBlockContents: {signedBlock, ...blobs}, fork});
        }),

      submitAttestations: (attestations, fork) =>
        this.call(
          "submitPoolAttestationsV2",
          "submitPoolAttestations",
          fork,
          () => api.submitAttestations(attestations, fork),
          preElectra(fork) ? async () => void (await client.request("submitPoolAttestations", {attestations: attestations as phase0.Attestation[]})) : undefined
        ),

      getAggregatedAttestation: (attestationDataRoot, slot, committeeIndex) => {
        const fork = config.getForkName(slot);
        return this.call(
          "getAggregatedAttestationV2",
          "getAggregatedAttestation",
          fork,
          () => api.getAggregatedAttestation(attestationDataRoot, slot, committeeIndex),
          preElectra(fork) ? async () => ({attestation: (await client.request("getAggregatedAttestation", {attestationDataRoot, slot})).data, fork}) : undefined
        );
      },

      publishAggregateAndProofs: (signed, fork) =>
        this.call(
          "publishAggregateAndProofsV2",
          "publishAggregateAndProofs",
          fork,
          () => api.publishAggregateAndProofs(signed, fork),
          preElectra(fork)
            ? async () => void (await client.request("publishAggregateAndProofs", {signedAggregateAndProofs: signed as phase0.SignedAggregateAndProof[]}))
            : undefined
        ),
    };
  }
}
