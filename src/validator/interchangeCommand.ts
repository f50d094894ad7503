import {existsSync} from "node:fs";
import {mkdir, readFile, rename, rm, writeFile} from "node:fs/promises";
import {join} from "node:path";
import {InterchangeError, type InterchangeForm, interchangeJson, parseInterchange} from "./interchange.ts";
import {SlashingProtection, slashingProtectionDir} from "./slashingProtection.ts";

/**
 * `beacon-gateway slashing-protection export|import`: EIP-3076 files in and out of a
 * validator data dir's slashing protection database. Every failure is an InterchangeError
 * with a message for the user, and leaves the database as it was.
 */

export interface InterchangeExportOptions {
  dataDir: string;
  file: string;
  format: InterchangeForm;
  /** 0x hex; needed only when the records are not bound to a chain yet */
  genesisValidatorsRoot: string | undefined;
}

export interface InterchangeImportOptions {
  dataDir: string;
  file: string;
  /** 0x hex; when given, the file must be for this chain */
  genesisValidatorsRoot: string | undefined;
}

/** Opens the database, telling the user what to do when a validator client holds it. */
async function openProtection(dataDir: string, create: boolean): Promise<SlashingProtection> {
  const dir = slashingProtectionDir(dataDir);
  if (!existsSync(dir) && existsSync(join(dataDir, "beacon"))) {
    throw new InterchangeError(`${dataDir} is a node's data dir: the data dir of its validators is ${join(dataDir, "validator")}`);
  }
  if (!create && !existsSync(dir)) {
    throw new InterchangeError(`${dataDir} has no slashing protection database (${dir}); a node's validators keep theirs in <node data dir>/validator`);
  }
  if (create) await mkdir(dir, {recursive: true});
  try {
    return await SlashingProtection.open(dir, {createIfMissing: create});
  } catch (e) {
    const cause = (e as {cause?: {code?: string}}).cause;
    if (cause?.code === "LEVEL_LOCKED") {
      throw new InterchangeError(`the slashing protection database ${dir} is in use: stop the validator client or node running these validators first`);
    }
    throw new InterchangeError(`cannot open the slashing protection database ${dir}: ${(e as Error).message}`);
  }
}

/** Writes the interchange file of a data dir's records; resolves to a line for the user. */
export async function exportInterchangeFile(opts: InterchangeExportOptions): Promise<string> {
  const protection = await openProtection(opts.dataDir, false);
  try {
    const bound = await protection.genesisValidatorsRoot();
    const given = opts.genesisValidatorsRoot?.toLowerCase();
    if (bound !== null && given !== undefined && bound !== given) {
      throw new InterchangeError(`the records are for genesis validators root ${bound}, not ${given}`);
    }
    const root = bound ?? given;
    if (root === undefined) {
      throw new InterchangeError("the records are bound to no chain yet (no validator client has run on them): give --genesis-validators-root");
    }
    const histories = await protection.exportHistory();
    const text = JSON.stringify(interchangeJson(root, histories, opts.format), null, 2) + "\n";
    // written whole or not at all: a half-written file must never be taken for a complete one
    const partial = `${opts.file}.partial`;
    try {
      await writeFile(partial, text);
      await rename(partial, opts.file);
    } catch (e) {
      await rm(partial, {force: true});
      throw new InterchangeError(`cannot write ${opts.file}: ${(e as Error).message}`);
    }
    return `exported the ${opts.format} history of ${histories.length} validators to ${opts.file} (genesis validators root ${root})`;
  } finally {
    await protection.close();
  }
}

/** Merges an interchange file into a data dir's records; resolves to a line for the user. */
export async function importInterchangeFile(opts: InterchangeImportOptions): Promise<string> {
  let text: string;
  try {
    text = await readFile(opts.file, "utf8");
  } catch (e) {
    throw new InterchangeError(`cannot read ${opts.file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InterchangeError(`${opts.file} is not JSON: ${(e as Error).message}`);
  }
  const interchange = parseInterchange(json);
  const given = opts.genesisValidatorsRoot?.toLowerCase();
  if (given !== undefined && given !== interchange.genesisValidatorsRoot) {
    throw new InterchangeError(`${opts.file} is for genesis validators root ${interchange.genesisValidatorsRoot}, not ${given}`);
  }
  const protection = await openProtection(opts.dataDir, true);
  try {
    const summary = await protection.importHistory(interchange.genesisValidatorsRoot, interchange.data);
    return `imported ${summary.blocks} blocks and ${summary.attestations} attestations of ${summary.validators} validators into ${slashingProtectionDir(opts.dataDir)}`;
  } finally {
    await protection.close();
  }
}
