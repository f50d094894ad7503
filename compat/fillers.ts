import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {OperationId} from "../src/api/routes/index.ts";
import type {WireRequest} from "../src/api/wire.ts";

/**
 * Fillers: a route argument that the legacy method had no param for, found from the call's
 * other arguments and from other REST answers, so the method can forward to the route that
 * serves the current fork even where that route asks for more.
 */

/** A REST call's `data` (JSON); throws ApiClientError for a REST error. */
export type ReadRest = (operationId: OperationId, req: Partial<WireRequest>) => Promise<unknown>;

export interface Filler {
  /** how compat finds the value, for the migration guide */
  describe: string;
  /** the wire value of the argument the call left out, given the request built so far */
  find(req: WireRequest, read: ReadRest): Promise<string>;
}

/** The first set bit of an SSZ bitvector in 0x hex (bit i is bit i % 8 of byte i / 8). */
function firstSetBit(hex: string): number | undefined {
  const bytes = Buffer.from(hex.replace(/^0x/, ""), "hex");
  for (let i = 0; i < bytes.length * 8; i++) if (bytes[i >> 3] & (1 << (i & 7))) return i;
  return undefined;
}

/**
 * The committee of the pooled attestations at `slot` whose data has the asked root (since
 * electra the data no longer names its committee: `committee_bits` does). When the pool holds
 * none, committee 0: the route then answers that it has no matching attestation.
 */
export const committeeOfAggregate: Filler = {
  describe: "the committee of the pooled attestation with that data root (`GET /eth/v2/beacon/pool/attestations?slot=SLOT`: its `committee_bits`, before electra its `data.index`)",
  async find(req, read) {
    const slot = req.query.slot?.[0];
    const root = req.query.attestation_data_root?.[0]?.toLowerCase();
    const pool = (await read("getPoolAttestationsV2", {query: {slot: slot === undefined ? [] : [slot]}})) as {data: unknown; committee_bits?: string}[];
    for (const attestation of pool) {
      if (toHex(ssz.phase0.AttestationData.hashTreeRoot(ssz.phase0.AttestationData.fromJson(attestation.data))) !== root) continue;
      const committee = attestation.committee_bits !== undefined ? firstSetBit(attestation.committee_bits) : (attestation.data as {index: string}).index;
      if (committee !== undefined) return String(committee);
    }
    return "0";
  },
};
