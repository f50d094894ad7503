import type {WireFormat} from "./routes/types.ts";

export const MEDIA_TYPE: Record<WireFormat, string> = {json: "application/json", ssz: "application/octet-stream"};

/**
 * A request and a response as they travel, independent of the transport: the express server
 * and the in-process transport both hand the same WireRequest to the same route handler, so
 * both produce the same WireResponse.
 */

export interface WireRequest {
  /** path parameters, decoded */
  params: Record<string, string>;
  /** query values, decoded; repeated keys give arrays */
  query: Record<string, string | string[] | undefined>;
  /** header names in lowercase */
  headers: Record<string, string | string[] | undefined>;
  /** the raw body: JSON text as UTF-8, or SSZ bytes */
  body?: Uint8Array;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text, or SSZ bytes; absent for empty responses */
  body?: string | Uint8Array;
}
