import type {SerializedSet} from "./verifier.ts";

/**
 * A batch of jobs (each a list of signature sets) written into one ArrayBuffer, which is moved to
 * a BLS worker rather than copied. Posted as objects, a batch of 128 sets was cloned field by
 * field (each set's root, signature and key or signers apart) on the main thread and rebuilt on
 * the worker's: 0.4-0.5 s of the main thread over bench:gossip's 2 slots. The worker reads the
 * roots, signatures and keys as views of the buffer, without copies.
 *
 * Layout (integers little-endian): job count (u32); per job its set count (u32); per set the
 * lengths of its root, signature and key (u16 each, a key of length 0: none), its signer count
 * (u32), then the root, signature and key bytes and the signers (u32 each).
 */
export function packJobs(jobs: readonly (readonly SerializedSet[])[]): ArrayBuffer {
  let size = 4;
  for (const sets of jobs) {
    size += 4;
    for (const set of sets) size += 10 + set.msg.length + set.sig.length + (set.pk?.length ?? 0) + 4 * (set.signers?.length ?? 0);
  }
  const buffer = new ArrayBuffer(size);
  const view = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  let at = 0;
  const u16 = (n: number) => (view.setUint16(at, n, true), (at += 2));
  const u32 = (n: number) => (view.setUint32(at, n, true), (at += 4));
  const raw = (b: Uint8Array) => (bytes.set(b, at), (at += b.length));
  u32(jobs.length);
  for (const sets of jobs) {
    u32(sets.length);
    for (const set of sets) {
      u16(set.msg.length);
      u16(set.sig.length);
      u16(set.pk?.length ?? 0);
      u32(set.signers?.length ?? 0);
      raw(set.msg);
      raw(set.sig);
      if (set.pk) raw(set.pk);
      for (const index of set.signers ?? []) u32(index);
    }
  }
  return buffer;
}

/** The jobs of a packed batch, their byte fields views of `buffer`. */
export function unpackJobs(buffer: ArrayBuffer): SerializedSet[][] {
  const view = new DataView(buffer);
  let at = 0;
  const u16 = () => ((at += 2), view.getUint16(at - 2, true));
  const u32 = () => ((at += 4), view.getUint32(at - 4, true));
  const raw = (length: number) => ((at += length), new Uint8Array(buffer, at - length, length));
  const jobs: SerializedSet[][] = new Array(u32());
  for (let j = 0; j < jobs.length; j++) {
    const sets: SerializedSet[] = new Array(u32());
    for (let s = 0; s < sets.length; s++) {
      const msgLength = u16();
      const sigLength = u16();
      const pkLength = u16();
      const signerCount = u32();
      const set: SerializedSet = {msg: raw(msgLength), sig: raw(sigLength)};
      if (pkLength > 0) set.pk = raw(pkLength);
      if (signerCount > 0) {
        const signers: number[] = new Array(signerCount);
        for (let i = 0; i < signerCount; i++) signers[i] = u32();
        set.signers = signers;
      }
      sets[s] = set;
    }
    jobs[j] = sets;
  }
  return jobs;
}
