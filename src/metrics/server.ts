import {http} from "../nodeHttp.ts";
import type {Registry} from "prom-client";
import {listen, type ListeningServer} from "../httpListen.ts";
import {getLogger} from "../log.ts";

/** The Prometheus scrape endpoint: `GET /metrics` in the text format; anything else is 404 or 405. */
export async function startMetricsServer(registry: Registry, opts: {port: number; address: string}): Promise<ListeningServer> {
  const log = getLogger("metrics");
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") return void res.writeHead(404, {"content-type": "text/plain"}).end("not found: the metrics are at /metrics\n");
    if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405, {allow: "GET, HEAD", "content-type": "text/plain"}).end();
    registry.metrics().then(
      (text) => res.writeHead(200, {"content-type": registry.contentType}).end(req.method === "HEAD" ? undefined : text),
      (err: Error) => {
        log.warn({err: err.message}, "metrics collection failed");
        res.writeHead(500, {"content-type": "text/plain"}).end("metrics collection failed\n");
      }
    );
  });
  const listening = await listen(server, opts.port, opts.address, {what: "the metrics server", option: "--metrics-port"});
  log.info({address: opts.address, port: listening.port}, "metrics listening");
  return listening;
}
