import type {WireFormat} from "./routes/types.ts";

export const MEDIA_TYPE: Record<WireFormat, string> = {json: "application/json", ssz: "application/octet-stream"};

/**
 * A request and a response as they travel, independent of the transport: the HTTP server
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
  /** JSON text, or SSZ bytes, or (large answers) JSON text in pieces to write as they come; absent for empty responses */
  body?: string | Uint8Array | Iterable<JsonPiece>;
  /** instead of a body, an `events` route's server-sent events as text, open until either side cancels it */
  eventStream?: ReadableStream<string>;
  /**
   * instead of a body, a large JSON list answer's text as it arrives over HTTP (httpTransport's
   * `streamLists`), for readers that take the list item by item; cancel it to stop reading
   */
  textStream?: ReadableStream<string>;
}

/**
 * A piece of JSON text: a string, or ASCII text as its bytes (what the list writers of
 * asciiJson.ts give, which the server writes to the socket as they are, never as a string).
 */
export type JsonPiece = string | Uint8Array;

/** Whether a body is JSON text in pieces (not one string or one buffer). */
export function isChunked(body: WireResponse["body"]): body is Iterable<JsonPiece> {
  return body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array);
}

/** The pieces of JSON text as strings, for readers of the text (the in-process client, compat). */
export function* pieceTexts(pieces: Iterable<JsonPiece>): Generator<string> {
  for (const piece of pieces) yield typeof piece === "string" ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString("latin1");
}
