import type {BeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {fromHex, toHex} from "@lodestar/utils";
import {graffitiFromText} from "../../graffiti.ts";
import type {TopicLogger} from "../../log.ts";
import type {ValidatorBeaconApi} from "../beaconApi.ts";
import type {SlotClock} from "../clock.ts";
import type {ProposerSettings} from "../keys/proposerSettings.ts";
import {KeyRequestError, type ValidatorKeys} from "../keys/validatorKeys.ts";
import type {ValidatorSigner} from "../signer.ts";
import type {ValidatorIndices} from "../validators.ts";

/**
 * The keymanager API's routes (keymanager-oapi.yaml), each checking its request as the spec's
 * schema says (a bad one is a 400 naming the field) and answering the spec's shapes.
 *
 * Remote keys (`/eth/v1/remotekeys`): those of `--remote-signer` (read-only) and those imported
 * here (kept in the data dir), each with its signer's URL; an imported key signs from the next
 * duty on, through its signer's Web3Signer API.
 */

export interface KeymanagerContext {
  keys: ValidatorKeys;
  settings: ProposerSettings;
  signer: ValidatorSigner;
  validators: ValidatorIndices;
  api: ValidatorBeaconApi;
  config: BeaconConfig;
  clock: SlotClock;
  dataDir: string;
  log: TopicLogger;
}

export interface KeymanagerRequest {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface KeymanagerResponse {
  status: number;
  body?: unknown;
}

export class KeymanagerError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const PUBKEY = /^0x[a-fA-F0-9]{96}$/;
const ETH_ADDRESS = /^0x[a-fA-F0-9]{40}$/;
const UINT64 = /^(0|[1-9][0-9]{0,19})$/;
const ZERO_ADDRESS = "0x" + "0".repeat(40);

const badRequest = (message: string): KeymanagerError => new KeymanagerError(400, message);

function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("The request body must be a JSON object");
  return body as Record<string, unknown>;
}

function stringArray(value: unknown, field: string, pattern?: RegExp): string[] {
  if (!Array.isArray(value)) throw badRequest(`${field} must be an array`);
  value.forEach((item, i) => {
    if (typeof item !== "string") throw badRequest(`${field}[${i}] must be a string`);
    if (pattern && !pattern.test(item)) throw badRequest(`${field}[${i}] does not match ${pattern.source}`);
  });
  return value as string[];
}

function stringField(body: Record<string, unknown>, field: string, pattern?: RegExp): string {
  const value = body[field];
  if (typeof value !== "string") throw badRequest(`${field} must be a string`);
  if (pattern && !pattern.test(value)) throw badRequest(`${field} does not match ${pattern.source}`);
  return value;
}

/** The path's pubkey, lowercase, and one of ours (404 otherwise). */
function ownPubkey(req: KeymanagerRequest, ctx: KeymanagerContext): string {
  const pubkey = req.params.pubkey;
  if (!PUBKEY.test(pubkey)) throw badRequest(`pubkey ${JSON.stringify(pubkey.slice(0, 100))} is not 0x and 48 bytes of hex`);
  const lower = pubkey.toLowerCase();
  if (!ctx.keys.has(lower)) throw new KeymanagerError(404, `No validator key ${lower} in this client`);
  return lower;
}

type Handler = (req: KeymanagerRequest, ctx: KeymanagerContext) => Promise<KeymanagerResponse>;

const ok = (body: unknown): KeymanagerResponse => ({status: 200, body});
const accepted: KeymanagerResponse = {status: 202};
const noContent: KeymanagerResponse = {status: 204};

/** A KeyRequestError (the whole request refused) as a 400. */
async function asRequest<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof KeyRequestError) throw badRequest(e.message);
    throw e;
  }
}

const listKeys: Handler = async (_req, ctx) => ok({data: ctx.keys.list()});

const importKeystores: Handler = async (req, ctx) => {
  const body = bodyObject(req.body);
  const keystores = stringArray(body.keystores, "keystores");
  const passwords = stringArray(body.passwords, "passwords");
  const slashingProtection = body.slashing_protection === undefined ? undefined : stringField(body, "slashing_protection");
  const statuses = await asRequest(() => ctx.keys.importKeystores(keystores, passwords, slashingProtection));
  return ok({data: statuses});
};

const deleteKeys: Handler = async (req, ctx) => {
  const pubkeys = stringArray(bodyObject(req.body).pubkeys, "pubkeys", PUBKEY).map((pk) => pk.toLowerCase());
  const {statuses, slashingProtection} = await asRequest(() => ctx.keys.deleteKeys(pubkeys));
  return ok({data: statuses, slashing_protection: slashingProtection});
};

const listRemoteKeys: Handler = async (_req, ctx) => ok({data: ctx.keys.listRemote()});

