import type {WireFormat} from "../routes/types.ts";
import {MEDIA_TYPE} from "../wire.ts";

/** Content negotiation: which format to answer in (Accept) and which format a body is in (Content-Type). */

interface MediaRange {
  type: string;
  q: number;
  order: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(",")
    .map((part, order) => {
      const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
      const qParam = params.find((p) => p.startsWith("q="));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return {type, q: Number.isFinite(q) ? q : 0, order};
    })
    .filter((range) => range.type !== "" && range.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
}

function matches(range: string, mediaType: string): boolean {
  return range === mediaType || range === "*/*" || (range.endsWith("/*") && mediaType.startsWith(range.slice(0, -1)));
}

/**
 * The response format for an Accept header: the most preferred range (by q, then order) that
 * a supported format matches, JSON first on wildcards. No header means JSON; null means 406.
 */
export function responseFormat(accept: string | undefined, sszSupported: boolean): WireFormat | null {
  if (accept === undefined || accept.trim() === "") return "json";
  const formats: WireFormat[] = sszSupported ? ["json", "ssz"] : ["json"];
  for (const range of parseAccept(accept)) {
    const format = formats.find((f) => matches(range.type, MEDIA_TYPE[f]));
    if (format) return format;
  }
  return null;
}

/** The format of a request body from its Content-Type (JSON when absent); null means 415. */
export function requestFormat(contentType: string | undefined, sszSupported: boolean): WireFormat | null {
  const mediaType = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (mediaType === "" || mediaType === MEDIA_TYPE.json) return "json";
  if (mediaType === MEDIA_TYPE.ssz && sszSupported) return "ssz";
  return null;
}
