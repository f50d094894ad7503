import type {Route} from "../../src/api/routes/types.ts";
import type {SampleRequest} from "./sampleContext.ts";

/** Sends a sample request over real HTTP, and reads an event stream for a few events. */

export interface SampleResponse {
  status: number;
  headers: Headers;
  /** the body text; for an event stream, the events read */
  text: string;
  events?: {event: string; data: string}[];
}

const EVENT_TIMEOUT_MS = 10_000;

export function sampleUrl(baseUrl: string, route: Route, req: SampleRequest): URL {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = req.params?.[name];
    if (value === undefined) throw new Error(`${route.operationId} sample "${req.label}": no path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
  const url = new URL(baseUrl + path);
  for (const [name, value] of Object.entries(req.query ?? {})) {
    for (const item of value === undefined ? [] : [value].flat()) url.searchParams.append(name, String(item));
  }
  return url;
}

export async function sendSample(baseUrl: string, route: Route, req: SampleRequest): Promise<SampleResponse> {
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  let body: string | undefined;
  if (req.body !== undefined || req.rawBody !== undefined) {
    headers["content-type"] ??= "application/json";
    body = req.rawBody ?? JSON.stringify(req.body);
  }
  const abort = new AbortController();
  const res = await fetch(sampleUrl(baseUrl, route, req), {method: route.method, headers, body, signal: abort.signal});
  if (req.events === undefined || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    return {status: res.status, headers: res.headers, text: await res.text()};
  }
  try {
    const events = await readEvents(res, req.events);
    return {status: res.status, headers: res.headers, text: "", events};
  } finally {
    abort.abort();
  }
}

/** Reads `count` events (`event:` and `data:` lines; comments skipped) or fails after a timeout. */
async function readEvents(res: Response, count: number): Promise<{event: string; data: string}[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: {event: string; data: string}[] = [];
  let buffer = "";
  const deadline = Date.now() + EVENT_TIMEOUT_MS;
  while (events.length < count) {
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${events.length} of ${count} events within ${EVENT_TIMEOUT_MS} ms`)), deadline - Date.now()).unref());
    const {value, done} = await Promise.race([reader.read(), timeout]);
    if (done) throw new Error(`the stream ended after ${events.length} of ${count} events`);
    buffer += value.replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split("\n").filter((line) => !line.startsWith(":"));
      if (lines.length === 0) continue;
      const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ""));
      events.push({event: field("event")[0] ?? "message", data: field("data").join("\n")});
    }
  }
  return events;
}
