import type {IncomingMessage, ServerResponse} from "node:http";
import type {Registry} from "prom-client";
import {getLogger} from "../../log.ts";
import {taskSource} from "../../liveTasks.ts";
import {RequestMetrics} from "../../metrics/requests.ts";
import {statusLabel} from "../../metrics/labels.ts";

/**
 * What happens around every request, in one listener on its response's close: the request as a
 * live task (`/ext/v1/debug/tasks`) while it runs, its count and latency by operationId and status
 * (`--metrics`), and its log line.
 *
 * The log line goes under the `api` topic: debug for answers below 500 and for 501 (routes the
 * spec lets a beacon node decline), warn for other 5xx. Method, URL, status and time only, never
 * bodies or headers. The level is read from the topic when the answer is done, so a run-time
 * directive applies at once, and nothing is formatted when the line would not be written.
 */
export type RequestObserver = (req: IncomingMessage, res: ServerResponse, operationId: () => string | undefined) => void;

export function requestObserver(metricsRegistry: Registry | undefined, operationIds: string[]): RequestObserver {
  const log = getLogger("api");
  const track = taskSource();
  const metrics =
    metricsRegistry &&
    new RequestMetrics(metricsRegistry, {
      prefix: "beacon_gateway_rest_requests",
      what: "REST requests",
      label: "operationId",
      known: operationIds,
      other: "unmatched",
    });
  let lastId = 0;
  return (req, res, operationId) => {
    const started = performance.now();
    const id = ++lastId;
    const done = track(`${req.method} ${pathOf(req.url)}`);
    res.once("close", () => {
      done();
      const status = res.statusCode;
      const seconds = (performance.now() - started) / 1000;
      metrics?.observe(operationId(), statusLabel(status), seconds);
      const failed = status >= 500 && status !== 501;
      const level = failed ? "warn" : "debug";
      if (!log.isLevelEnabled(level)) return;
      const line = {req: {id, method: req.method, url: req.url}, res: {statusCode: status}, responseTime: Math.round(seconds * 1000)};
      log[level](line, failed ? "request failed" : "request completed");
    });
  };
}

function pathOf(url = "/"): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
