import type {ServerResponse} from "node:http";
import {Readable} from "node:stream";
import {pipeline} from "node:stream/promises";
import type {ReadableStream as NodeReadableStream} from "node:stream/web";
import {getLogger} from "../../log.ts";
import {ApiError} from "../errors.ts";
import type {EventCodec, EventSource} from "../routes/types.ts";
import {EVENT_STREAM_MEDIA_TYPE, SSE_KEEP_ALIVE, formatSseEvent} from "../sse.ts";
import type {WireResponse} from "../wire.ts";

/**
 * The response of an `events` route: the handler's events as SSE text in a stream with a bounded
 * queue per client. A client that reads too slowly (or not at all) does not make the node hold
 * ever more text: once its queue is full it is dropped, the stream is closed and the
 * subscription ends. The same stream serves the HTTP server and the in-process transport.
 */

const log = getLogger("api");

/** Read at each new stream (tests shorten them). */
export const eventStreamLimits = {
  /** characters of event text queued for one client before it is dropped */
  maxQueuedChars: 4 * 1024 * 1024,
  /** how often a comment line is sent, so idle connections stay open through proxies */
  keepAliveMs: 15_000,
  /** event streams open at once (`--rest-max-event-streams`); one more is a 429 */
  maxClients: 64,
};

let openStreams = 0;

export function eventStreamResponse<E>(source: EventSource<E>, codec: EventCodec<E>, operationId: string): WireResponse {
  const {maxQueuedChars, keepAliveMs, maxClients} = eventStreamLimits;
  if (openStreams >= maxClients) throw new ApiError(429, `Too many event stream clients: ${openStreams} open (at most ${maxClients})`);
  openStreams++;
  let stop: () => void = () => {};
  const eventStream = new ReadableStream<string>(
    {
      start(controller) {
        let stopped = false;
        const push = (text: string): void => {
          if (stopped) return;
          if (text.length > (controller.desiredSize ?? 0)) {
            stop();
            log.warn({route: operationId, queuedChars: maxQueuedChars - (controller.desiredSize ?? 0)}, "Event stream client too slow: queue full, dropped");
            controller.error(new Error("event stream queue full"));
            return;
          }
          controller.enqueue(text);
        };
        const timer = setInterval(() => push(SSE_KEEP_ALIVE), keepAliveMs);
        timer.unref();
        let unsubscribe: () => void = () => {};
        stop = () => {
          if (stopped) return;
          stopped = true;
          openStreams--;
          clearInterval(timer);
          unsubscribe();
        };
        // runs inside the chain's and the pools' emit(): a bad event is logged here, never thrown at them
        unsubscribe = source.subscribe((event) => {
          let text: string;
          try {
            text = formatSseEvent(codec, event);
          } catch (err) {
            log.error({err, route: operationId}, "Event could not be formatted; skipped");
            return;
          }
          push(text);
        });
      },
      cancel: () => stop(),
    },
    {highWaterMark: maxQueuedChars, size: (chunk) => chunk.length}
  );
  return {status: 200, headers: {"Content-Type": EVENT_STREAM_MEDIA_TYPE, "Cache-Control": "no-cache"}, eventStream};
}

/**
 * Writes an event stream to an HTTP response as the socket takes it. When the client goes away
 * the stream is cancelled (which ends the subscription); when the stream fails (a full queue)
 * the connection is closed.
 */
export async function writeEventStream(res: ServerResponse, eventStream: ReadableStream<string>): Promise<void> {
  res.flushHeaders();
  try {
    await pipeline(Readable.fromWeb(eventStream as NodeReadableStream<string>), res);
  } catch {
    // the client closed the connection, or was dropped (logged then)
  }
}
