import {defaultLogger} from "@libp2p/logger";
import {StreamState, YamuxStream} from "@libp2p/yamux/stream";

/** the yamux frame header a stream hands to its muxer (not exported by @libp2p/yamux) */
export interface FrameHeader {
  type: number;
  flag: number;
  streamID: number;
  length: number;
}

/** An established @libp2p/yamux stream with no muxer under it: each frame it would send goes to `sendFrame`. */
export function establishedYamuxStream(direction: "inbound" | "outbound", sendFrame: (header: FrameHeader, data?: unknown) => boolean): YamuxStream {
  return new YamuxStream({
    id: "1",
    streamId: 1,
    state: StreamState.Established,
    direction,
    log: defaultLogger().forComponent("test:yamux"),
    getRTT: () => -1,
    sendFrame,
  } as unknown as ConstructorParameters<typeof YamuxStream>[0]);
}
