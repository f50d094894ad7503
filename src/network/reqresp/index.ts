export {ReqResp, DEFAULT_TIMEOUTS} from "./reqResp.ts";
export {ReqRespError, ResponseError, RespStatus, type ReqRespErrorCode, type RespErrorStatus} from "./errors.ts";
export {PROTOCOLS, protocolId, versionsOf, type ProtocolName, type ProtocolVersion} from "./protocols.ts";
export {DEFAULT_QUOTAS, DEFAULT_MAX_WITHHOLD_MS, type RateLimits, type RateQuota} from "./rateLimiter.ts";
export {MAX_CONCURRENT_REQUESTS} from "./requester.ts";
export type {
  BlocksByRangeRequest,
  Metadata,
  PeerMisbehaviourSeverity,
  ReqRespHandlers,
  ReqRespOptions,
  ReqRespTimeouts,
  SlotBytes,
  Status,
} from "./types.ts";
