import type {Sample} from "./sampleContext.ts";
import {beaconSamples} from "./samples/beacon.ts";
import {extSamples} from "./samples/ext.ts";
import {lightClientSamples} from "./samples/lightClient.ts";
import {nodeSamples} from "./samples/node.ts";
import {poolSamples} from "./samples/pool.ts";
import {stateSamples} from "./samples/states.ts";
import {validatorSamples} from "./samples/validator.ts";

export type {Sample, SampleContext, SampleRequest} from "./sampleContext.ts";

/**
 * The conformance samples: for each operationId of the route table, the requests to send to a
 * live node and the status each must get. Every route needs one; routes.test.ts fails for a
 * route without.
 */
export const samples: Record<string, Sample> = {
  ...beaconSamples,
  ...stateSamples,
  ...poolSamples,
  ...validatorSamples,
  ...nodeSamples,
  ...extSamples,
  ...lightClientSamples,
};
