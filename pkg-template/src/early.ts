/**
 * On first use the module is still compiling (tens of ms; more on a slow device) when `open`
 * is called. The opener's first request is known without it — `zarr.json` of the node, or the
 * start of a TIFF or HDF5 file — so it is sent now and its answer handed to the opener (and the
 * decoder module an HDF5 file is read through is fetched meanwhile). The rule is the core's
 * (`open::first_request`); `tests/tables/first-metadata-url.json` pins this copy to it.
 * @internal
 */
import type { WasmOptions } from "./wasm/shardfetch.js";
import type { OpenOptions } from "./types.js";
import { isLoaded } from "./module.js";
import { firstRequest } from "./meta-url.js";
import { hasDecoder, runDecoder } from "./decoders.js";
import { loadDecoders } from "./decoder-urls.js";
import { cancelBody, readAhead } from "./bodies.js";

/** A metadata request sent before the module was ready, for the opener to take over. */
export interface EarlyRequest {
  url: string;
  /** Its `Range` header, or "". */
  range: string;
  response: Promise<Response> | undefined;
  /** The load of the decoder module the file is read through (a TIFF's, an HDF5 file's), if any: settled, never rejected. */
  reader?: Promise<void>;
}

/**
 * Options that leave the opener's first request as the URL rule says; any other (`store`, a
 * store kind's own options) may change it.
 */
const NEUTRAL = new Set([
  "headers", "fetch", "signal", "path", "format", "resolveUrl", "scale", "cacheBytes", "treat403AsMissing",
  "mergeGap", "mergeMax", "workers", "maxInFlight", "maxDecodedBytes", "retry", "maxMetadataBytes", "chunkCacheBytes",
  "recheck", "conditional", "strings",
]);

/** The core's defaults of the limits on what the opener reads (options `maxMetadataBytes`, `maxDecodedBytes`). */
const MAX_METADATA = 16 << 20;
const MAX_DECODED = 512 << 20;

/**
 * Send the first metadata request now, where it is certain to come first (no `format` other
 * than zarr3, no `precomputed://`, no store named): otherwise it would be a wasted request.
 */
export function earlyMetadataRequest(url: string, options: OpenOptions): EarlyRequest | undefined {
  if (url.startsWith("precomputed://")) return undefined;
  if (options.format !== undefined && options.format !== "zarr3") return undefined;
  if (options.fetch === undefined && typeof fetch !== "function") return undefined;
  for (const [k, v] of Object.entries(options)) if (v !== undefined && !NEUTRAL.has(k)) return undefined;
  const first = firstRequest(url, options.path);
  if (first.url === "") return undefined;
  // A loaded module asks at once — unless the file is read through a decoder module not loaded
  // yet (an HDF5 file after Zarr arrays): then its first read and that module load together.
  const readers = first.reader === "" ? [] : first.reader.split(" ");
  if (isLoaded() && readers.every(hasDecoder)) return undefined;
  // The same request the opener makes: GET, the caller's headers (and the Range it asks), no
  // other, the caller's signal, and its cache mode (a range never from the HTTP cache, a whole
  // document only once the server confirmed it: README, "When files change").
  const headers: Record<string, string> = { ...options.headers };
  if (first.range !== "") headers.Range = first.range;
  const init: RequestInit = { method: "GET", headers, cache: first.range !== "" ? "no-store" : "no-cache" };
  if (options.signal !== undefined) init.signal = options.signal;
  let response: Promise<Response>;
  try {
    const answer = Promise.resolve(options.fetch ? options.fetch(first.url, init) : fetch(first.url, init));
    // Read as it arrives (at most what the opener reads), not left on the wire until the
    // module has loaded: see bodies.ts.
    const ahead = first.range === "" ? (options.maxMetadataBytes ?? MAX_METADATA) : (options.maxDecodedBytes ?? MAX_DECODED);
    response = answer.then((r) => readAhead(r, ahead));
  } catch {
    return undefined; // a throwing fetch throws again, where it is reported
  }
  response.catch(() => undefined); // reported when the opener awaits it
  // (A failure here is reported where the opener loads it again.)
  const reader = readers.length > 0 ? loadDecoders(readers).catch(() => undefined) : undefined;
  return { url: first.url, range: first.range, response, reader };
}

/** The early request's answer, if the opener did not take it: cancelled (when it arrives). */
export function dropEarly(early: EarlyRequest | undefined): void {
  const r = early?.response;
  if (early === undefined || r === undefined) return;
  early.response = undefined;
  r.then(cancelBody, () => undefined);
}

/** The module's options: the caller's, with the early request's answer handed to the opener. */
export function wasmOptions(options: OpenOptions, early?: EarlyRequest): WasmOptions {
  const { workers: _w, chunkCacheBytes: _c, ...o } = options;
  void _w;
  void _c;
  const out: WasmOptions = { ...o, decoders: runDecoder };
  if (early !== undefined) {
    const f = options.fetch;
    out.fetch = (input: string, init: RequestInit) => {
      const r = early.response;
      if (r !== undefined && input === early.url && (init.method ?? "GET") === "GET" && rangeOf(init.headers) === early.range) {
        early.response = undefined;
        return r;
      }
      return f ? f(input, init) : fetch(input, init);
    };
  }
  return out;
}

/** The `Range` header of `h`, or "". */
function rangeOf(h: RequestInit["headers"]): string {
  if (h === undefined) return "";
  if (h instanceof Headers) return h.get("range") ?? "";
  const pairs = Array.isArray(h) ? h : Object.entries(h);
  return pairs.find(([k]) => k.toLowerCase() === "range")?.[1] ?? "";
}
