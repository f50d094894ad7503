/** The `result` byte of a response chunk (phase0 p2p spec). 4-127 are reserved, 128-255 client specific. */
export const RespStatus = {
  SUCCESS: 0,
  INVALID_REQUEST: 1,
  SERVER_ERROR: 2,
  RESOURCE_UNAVAILABLE: 3,
} as const;
export type RespErrorStatus = 1 | 2 | 3;

/**
 * Why a request failed. The first three are the peer's own error responses (with its message);
 * ERROR_RESPONSE is any other non-zero result byte (kept in `status`). The rest are found locally.
 */
export type ReqRespErrorCode =
  | "INVALID_REQUEST"
  | "SERVER_ERROR"
  | "RESOURCE_UNAVAILABLE"
  | "ERROR_RESPONSE"
  /** no first byte of the response within TTFB_TIMEOUT */
  | "TTFB_TIMEOUT"
  /** a response chunk (or the end after the last one) took longer than RESP_TIMEOUT */
  | "RESP_TIMEOUT"
  /** connecting and negotiating the protocol took longer than the dial timeout */
  | "DIAL_TIMEOUT"
  | "DIAL_ERROR"
  /** the peer speaks none of the protocol's versions */
  | "UNSUPPORTED_PROTOCOL"
  /** the response broke the encoding, its limits or the request's constraints */
  | "INVALID_RESPONSE"
  /** the stream was reset or closed under us */
  | "STREAM_ERROR"
  /** the caller's AbortSignal fired */
  | "ABORTED"
  /** our own request is not one the protocol allows (e.g. too many roots) */
  | "BAD_REQUEST_ARGUMENT";

export class ReqRespError extends Error {
  readonly code: ReqRespErrorCode;
  /** for error responses: the result byte */
  readonly status?: number;
  /** for error responses: the peer's ErrorMessage as text */
  readonly peerMessage?: string;

  constructor(code: ReqRespErrorCode, message: string, status?: number, peerMessage?: string) {
    super(message);
    this.name = "ReqRespError";
    this.code = code;
    this.status = status;
    this.peerMessage = peerMessage;
  }
}

/** Thrown by a request handler to answer with that result code and message instead of ServerError. */
export class ResponseError extends Error {
  readonly status: RespErrorStatus;

  constructor(status: RespErrorStatus, message: string) {
    super(message);
    this.name = "ResponseError";
    this.status = status;
  }
}

/** The payload broke the ssz_snappy encoding or its size bounds. */
export class InvalidPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidPayloadError";
  }
}

export function errorCodeOfStatus(status: number): ReqRespErrorCode {
  switch (status) {
    case RespStatus.INVALID_REQUEST:
      return "INVALID_REQUEST";
    case RespStatus.SERVER_ERROR:
      return "SERVER_ERROR";
    case RespStatus.RESOURCE_UNAVAILABLE:
      return "RESOURCE_UNAVAILABLE";
    default:
      return "ERROR_RESPONSE";
  }
}

/** A timer whose signal aborts with a ReqRespError of `code` after `ms`; clear it once done. */
export function deadline(ms: number, code: ReqRespErrorCode, what: string): {signal: AbortSignal; clear(): void} {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ReqRespError(code, `${what}: no answer within ${ms} ms`)), ms);
  return {signal: controller.signal, clear: () => clearTimeout(timer)};
}
