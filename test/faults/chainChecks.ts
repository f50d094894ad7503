import {getJson} from "../e2e/nodeProcess.ts";
import {recordVote, type SignatureWatch} from "../soak/signatureWatch.ts";

/**
 * What a fault test checks of a devnet from outside, over REST: that no node's finalized
 * checkpoint ever goes back or changes, that the nodes agree on every finalized epoch, and that
 * the blocks every node holds (both sides of a split) carry no slashable pair.
 */

/**
 * A REST answer's JSON body. Asked again, up to three times, when the connection fails (a
 * kept-alive connection the server closed meanwhile) or the server timed the request out (a
 * 408 from a node starved of CPU); any other answer than 200 throws.
 */
export async function restJson(url: string, path: string): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const answer = await getJson(url, path).catch((e: Error) => e);
    if (!(answer instanceof Error) && answer.status === 200) return answer.body;
    const failure = answer instanceof Error ? answer : new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 200)}`);
    const retry = answer instanceof Error ? answer instanceof TypeError : answer.status === 408;
    if (!retry || attempt === 3) throw failure;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every finalized checkpoint each node reported, in order; a change or a step back is a problem. */
export class FinalityLog {
  /** epoch -> root, as first reported by any node */
  readonly roots = new Map<number, string>();
  private readonly last = new Map<number, number>();
  readonly problems: string[] = [];

  record(node: number, epoch: number, root: string): void {
    const last = this.last.get(node) ?? -1;
    if (epoch < last) this.problems.push(`node ${node}: finalized epoch went back from ${last} to ${epoch}`);
    this.last.set(node, Math.max(last, epoch));
    const known = this.roots.get(epoch);
    if (known === undefined) this.roots.set(epoch, root);
    else if (known !== root) this.problems.push(`node ${node}: finalized epoch ${epoch} at ${root}, another node had ${known}`);
  }

  /** the lowest finalized epoch across nodes, as last reported */
  lowest(nodes: number): number {
    let low = Infinity;
    for (let i = 0; i < nodes; i++) low = Math.min(low, this.last.get(i) ?? -1);
    return low;
  }

  highest(): number {
    return Math.max(-1, ...this.last.values());
  }
}

/**
 * Each node's head and finality. The finalized checkpoint that must never go back is the node's
 * own (its fork choice store's, from the fork-choice dump), not its head state's: by the spec's
 * fork choice a head may be a block whose state has not yet processed the latest finality (a
 * node cut off on a branch of its own, whose blocks descend from the finalized block).
 */
export async function sampleNodes(urls: string[], finality: FinalityLog): Promise<Array<{slot: number; root: string; finalized: number; justified: number}>> {
  return Promise.all(
    urls.map(async (url, i) => {
      const [head, store] = await Promise.all([restJson(url, "/eth/v1/beacon/headers/head"), restJson(url, "/eth/v1/debug/fork_choice")]);
      const finalized = store.finalized_checkpoint as {epoch: string; root: string};
      const justified = store.justified_checkpoint as {epoch: string; root: string};
      finality.record(i, Number(finalized.epoch), finalized.root);
      return {slot: Number(head.data.header.message.slot), root: head.data.root as string, finalized: Number(finalized.epoch), justified: Number(justified.epoch)};
    })
  );
}

/** Bits of an SSZ bitlist (its last set bit marks the length) or bitvector, from hex. */
export function bitsOf(hex: string, list: boolean): boolean[] {
  const bytes = Buffer.from(hex.replace(/^0x/, ""), "hex");
  const bits: boolean[] = [];
  for (const byte of bytes) for (let i = 0; i < 8; i++) bits.push(((byte >> i) & 1) === 1);
  if (list) {
    const length = bits.lastIndexOf(true);
    if (length < 0) throw new Error(`bitlist ${hex} has no length bit`);
    bits.length = length;
  }
  return bits;
}

interface AttestationJson {
  aggregation_bits: string;
  committee_bits?: string;
  data: {slot: string; index: string; beacon_block_root: string; source: {epoch: string; root: string}; target: {epoch: string; root: string}};
}

/** The validators of an attestation in a block, from the committees of the block's own state (its branch's shuffling). */
async function attesters(url: string, stateRoot: string, att: AttestationJson): Promise<number[]> {
  const {status, body} = await getJson(url, `/eth/v1/beacon/states/${stateRoot}/committees?epoch=${att.data.target.epoch}&slot=${att.data.slot}`);
  if (status !== 200) throw new Error(`committees of state ${stateRoot}: ${status}`);
  const committees = new Map((body.data as Array<{index: string; validators: string[]}>).map((c) => [Number(c.index), c.validators.map(Number)]));
  // electra on: the committees named by committee_bits, in order, share one aggregation bitlist
  const indices = att.committee_bits ? bitsOf(att.committee_bits, false).flatMap((set, i) => (set ? [i] : [])) : [Number(att.data.index)];
  const members = indices.flatMap((i) => committees.get(i) ?? []);
  const bits = bitsOf(att.aggregation_bits, true);
  if (bits.length !== members.length) throw new Error(`attestation of slot ${att.data.slot}: ${bits.length} bits for ${members.length} members`);
  return members.filter((_, i) => bits[i]);
}

/** What checkBlocks read: blocks whose attestations were checked, and those whose state no node holds any more. */
export interface BlocksRead {
  /** roots done (read, or found without a state): not read again */
  done: Set<string>;
  read: number;
  /** blocks of a branch pruned after finalization: their proposals are checked, their attestations only through the event streams */
  stateless: number;
}

/**
 * Reads each block (by root) not read yet from the first node that has it: its proposer is a
 * proposal, and every attestation it carries a vote of each of its attesters (from the committees
 * of the block's own state, on any node that still holds it). A losing branch's states go once
 * finality passes it: read the blocks while both branches are in fork choice, and again at the end.
 */
export async function checkBlocks(urls: string[], roots: Iterable<string>, watch: SignatureWatch, seen: BlocksRead): Promise<void> {
  for (const root of new Set(roots)) {
    if (seen.done.has(root)) continue;
    for (const url of urls) {
      const {status, body} = await getJson(url, `/eth/v2/beacon/blocks/${root}`);
      if (status !== 200) continue;
      const block = body.data.message;
      watch.proposal(Number(block.proposer_index), Number(block.slot), root);
      seen.done.add(root);
      const stateHolder = await firstWith(urls, `/eth/v1/beacon/states/${block.state_root}/finality_checkpoints`);
      if (!stateHolder) {
        seen.stateless++;
        break;
      }
      for (const att of block.body.attestations as AttestationJson[]) {
        for (const validator of await attesters(stateHolder, block.state_root, att)) recordVote(watch, validator, att.data);
      }
      seen.read++;
      break;
    }
  }
}

/** The first node that answers `path` with 200, or null. */
async function firstWith(urls: string[], path: string): Promise<string | null> {
  for (const url of urls) if ((await getJson(url, path)).status === 200) return url;
  return null;
}

/** Every block root in a node's fork choice (both branches while they are not finalized). */
export async function forkChoiceRoots(url: string): Promise<string[]> {
  const body = await restJson(url, "/eth/v1/debug/fork_choice");
  return ((body.fork_choice_nodes ?? body.data.fork_choice_nodes) as Array<{block_root: string}>).map((n) => n.block_root);
}
