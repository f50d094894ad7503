import type {EventCodec} from "./routes/types.ts";

/**
 * The `text/event-stream` format (server-sent events) of the `events` routes: the server writes
 * each event as `event:` and `data:` lines, the client reads them back. Only what the Beacon API
 * uses: no `id:` or `retry:` fields.
 */

export const EVENT_STREAM_MEDIA_TYPE = "text/event-stream";

/** A comment line: keeps the connection alive through proxies; readers skip it. */
export const SSE_KEEP_ALIVE = ": keep-alive\n\n";

/** One event as SSE text; `data` is one JSON text (JSON.stringify never breaks lines). */
export function formatSseEvent<E>(codec: EventCodec<E>, event: E): string {
  return `event: ${codec.name(event)}\ndata: ${JSON.stringify(codec.toJson(event))}\n\n`;
}

export interface SseMessage {
  event: string;
  data: string;
}

/** Splits SSE text, given in pieces of any size, into messages; comments and other fields are skipped. */
export class SseParser {
  private pending = "";
  private event = "";
  private data: string[] = [];

  push(text: string): SseMessage[] {
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    const messages: SseMessage[] = [];
    for (const raw of lines) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line === "") {
        if (this.data.length > 0) messages.push({event: this.event || "message", data: this.data.join("\n")});
        this.event = "";
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
      if (field === "event") this.event = value;
      else if (field === "data") this.data.push(value);
    }
    return messages;
  }
}

/**
 * The events of an SSE text stream, read with the route's codec. Stopping the iteration cancels
 * the stream, and so does `signal` at once, even while no event comes (the iteration then ends).
 */
export async function* readSseEvents<E>(text: ReadableStream<string>, codec: EventCodec<E>, signal?: AbortSignal): AsyncGenerator<E> {
  const parser = new SseParser();
  const reader = text.getReader();
  // a read waiting for the next chunk ends (done) when the stream is cancelled
  const cancel = (): void => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener("abort", cancel, {once: true});
  try {
    while (!signal?.aborted) {
      const {done, value} = await reader.read();
      if (done) return;
      for (const {event, data} of parser.push(value)) yield codec.fromJson(event, JSON.parse(data));
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    await reader.cancel().catch(() => undefined);
  }
}
