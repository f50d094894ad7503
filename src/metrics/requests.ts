import {Counter, Histogram, type Registry} from "prom-client";
import {BoundedLabel} from "./labels.ts";

export interface RequestMetricsOptions {
  /** the metric names' stem: `<prefix>_total` and `<prefix>_duration_seconds` */
  prefix: string;
  /** what is counted, for the help texts, e.g. "REST requests" */
  what: string;
  /** the label naming the request kind, e.g. "operationId" or "method" */
  label: string;
  /** its possible values; anything else is counted under `other` */
  known: Iterable<string>;
  other: string;
}

const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * A count and a latency histogram of requests by kind and outcome, both with bounded labels.
 * Generic: the REST server labels by operationId and HTTP status, and any other server (the
 * JSON-RPC layer) registers its own on the registry it is given.
 */
export class RequestMetrics {
  private readonly kind: BoundedLabel;
  private readonly label: string;
  private readonly count: Counter<string>;
  private readonly latency: Histogram<string>;

  constructor(registry: Registry, opts: RequestMetricsOptions) {
    this.kind = new BoundedLabel(opts.known, opts.other);
    this.label = opts.label;
    const labelNames = [opts.label, "status"];
    this.count = new Counter({name: `${opts.prefix}_total`, help: `${opts.what} answered, by ${opts.label} and status`, labelNames, registers: [registry]});
    this.latency = new Histogram({
      name: `${opts.prefix}_duration_seconds`,
      help: `time to answer ${opts.what}, by ${opts.label} and status`,
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  /** `status` must come from a bounded set too (see statusLabel). */
  observe(kind: string | undefined, status: string, seconds: number): void {
    const labels = {[this.label]: this.kind.of(kind), status};
    this.count.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
