/** A job of the BLS pool: its signature sets, each over a message (a signing root). */
export interface QueuedJob {
  sets: ReadonlyArray<{msg: Uint8Array}>;
}

/**
 * The BLS pool's waiting jobs, kept so that a batch holds jobs over the same message: the
 * worker folds the sets of one message into one pairing (verifyJobs.ts), and a slot's single
 * attestations, tens of thousands over 64 committees' data, come interleaved. Jobs are grouped
 * by the message of their first set; a batch takes whole groups in the order each group's first
 * job came, and priority jobs (a block's) before all of them. Within a group, jobs keep their order.
 */
export class JobQueue<J extends QueuedJob> {
  private readonly urgent: J[] = [];
  /** by message (hex), in the order the groups began (a Map keeps insertion order) */
  private readonly groups = new Map<string, J[]>();
  private jobs = 0;
  /** sets in the queue */
  sets = 0;

  get length(): number {
    return this.jobs;
  }

  push(job: J, priority = false): void {
    if (priority) this.urgent.push(job);
    else {
      const key = messageKey(job);
      const group = this.groups.get(key);
      if (group) group.push(job);
      else this.groups.set(key, [job]);
    }
    this.jobs++;
    this.sets += job.sets.length;
  }

  /** The next jobs, up to `maxSets` sets (at least one job): priority jobs first, then by group. */
  take(maxSets: number): J[] {
    const taken: J[] = [];
    let count = 0;
    for (;;) {
      const next = this.peek();
      if (!next || (taken.length > 0 && count + next.sets.length > maxSets)) return taken;
      this.remove();
      taken.push(next);
      count += next.sets.length;
    }
  }

  /** Every job, emptied (the pool closing). */
  drain(): J[] {
    const all = [...this.urgent.splice(0), ...[...this.groups.values()].flat()];
    this.groups.clear();
    this.jobs = 0;
    this.sets = 0;
    return all;
  }

  private peek(): J | undefined {
    if (this.urgent.length > 0) return this.urgent[0];
    const first = this.groups.values().next();
    return first.done ? undefined : first.value[0];
  }

  private remove(): void {
    let job: J;
    if (this.urgent.length > 0) job = this.urgent.shift()!;
    else {
      const [key, group] = this.groups.entries().next().value as [string, J[]];
      job = group.shift()!;
      if (group.length === 0) this.groups.delete(key);
    }
    this.jobs--;
    this.sets -= job.sets.length;
  }
}

function messageKey(job: QueuedJob): string {
  const msg = job.sets[0]?.msg;
  return msg ? Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength).toString("hex") : "";
}
