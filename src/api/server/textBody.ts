import type {ChainForkConfig} from "@lodestar/config";
import {ApiError, badRequest} from "../errors.ts";
import type {BodyDef} from "../routes/types.ts";

/**
 * Text request bodies, for routes whose body codec takes text (`BodyDef.text`): `text/plain`,
 * and `application/x-www-form-urlencoded`, which is what `curl -d TEXT` sends without saying.
 */

const TEXT_PLAIN = "text/plain";
const FORM = "application/x-www-form-urlencoded";

function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** Whether a body of this Content-Type is read as text (when the route takes text). */
export function isTextBody(contentType: string | undefined): boolean {
  const type = mediaType(contentType);
  return type === TEXT_PLAIN || type === FORM;
}

/** The body as UTF-8 text; invalid UTF-8 is a 400. */
function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", {fatal: true}).decode(bytes);
  } catch {
    throw badRequest("Invalid request body: not valid UTF-8 text");
  }
}

/**
 * The text of a body: all of a `text/plain` body but one final line break (`echo TEXT | curl
 * --data-binary @-`); of a form, the named field when present (`--data-urlencode field=TEXT`),
 * else the whole body as it was sent (`curl -d TEXT`).
 */
export function bodyText(bytes: Uint8Array, contentType: string | undefined, formField: string): string {
  const text = decodeUtf8(bytes);
  if (mediaType(contentType) === TEXT_PLAIN) return text.replace(/\r?\n$/, "");
  const field = new URLSearchParams(text).get(formField);
  return field ?? text;
}

/** Parses a text body with the route's text codec; errors are 400s naming the reason. */
export function parseTextBody<T, O>(body: Uint8Array | undefined, contentType: string | undefined, def: BodyDef<T, O>, others: O, config: ChainForkConfig): T {
  if (!body || body.length === 0) {
    if (def.optional) return def.fromJson(undefined, others, config);
    throw badRequest("Missing request body");
  }
  try {
    return def.text!.fromText(bodyText(body, contentType, def.text!.formField), others);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw badRequest(`Invalid request body: ${(e as Error).message}`);
  }
}
