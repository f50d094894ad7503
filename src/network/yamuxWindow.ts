import {StreamState, YamuxStream} from "@libp2p/yamux/stream";

/**
 * @libp2p/yamux (8.x) answers every data frame it receives with a window update frame, so each
 * gossip message a peer sends costs this node a frame encoded and written back: on a node
 * subscribed to every subnet that was a fifth of the main thread (bench:gossip's profile). The
 * yamux spec leaves the timing to the receiver; go-yamux and rust-yamux send the update once
 * half of the window is used. This makes @libp2p/yamux do the same: an established stream whose
 * receive window is still more than half open sends nothing yet. Opening (SYN/ACK), paused and
 * closing streams keep the library's behaviour, as does its window growth, which now measures
 * the time to use half a window (as go-yamux does).
 *
 * A sender is never left without window: once more than half of it is used, the next data
 * frame brings the update, while the sender still has the other half to send.
 */
export function sendYamuxWindowUpdatesAtHalf(): void {
  const proto = YamuxStream.prototype as unknown as WindowedStream & {[patched]?: true};
  if (proto[patched]) return;
  const original = proto.sendWindowUpdate;
  proto.sendWindowUpdate = function (this: WindowedStream): void {
    if (this.state === StreamState.Established && this.recvWindowCapacity > this.recvWindow / 2) return;
    original.call(this);
  };
  proto[patched] = true;
}

const patched = Symbol("windowUpdatesAtHalf");

/** the fields of YamuxStream the library keeps private */
interface WindowedStream {
  state: StreamState;
  recvWindow: number;
  recvWindowCapacity: number;
  sendWindowUpdate(): void;
}
