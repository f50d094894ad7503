import type {TopicLogger} from "../log.ts";
import type {HeadEvent, ValidatorBeaconApi} from "./beaconApi.ts";
import {errorMessage} from "./context.ts";

/**
 * Follows the beacon node's `head` events, whose dependent roots say when a re-org changed the
 * shuffling that duties were computed from (as Lighthouse and Lodestar do): each event is handed
 * to `onHead`. When the stream cannot be opened or ends (the node restarted, failed over), it is
 * opened again at the next slot (`nextSlot`: the client's clock); `live` says whether it is open.
 */
export class HeadWatch {
  private readonly api: Pick<ValidatorBeaconApi, "headEvents">;
  private readonly log: TopicLogger;
  private readonly onHead: (event: HeadEvent) => void;
  private readonly nextSlot: () => Promise<void>;
  private readonly abort = new AbortController();
  /** whether the stream is open now */
  live = false;
  /** whether its loss was logged since it was last open */
  private lossLogged = false;

  constructor(api: Pick<ValidatorBeaconApi, "headEvents">, log: TopicLogger, onHead: (event: HeadEvent) => void, nextSlot: () => Promise<void>) {
    this.api = api;
    this.log = log;
    this.onHead = onHead;
    this.nextSlot = nextSlot;
  }

  start(): void {
    void this.follow();
  }

  stop(): void {
    this.abort.abort();
  }

  private async follow(): Promise<void> {
    const {signal} = this.abort;
    while (!signal.aborted) {
      let reason = "the stream ended";
      try {
        const events = await this.api.headEvents(signal);
        this.live = true;
        this.lossLogged = false;
        for await (const event of events) {
          if (signal.aborted) break;
          this.onHead(event);
        }
      } catch (err) {
        reason = errorMessage(err);
      }
      this.live = false;
      if (signal.aborted) return;
      if (!this.lossLogged) {
        this.lossLogged = true;
        this.log.warn({reason}, "Head events from the beacon node stopped: attester duties are fetched again each slot until they are back");
      }
      await this.nextSlot();
    }
  }
}
