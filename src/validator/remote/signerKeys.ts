import type {TopicLogger} from "../../log.ts";
import {errorMessage} from "../context.ts";
import type {ValidatorKeys} from "../keys/validatorKeys.ts";
import type {RemoteSignerClient} from "./client.ts";

/**
 * The keys of `--remote-signer`: those its `GET /api/v1/eth2/publicKeys` lists, asked at start
 * and again each epoch, so that a signer down at start, or given keys later, is signed with once
 * it answers. They are read-only in the keymanager API (the signer's list decides).
 */
export class RemoteSignerKeys {
  private readonly client: RemoteSignerClient;
  private readonly keys: ValidatorKeys;
  private readonly log: TopicLogger;
  /** whether the last refresh failed: a failure is logged again only after an answer */
  private failing = false;

  constructor(client: RemoteSignerClient, keys: ValidatorKeys, log: TopicLogger) {
    this.client = client;
    this.keys = keys;
    this.log = log;
  }

  /** Adds the keys the signer holds that are not known yet; resolves to how many (a failure is logged, never thrown). */
  async refresh(): Promise<number> {
    let listed: string[];
    try {
      listed = await this.client.publicKeys();
    } catch (err) {
      if (!this.failing) this.log.error({url: this.client.url, error: errorMessage(err)}, "Remote signer's keys not read: asked again each epoch");
      this.failing = true;
      return 0;
    }
    this.failing = false;
    const added = listed.filter((pubkey) => !this.keys.has(pubkey));
    for (const pubkey of added) this.keys.addRemote(pubkey, this.client.url, true);
    if (added.length > 0) this.log.info({url: this.client.url, added: added.length, listed: listed.length}, "Remote signer's keys added");
    return added.length;
  }
}
