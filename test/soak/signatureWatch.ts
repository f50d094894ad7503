import {getJson} from "../e2e/nodeProcess.ts";

/**
 * What the validators signed, as seen from outside: votes and proposals gathered from nodes'
 * event streams (and, in the fault tests, from their blocks), checked for slashable pairs as
 * the phase0 spec's is_slashable_attestation_data does (a double vote, a surround vote), and
 * for two blocks of one proposer at one slot.
 */

/** What the event stream showed of the validators' signatures, kept across restarts. */
export class SignatureWatch {
  private readonly votes = new Map<number, Map<number, {source: number; data: string}>>();
  private readonly proposals = new Map<number, Map<number, string>>();
  readonly problems: string[] = [];
  readonly observed = {votes: 0, proposals: 0};

  /** `data`: the vote's whole attestation data as one string (two different ones for one target are a double vote) */
  vote(validator: number, source: number, target: number, data: string): void {
    this.observed.votes++;
    let byTarget = this.votes.get(validator);
    if (!byTarget) this.votes.set(validator, (byTarget = new Map()));
    const same = byTarget.get(target);
    if (same && same.data !== data) this.problems.push(`double vote: validator ${validator}, target ${target}`);
    for (const [t, v] of byTarget) {
      if ((v.source < source && target < t) || (source < v.source && t < target)) {
        this.problems.push(`surround vote: validator ${validator}, ${source}->${target} and ${v.source}->${t}`);
      }
    }
    byTarget.set(target, {source, data});
  }

  proposal(proposer: number, slot: number, root: string): void {
    this.observed.proposals++;
    let bySlot = this.proposals.get(proposer);
    if (!bySlot) this.proposals.set(proposer, (bySlot = new Map()));
    const seen = bySlot.get(slot);
    if (seen && seen !== root) this.problems.push(`double proposal: proposer ${proposer}, slot ${slot}`);
    bySlot.set(slot, root);
  }
}

interface AttestationDataJson {
  slot: string;
  index: string;
  beacon_block_root: string;
  source: {epoch: string; root: string};
  target: {epoch: string; root: string};
}

/** An attestation data (JSON) as one string: equal exactly when the data are equal. */
export function attestationDataKey(d: AttestationDataJson): string {
  return [d.slot, d.index, d.beacon_block_root, d.source.epoch, d.source.root, d.target.epoch, d.target.root].join("/");
}

/** Records a vote of `validator` with attestation data `d` (JSON). */
export function recordVote(watch: SignatureWatch, validator: number, d: AttestationDataJson): void {
  watch.vote(validator, Number(d.source.epoch), Number(d.target.epoch), attestationDataKey(d));
}

/**
 * Follows a node's event stream until `signal` aborts: each single attestation is a vote, each
 * block (its proposer read from the node) a proposal; `onBlock` hears of each block too.
 */
export async function followEvents(url: string, watch: SignatureWatch, signal: AbortSignal, onBlock?: (root: string, slot: number) => void): Promise<void> {
  const res = await fetch(`${url}/eth/v1/events?topics=single_attestation,block`, {signal, headers: {accept: "text/event-stream"}});
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, {stream: true});
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(message)?.[1];
      const data = /^data: (.*)$/m.exec(message)?.[1];
      if (!event || !data) continue;
      const json = JSON.parse(data);
      if (event === "single_attestation") {
        recordVote(watch, Number(json.attester_index), json.data);
      } else if (event === "block") {
        onBlock?.(json.block, Number(json.slot));
        const header = await getJson(url, `/eth/v1/beacon/headers/${json.block}`).catch(() => null);
        if (header?.status === 200) watch.proposal(Number(header.body.data.header.message.proposer_index), Number(json.slot), json.block);
      }
    }
  }
}