const importRemoteKeys: Handler = async (req, ctx) => {
  const remoteKeys = bodyObject(req.body).remote_keys;
  if (!Array.isArray(remoteKeys)) throw badRequest("remote_keys must be an array");
  const definitions = remoteKeys.map((item: unknown, i) => {
    const field = `remote_keys[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw badRequest(`${field} must be an object`);
    const definition = item as Record<string, unknown>;
    try {
      // the spec leaves url optional: a key without one is refused on its own (it has no signer to ask)
      return {pubkey: stringField(definition, "pubkey", PUBKEY).toLowerCase(), url: definition.url === undefined ? "" : stringField(definition, "url")};
    } catch (e) {
      throw badRequest(`${field}.${(e as Error).message}`);
    }
  });
  return ok({data: await ctx.keys.importRemoteKeys(definitions)});
};

const deleteRemoteKeys: Handler = async (req, ctx) => {
  const pubkeys = stringArray(bodyObject(req.body).pubkeys, "pubkeys", PUBKEY).map((pk) => pk.toLowerCase());
  return ok({data: await ctx.keys.deleteRemoteKeys(pubkeys)});
};

const listFeeRecipient: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  const ethaddress = ctx.settings.feeRecipientOf(pubkey);
  if (ethaddress === undefined) throw new KeymanagerError(404, "No fee recipient for this key: set one, or start the client with --suggested-fee-recipient");
  return ok({data: {pubkey, ethaddress}});
};

const setFeeRecipient: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  const address = stringField(bodyObject(req.body), "ethaddress", ETH_ADDRESS).toLowerCase();
  if (address === ZERO_ADDRESS) throw badRequest("The 0x00 fee recipient address cannot be set through the API");
  await ctx.settings.set(pubkey, "feeRecipient", address);
  return accepted;
};

const deleteFeeRecipient: Handler = async (req, ctx) => {
  await ctx.settings.unset(ownPubkey(req, ctx), "feeRecipient");
  return noContent;
};

const getGasLimit: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  return ok({data: {pubkey, gas_limit: ctx.settings.gasLimitOf(pubkey)}});
};

const setGasLimit: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  const gasLimit = stringField(bodyObject(req.body), "gas_limit", UINT64);
  if (BigInt(gasLimit) >= 2n ** 64n) throw badRequest("gas_limit is above 2^64 - 1");
  await ctx.settings.set(pubkey, "gasLimit", gasLimit);
  return accepted;
};

const deleteGasLimit: Handler = async (req, ctx) => {
  await ctx.settings.unset(ownPubkey(req, ctx), "gasLimit");
  return noContent;
};

const getGraffiti: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  // "": none set, the beacon node's own graffiti goes into the blocks
  return ok({data: {pubkey, graffiti: ctx.settings.graffitiOf(pubkey) ?? ""}});
};

const setGraffiti: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  const graffiti = stringField(bodyObject(req.body), "graffiti");
  try {
    graffitiFromText(graffiti);
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  await ctx.settings.set(pubkey, "graffiti", graffiti);
  return accepted;
};

const deleteGraffiti: Handler = async (req, ctx) => {
  await ctx.settings.unset(ownPubkey(req, ctx), "graffiti");
  return noContent;
};

const signVoluntaryExit: Handler = async (req, ctx) => {
  const pubkey = ownPubkey(req, ctx);
  const epochText = req.query.epoch;
  if (epochText !== undefined && (typeof epochText !== "string" || !UINT64.test(epochText) || !Number.isSafeInteger(Number(epochText)))) {
    throw badRequest("epoch must be a decimal epoch");
  }
  const epoch = epochText !== undefined ? Number(epochText) : computeEpochAtSlot(Math.max(0, ctx.clock.currentSlot()));
  let validatorIndex = ctx.validators.indexOf(pubkey);
  if (validatorIndex === undefined) {
    const found = (await ctx.api.getValidators([fromHex(pubkey)])).find((v) => toHex(v.pubkey) === pubkey);
    if (!found) throw badRequest(`Validator ${pubkey} is not in the beacon node's head state: it has no index to exit`);
    validatorIndex = found.index;
  }
  const signed = await ctx.signer.signVoluntaryExit(fromHex(pubkey), {epoch, validatorIndex});
  return ok({data: {message: {epoch: String(epoch), validator_index: String(validatorIndex)}, signature: toHex(signed.signature)}});
};

export const KEYMANAGER_ROUTES: {method: string; path: string; operationId: string; handle: Handler}[] = [
  {method: "GET", path: "/eth/v1/keystores", operationId: "listKeys", handle: listKeys},
  {method: "POST", path: "/eth/v1/keystores", operationId: "importKeystores", handle: importKeystores},
  {method: "DELETE", path: "/eth/v1/keystores", operationId: "deleteKeys", handle: deleteKeys},
  {method: "GET", path: "/eth/v1/remotekeys", operationId: "listRemoteKeys", handle: listRemoteKeys},
  {method: "POST", path: "/eth/v1/remotekeys", operationId: "importRemoteKeys", handle: importRemoteKeys},
  {method: "DELETE", path: "/eth/v1/remotekeys", operationId: "deleteRemoteKeys", handle: deleteRemoteKeys},
  {method: "GET", path: "/eth/v1/validator/{pubkey}/feerecipient", operationId: "listFeeRecipient", handle: listFeeRecipient},
  {method: "POST", path: "/eth/v1/validator/{pubkey}/feerecipient", operationId: "setFeeRecipient", handle: setFeeRecipient},
  {method: "DELETE", path: "/eth/v1/validator/{pubkey}/feerecipient", operationId: "deleteFeeRecipient", handle: deleteFeeRecipient},
  {method: "GET", path: "/eth/v1/validator/{pubkey}/gas_limit", operationId: "getGasLimit", handle: getGasLimit},
  {method: "POST", path: "/eth/v1/validator/{pubkey}/gas_limit", operationId: "setGasLimit", handle: setGasLimit},
  {method: "DELETE", path: "/eth/v1/validator/{pubkey}/gas_limit", operationId: "deleteGasLimit", handle: deleteGasLimit},
  {method: "GET", path: "/eth/v1/validator/{pubkey}/graffiti", operationId: "getGraffiti", handle: getGraffiti},
  {method: "POST", path: "/eth/v1/validator/{pubkey}/graffiti", operationId: "setGraffiti", handle: setGraffiti},
  {method: "DELETE", path: "/eth/v1/validator/{pubkey}/graffiti", operationId: "deleteGraffiti", handle: deleteGraffiti},
  {method: "POST", path: "/eth/v1/validator/{pubkey}/voluntary_exit", operationId: "signVoluntaryExit", handle: signVoluntaryExit},
];
