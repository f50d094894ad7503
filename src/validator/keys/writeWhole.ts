import {rename, writeFile} from "node:fs/promises";

/** Writes a file whole (mode 0600): a new file renamed over the old one, so a crash leaves one or the other. */
export async function writeWhole(path: string, text: string): Promise<void> {
  const partial = `${path}.partial`;
  await writeFile(partial, text, {mode: 0o600});
  await rename(partial, path);
}
