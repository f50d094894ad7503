import type {RequestHandler} from "express";
import type {IncomingMessage, ServerResponse} from "node:http";
import {pinoHttp} from "pino-http";
import {getLogger} from "../../log.ts";
import {taskSource} from "../../liveTasks.ts";

/** Middleware around every request: the request log line, and the request as a live task while it runs. */

/**
 * One line per request under the `api` topic when its response is done: debug for answers
 * below 500 and for 501 (routes the spec lets a beacon node decline), warn for other 5xx.
 * Method, URL, status and time only; never bodies or headers.
 *
 * pino-http writes through a child of the topic logger, and a pino child keeps the level it
 * was made with, so the child logs everything and the level is decided here, per request,
 * from the topic's level now: a run-time directive applies to request lines at once.
 */
export function logRequests(): RequestHandler {
  const topic = getLogger("api");
  const middleware = pinoHttp<IncomingMessage, ServerResponse, "notice">({
    logger: topic,
    customLogLevel(_req, res) {
      const level = res.statusCode >= 500 && res.statusCode !== 501 ? "warn" : "debug";
      return topic.isLevelEnabled(level) ? level : "silent";
    },
    serializers: {
      req: (req: {id: unknown; method: string; url: string}) => ({id: req.id, method: req.method, url: req.url}),
      res: (res: {statusCode: number}) => ({statusCode: res.statusCode}),
    },
    customSuccessMessage: () => "request completed",
    customErrorMessage: () => "request failed",
  });
  middleware.logger.level = "trace";
  return middleware as unknown as RequestHandler;
}

/** Each request is a live task (`/ext/v1/debug/tasks`) until its response is done or its connection closes. */
export function trackRequests(): RequestHandler {
  const track = taskSource();
  return (req, res, next) => {
    res.once("close", track(`${req.method} ${req.path}`));
    next();
  };
}
