/**
 * On first use the module is still compiling (tens of ms; more on a slow device) when `open`
 * is called. The opener's first request is known without it — `zarr.json` of the node — so it
 * is sent now and its answer handed to the opener. The URL rule is the core's
 * (`open::first_metadata_url`); `tests/tables/first-metadata-url.json` pins this copy to it.
 * @internal
 */
import type { WasmOptions } from "./wasm/shardfetch.js";
import type { OpenOptions } from "./types.js";
import { isLoaded } from "./module.js";
import { firstMetadataUrl } from "./meta-url.js";
import { runDecoder } from "./decoders.js";

/** A metadata request sent before the module was ready, for the opener to take over. */
export interface EarlyRequest {
  url: string;
  response: Promise<Response> | undefined;
}

/**
 * Options that leave the opener's first request as the URL rule says; any other (`store`, a
 * store kind's own options) may change it.
 */
const NEUTRAL = new Set([
  "headers", "fetch", "signal", "path", "format", "resolveUrl", "scale", "cacheBytes", "treat403AsMissing",
  "mergeGap", "mergeMax", "workers", "maxInFlight", "maxDecodedBytes", "retry", "maxMetadataBytes", "chunkCacheBytes",
]);

/**
 * Send the first metadata request now, where it is certain to come first (no `format` other
 * than zarr3, no `precomputed://`, no store named): otherwise it would be a wasted request.
 */
export function earlyMetadataRequest(url: string, options: OpenOptions): EarlyRequest | undefined {
  if (isLoaded() || url.startsWith("precomputed://")) return undefined;
  if (options.format !== undefined && options.format !== "zarr3") return undefined;
  if (options.fetch === undefined && typeof fetch !== "function") return undefined;
  for (const [k, v] of Object.entries(options)) if (v !== undefined && !NEUTRAL.has(k)) return undefined;
  const metaUrl = firstMetadataUrl(url, options.path);
  if (metaUrl === "") return undefined;
  // The same request the opener makes: GET, the caller's headers, no Range, the caller's signal.
  const init: RequestInit = { method: "GET", headers: { ...options.headers } };
  if (options.signal !== undefined) init.signal = options.signal;
  let response: Promise<Response>;
  try {
    response = options.fetch ? options.fetch(metaUrl, init) : fetch(metaUrl, init);
  } catch {
    return undefined; // a throwing fetch throws again, where it is reported
  }
  response.catch(() => undefined); // reported when the opener awaits it
  return { url: metaUrl, response };
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
      if (r !== undefined && input === early.url && (init.method ?? "GET") === "GET" && !hasRange(init.headers)) {
        early.response = undefined;
        return r;
      }
      return f ? f(input, init) : fetch(input, init);
    };
  }
  return out;
}

function hasRange(h: RequestInit["headers"]): boolean {
  if (h === undefined) return false;
  if (h instanceof Headers) return h.has("range");
  if (Array.isArray(h)) return h.some(([k]) => k.toLowerCase() === "range");
  return Object.keys(h).some((k) => k.toLowerCase() === "range");
}
