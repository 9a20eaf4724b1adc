/**
 * shardfetch: read Zarr v3 arrays (including `sharding_indexed` ones) from static HTTP storage.
 *
 * Works without a bundler in a plain `<script type="module">`, in (module) Web Workers and in
 * Node >= 20. The WebAssembly module is loaded on first use.
 *
 * @packageDocumentation
 */

import init, { openNode, WasmArray, WasmGroup } from "./wasm/shardfetch.js";
import type {
  WasmArrayMeta,
  WasmChunk,
  WasmFetched,
  WasmGroupMeta,
  WasmOptions,
  WasmSelectionItem,
} from "./wasm/shardfetch.js";
import { cores, defaultWorkers, Pool, workersAvailable } from "./pool.js";
import type { Decoded } from "./pool.js";

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/** Error codes carried by {@link ShardfetchError.code}. */
export type ErrorCode =
  | "NotFound"
  | "HttpError"
  | "Network"
  | "InvalidMetadata"
  | "UnsupportedCodec"
  | "UnsupportedDataType"
  | "ChecksumMismatch"
  | "CorruptShard"
  | "Aborted"
  | "InvalidSelection"
  | "NotAnArray"
  | "Closed"
  | "Internal"
  | "Unknown"
  // Codes added by newer versions of the wasm core stay representable.
  | (string & {});

/** Data types an array can have. */
export type DataType =
  | "bool"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "float16"
  | "float32"
  | "float64"
  | "complex64"
  | "complex128"
  | "raw_bytes"
  | "structured";

/** One scale of a Neuroglancer precomputed volume (axes x, y, z). */
export interface ScaleInfo {
  key: string;
  /** Voxels along x, y, z. */
  size: [number, number, number];
  chunkSize: [number, number, number];
  /** Nanometres per voxel along x, y, z. */
  resolution: [number, number, number];
  voxelOffset: [number, number, number];
  encoding: string;
  sharded: boolean;
}

/** One field of a `structured` element: name, data type, byte offset in the element. */
export type Field = readonly [name: string, dtype: DataType, byteOffset: number];

/** Storage formats: Zarr v3, Zarr v2, the pre-release Zarr v3 sharding-transformer layout, Neuroglancer precomputed. */
export type Format = "zarr3" | "zarr2" | "zarr3-draft" | "precomputed";

/**
 * Structural type of a `Float16Array` (ES2025); declared here so that the typings do not need a
 * `lib` that has it.
 */
export interface Float16ArrayLike extends ArrayLike<number> {
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly BYTES_PER_ELEMENT: number;
}

/** The typed arrays a read can return (see {@link ShardedArray.get} for the mapping). */
export type TypedArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array
  | Float16ArrayLike;

/**
 * One item per axis: `null` selects the whole axis, an integer selects one index (the axis is
 * dropped from the result), `[start, stop]` selects the half-open range `start <= i < stop`.
 */
export type SelectionItem = null | number | readonly [number, number];
export type Selection = readonly SelectionItem[];

/** Result of {@link ShardedArray.getChunk} and {@link ShardedArray.get}. */
export interface ChunkResult<T extends TypedArray = TypedArray> {
  /**
   * The values. Element `(i0, i1, ...)` is `data[i0 * stride[0] + i1 * stride[1] + ...]`.
   * `data` may hold more elements than `prod(shape)` (edge chunks keep the full chunk's stride).
   */
  data: T;
  /** Shape of the result (clipped to the array for edge chunks). */
  shape: number[];
  /** Strides in elements (not bytes). */
  stride: number[];
}

/** Options for {@link open} and {@link openArray}. */
export interface OpenOptions {
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** A custom `fetch` used for every request (defaults to the global `fetch`). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Aborts opening the node (reads take their own `signal`, see {@link ReadOptions}). */
  signal?: AbortSignal;
  /** Path of the node under the given store URL (for the draft Zarr v3 layout, the URL is the store root). */
  path?: string;
  /** The storage format; detected when omitted (costs a request per format tried, Zarr v3 first). */
  format?: Format;
  /** Neuroglancer precomputed: which scale, by index or by key (default 0). */
  scale?: number | string;
  /** Byte budget of the in-memory cache (shard indexes, small objects). */
  cacheBytes?: number;
  /** Treat HTTP 403 like 404 (missing object → fill value), as S3 answers for missing keys. */
  treat403AsMissing?: boolean;
  /**
   * Chunks of one object wanted together (a `get`, or `getChunk` calls made in the same task)
   * are read with one request when fewer than `mergeGap` bytes lie between them (default
   * 256 KiB) and the request stays within `mergeMax` bytes (default 16 MiB).
   */
  mergeGap?: number;
  mergeMax?: number;
  /**
   * Web Workers that decode chunks off this thread (each with its own wasm instance; buffers
   * are transferred, never copied). Default: `hardwareConcurrency - 1` (1 to 4) where module
   * workers exist (browsers); `false` decodes on this thread, which is what Node does.
   */
  workers?: number | false;
  /**
   * Requests in flight per origin (shared by every array of that origin; the last value set
   * applies); more wait, highest `priority` first. Default 16.
   */
  maxInFlight?: number;
  /**
   * Keep up to this many bytes of decoded chunks for `getChunk` (least recently used out);
   * default 0: none (a viewer usually keeps its own tiles). Results are copies: writing to one
   * does not change the cache.
   */
  chunkCacheBytes?: number;
}

/** Options of a single read. */
export interface ReadOptions {
  signal?: AbortSignal;
  /**
   * When an origin's requests in flight are at their limit (`maxInFlight`), waiting requests
   * start highest priority first (default 0): a viewer gives its visible tiles a higher one.
   */
  priority?: number;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Every error thrown or rejected by this package. */
export class ShardfetchError extends Error {
  readonly code: ErrorCode;
  readonly url?: string;
  readonly status?: number;

  constructor(code: ErrorCode, message: string, extra: { url?: string; status?: number; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "ShardfetchError";
    this.code = code;
    if (extra.url !== undefined) this.url = extra.url;
    if (extra.status !== undefined) this.status = extra.status;
  }
}

function toError(e: unknown): ShardfetchError {
  if (e instanceof ShardfetchError) return e;
  if (e !== null && typeof e === "object") {
    const o = e as { code?: unknown; message?: unknown; url?: unknown; status?: unknown; name?: unknown };
    const message = typeof o.message === "string" ? o.message : String(e);
    const extra = {
      url: typeof o.url === "string" ? o.url : undefined,
      status: typeof o.status === "number" ? o.status : undefined,
      cause: e,
    };
    if (typeof o.code === "string" && o.code !== "") return new ShardfetchError(o.code, message, extra);
    if (o.name === "AbortError" || o.name === "TimeoutError") return new ShardfetchError("Aborted", message, extra);
    if (e instanceof TypeError && /fetch|network/i.test(message)) return new ShardfetchError("Network", message, extra);
    return new ShardfetchError("Internal", message, extra);
  }
  return new ShardfetchError("Unknown", String(e));
}

function abortedError(signal: AbortSignal): ShardfetchError {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? `: ${reason.message}` : "";
  return new ShardfetchError("Aborted", `operation aborted${detail}`, { cause: reason });
}

// ---------------------------------------------------------------------------------------------
// Wasm initialisation (memoised)
// ---------------------------------------------------------------------------------------------

let ready: Promise<void> | undefined;

function isNode(): boolean {
  return typeof process !== "undefined" && typeof process.versions?.node === "string";
}

/** The compiled module, kept to start decoding workers without fetching or compiling again. */
let wasmModule: WebAssembly.Module | undefined;

async function compileWasm(): Promise<WebAssembly.Module> {
  const wasmUrl = new URL("./wasm/shardfetch_bg.wasm", import.meta.url);
  if (isNode() && wasmUrl.protocol === "file:") {
    // Node's fetch cannot read file: URLs.
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ "node:fs/promises");
    return WebAssembly.compile(await fs.readFile(wasmUrl));
  }
  const response = fetch(wasmUrl);
  try {
    return await WebAssembly.compileStreaming(response);
  } catch {
    // Served without `application/wasm`: compile from the bytes.
    return WebAssembly.compile(await (await fetch(wasmUrl)).arrayBuffer());
  }
}

/** Chunks smaller than this (decoded bytes) decode on the calling thread unless `workers` is set. */
const SMALL_CHUNK = 32 * 1024;

/** Set once the module is instantiated: until then, opening overlaps its metadata request with it. */
let wasmReady = false;

async function initWasm(): Promise<void> {
  wasmModule = await compileWasm();
  await init({ module_or_path: wasmModule });
  wasmReady = true;
  // Nothing being opened yet: compile the read path in the background meanwhile.
  if (autoWarmUp && opening === 0 && workersAvailable()) void warmUp();
}

/**
 * Load and instantiate the WebAssembly module. Called automatically on first use; call it
 * yourself to start loading early. Safe to call many times.
 */
export function initialize(): Promise<void> {
  if (!ready) {
    ready = initWasm().catch((e: unknown) => {
      ready = undefined; // allow a retry (e.g. after a network error)
      throw new ShardfetchError("Internal", `failed to load the shardfetch WebAssembly module: ${errorMessage(e)}`, {
        cause: e,
      });
    });
  }
  return ready;
}

// Start loading the module as soon as the package is imported (first use would wait for it);
// a failure here is retried, and reported, on first use.
initialize().catch(() => undefined);

// ---------------------------------------------------------------------------------------------
// Warm-up
// ---------------------------------------------------------------------------------------------

/** What {@link warmUp} did. */
export interface WarmUpReport {
  /** Whether a worker ran (not where there are no Web Workers, e.g. Node, or it failed to start). */
  ran: boolean;
  /** Stopped early: an `open` started on a machine with no core to spare (≤ 2). */
  stopped: boolean;
  /** From the start to the answer, ms. */
  ms: number;
  /** Reads that matched the values their writer (zarr-python, tensorstore) read back. */
  checked: number;
  /** What went wrong; the warm-up never rejects. */
  errors: string[];
}

/** `open` calls waiting for the module. */
let opening = 0;
let autoWarmUp = true;

/**
 * Whether the package starts its warm-up worker by itself once the module has loaded (default
 * true). Call with `false` right after importing it where a worker is not wanted (a Content
 * Security Policy without `worker-src`, a bundle that leaves `warm.js` out); `warmUp()` still
 * runs it on demand.
 */
export function setAutoWarmUp(enabled: boolean): void {
  autoWarmUp = enabled;
}

interface Warming {
  promise: Promise<WarmUpReport>;
  done: boolean;
  stop(): void;
}

let warming: Warming | undefined;

/**
 * Compile the read path (Zarr v3/v2 and Neuroglancer precomputed metadata, sharding, gzip,
 * zstd, blosc, JPEG, compressed_segmentation, regions) in a background Web Worker, so that the
 * first `open` and reads do not compile it on this thread (V8 compiles each wasm function at
 * its first call; the compiled code is shared by every thread using the module). Runs by itself once the module is loaded if nothing is being
 * opened by then; calling it again returns the same report. No requests to any data server.
 */
export function warmUp(): Promise<WarmUpReport> {
  warming ??= startWarmUp();
  return warming.promise;
}

function startWarmUp(): Warming {
  const t0 = performance.now();
  let worker: Worker | undefined;
  let resolve!: (r: WarmUpReport) => void;
  const report = (ran: boolean, errors: string[], checked = 0, stopped = false): WarmUpReport => ({
    ran,
    stopped,
    ms: performance.now() - t0,
    checked,
    errors,
  });
  const state: Warming = {
    promise: new Promise<WarmUpReport>((r) => (resolve = r)),
    done: false,
    stop() {
      finish(report(worker !== undefined, [], 0, true));
      if (warming === state) warming = undefined; // a later call may run it again
    },
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = (r: WarmUpReport) => {
    if (state.done) return;
    state.done = true;
    clearTimeout(timer);
    worker?.terminate();
    resolve(r);
  };
  void (async () => {
    if (!workersAvailable()) return finish(report(false, []));
    try {
      await initialize();
    } catch (e) {
      return finish(report(false, [errorMessage(e)]));
    }
    if (state.done) return;
    try {
      worker = new Worker(new URL("./warm.js", import.meta.url), { type: "module", name: "shardfetch-warm-up" });
    } catch (e) {
      return finish(report(false, [errorMessage(e)]));
    }
    worker.onmessage = (ev: MessageEvent<{ checked: number; errors: string[] }>) =>
      finish(report(true, ev.data.errors, ev.data.checked));
    worker.onerror = (ev: ErrorEvent) => finish(report(false, [ev.message || "the warm-up worker failed to start"]));
    worker.postMessage({ module: wasmModule });
    // ~0.1-0.2 s on a slow machine: a worker that never answers is not kept alive.
    timer = setTimeout(() => finish(report(true, ["the warm-up worker did not answer within 20 s"])), 20_000);
  })();
  return state;
}

/** An `open` starts: with no core to spare, a warm-up under way would only slow it down. */
function yieldWarmUp(): void {
  if (warming && !warming.done && cores() <= 2) warming.stop();
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** A metadata request sent before the module was ready, for the opener to take over. */
interface EarlyRequest {
  url: string;
  response: Promise<Response> | undefined;
}

/**
 * On first use the module is still compiling (tens of ms; more on a slow device) when `open`
 * is called. The opener's first request is known without it — `zarr.json` of the node, the URL
 * built as `src/core/open.rs` builds it — so send it now and hand its answer to the opener.
 * Only where that request is certain to come first (no `format` other than zarr3, no
 * `precomputed://`): otherwise it would be a wasted request.
 */
function earlyMetadataRequest(url: string, options: OpenOptions): EarlyRequest | undefined {
  if (wasmReady || url.startsWith("precomputed://")) return undefined;
  if (options.format !== undefined && options.format !== "zarr3") return undefined;
  if (options.fetch === undefined && typeof fetch !== "function") return undefined;
  const cut = url.search(/[?#]/);
  const base = (cut < 0 ? url : url.slice(0, cut)).replace(/\/+$/, "");
  const path = (options.path ?? "").replace(/^\/+|\/+$/g, "");
  const metaUrl = `${path === "" ? base : `${base}/${path}`}/zarr.json${cut < 0 ? "" : url.slice(cut)}`;
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

function wasmOptions(options: OpenOptions, early?: EarlyRequest): WasmOptions {
  const o: WasmOptions = {};
  if (options.headers !== undefined) o.headers = { ...options.headers };
  if (options.fetch !== undefined) o.fetch = options.fetch;
  if (early !== undefined) {
    const f = options.fetch;
    o.fetch = (input: string, init: RequestInit) => {
      const r = early.response;
      if (r !== undefined && input === early.url && (init.method ?? "GET") === "GET" && !hasRange(init.headers)) {
        early.response = undefined;
        return r;
      }
      return f ? f(input, init) : fetch(input, init);
    };
  }
  if (options.signal !== undefined) o.signal = options.signal;
  if (options.cacheBytes !== undefined) o.cacheBytes = options.cacheBytes;
  if (options.treat403AsMissing !== undefined) o.treat403AsMissing = options.treat403AsMissing;
  if (options.path !== undefined) o.path = options.path;
  if (options.mergeGap !== undefined) o.mergeGap = options.mergeGap;
  if (options.mergeMax !== undefined) o.mergeMax = options.mergeMax;
  if (options.maxInFlight !== undefined) o.maxInFlight = options.maxInFlight;
  if (options.format !== undefined) o.format = options.format;
  if (options.scale !== undefined) o.scale = options.scale;
  return o;
}

function hasRange(h: RequestInit["headers"]): boolean {
  if (h === undefined) return false;
  if (h instanceof Headers) return h.has("range");
  if (Array.isArray(h)) return h.some(([k]) => k.toLowerCase() === "range");
  return Object.keys(h).some((k) => k.toLowerCase() === "range");
}

type TypedArrayCtor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray;
  readonly BYTES_PER_ELEMENT: number;
};

function ctorFor(dtype: string): TypedArrayCtor {
  switch (dtype) {
    case "bool":
    case "uint8":
      return Uint8Array;
    case "int8":
      return Int8Array;
    case "int16":
      return Int16Array;
    case "uint16":
      return Uint16Array;
    case "int32":
      return Int32Array;
    case "uint32":
      return Uint32Array;
    case "int64":
      return BigInt64Array;
    case "uint64":
      return BigUint64Array;
    case "float32":
      return Float32Array;
    case "float64":
    case "complex128":
      return Float64Array;
    case "complex64":
      return Float32Array;
    case "raw_bytes":
    case "structured":
      return Uint8Array;
    case "float16": {
      const F16 = (globalThis as { Float16Array?: TypedArrayCtor }).Float16Array;
      return F16 ?? Uint16Array;
    }
    default:
      return Uint8Array;
  }
}

/**
 * Elements that are several values (complex: 2 floats; raw/structured: itemSize bytes) get a
 * trailing axis of that length.
 */
function toResult(chunk: WasmChunk, ctor: TypedArrayCtor, unit: number): ChunkResult {
  let bytes = chunk.bytes;
  const size = ctor.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % size !== 0) bytes = bytes.slice(); // defensive: realign (never expected)
  const data = new ctor(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / size));
  const shape = Array.from(chunk.shape);
  const stride = Array.from(chunk.stride);
  if (unit > 1) return { data, shape: [...shape, unit], stride: [...stride.map((s) => s * unit), 1] };
  return { data, shape, stride };
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

function copyResult(r: ChunkResult): ChunkResult {
  const data = (r.data as Uint8Array).slice() as unknown as TypedArray; // every TypedArray has slice()
  return { data, shape: [...r.shape], stride: [...r.stride] };
}

/** Decoded chunks by coordinates, least recently used out past `capacity` bytes. */
class ChunkCache {
  readonly #map = new Map<string, ChunkResult>();
  #bytes = 0;
  hits = 0;
  constructor(readonly capacity: number) {}

  get(coords: readonly number[]): ChunkResult | undefined {
    const k = coords.join(",");
    const r = this.#map.get(k);
    if (!r) return undefined;
    this.#map.delete(k);
    this.#map.set(k, r);
    this.hits++;
    return copyResult(r);
  }

  put(coords: readonly number[], r: ChunkResult): void {
    const k = coords.join(",");
    const size = r.data.byteLength;
    if (size > this.capacity || this.#map.has(k)) return;
    this.#map.set(k, copyResult(r));
    this.#bytes += size;
    for (const [old, v] of this.#map) {
      if (this.#bytes <= this.capacity) break;
      this.#map.delete(old);
      this.#bytes -= v.data.byteLength;
    }
  }
}

/** The decoding pool shared by every array (created on first use). */
let pool: Pool | undefined;
let nextKey = 1;

function cStrides(shape: readonly number[]): number[] {
  const s = shape.map(() => 1);
  for (let k = shape.length - 2; k >= 0; k--) s[k] = (s[k + 1] ?? 1) * (shape[k + 1] ?? 1);
  return s;
}

/** `n` elements, each the bytes of `fill`. */
function filled(n: number, fill: Uint8Array): Uint8Array {
  const out = new Uint8Array(n * fill.length);
  if (fill.some((b) => b !== 0) && out.length > 0) {
    out.set(fill);
    for (let have = fill.length; have < out.length; have *= 2) out.copyWithin(have, 0, Math.min(have, out.length - have));
  }
  return out;
}

/**
 * Copy a C-ordered box `[lo, hi)` (array coordinates) into `out`, the C-ordered region of
 * `extent` elements starting at `start`; `size` bytes per element.
 */
function paste(
  out: Uint8Array,
  extent: readonly number[],
  start: readonly number[],
  box: Uint8Array,
  lo: readonly number[],
  hi: readonly number[],
  size: number,
): void {
  const n = extent.length;
  const shape = lo.map((l, k) => (hi[k] ?? l) - l);
  const outStride = cStrides(extent);
  const row = (shape[n - 1] ?? 1) * size;
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  const idx = new Array<number>(Math.max(0, n - 1)).fill(0);
  for (let r = 0; r < rows; r++) {
    let at = 0;
    for (let k = 0; k < n; k++) at += ((lo[k] ?? 0) - (start[k] ?? 0) + (k < n - 1 ? (idx[k] ?? 0) : 0)) * (outStride[k] ?? 1);
    out.set(box.subarray(r * row, r * row + row), at * size);
    for (let k = n - 2; k >= 0; k--) {
      if ((idx[k] = (idx[k] ?? 0) + 1) < (shape[k] ?? 0)) break;
      idx[k] = 0;
    }
  }
}

/** Reject as soon as `signal` aborts, even if the work (e.g. a custom fetch) ignores it. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** Network counters of one array (see {@link ShardedArray.stats}). */
export interface ArrayStats {
  /** HTTP requests sent (GET and HEAD). */
  requests: number;
  /** Response body bytes received. */
  bytes: number;
  /** Shard-index lookups answered from the cache. */
  indexHits: number;
  /** Shard indexes fetched (including missing shards). */
  indexFetches: number;
  /** Chunks read from storage (absent chunks not counted). */
  chunks: number;
  /** Requests that served more than one chunk (neighbours merged). */
  mergedRequests: number;
  /** Chunks found in the kept bytes of an earlier merged read (no request; counted in `chunks`). */
  keptHits: number;
  /** Chunks decoded by the worker pool (the rest were decoded on this thread). */
  workerJobs: number;
  /** Milliseconds spent decoding, on this thread and in the workers. */
  decodeMs: number;
  /** getChunk calls answered by the decoded-chunk cache (option `chunkCacheBytes`). */
  chunkCacheHits: number;
}

/** A `getChunk` call waiting for the end of the current task, to be read with its neighbours. */
interface Pending {
  coords: number[];
  signal: AbortSignal | undefined;
  priority: number;
  resolve: (r: ChunkResult) => void;
  reject: (e: unknown) => void;
}

// ---------------------------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------------------------

/** An opened Zarr v3 array. */
export class ShardedArray {
  /** URL of the array's directory (no trailing slash). */
  readonly url: string;
  /** The storage format the array was read as. */
  readonly format: Format;
  readonly shape: readonly number[];
  readonly dtype: DataType;
  /**
   * Shape of the unit that is read (the inner chunk for sharded arrays); `null` when the grid
   * is irregular (rectilinear), see {@link chunkShapes}.
   */
  readonly chunkShape: readonly number[] | null;
  /** For an irregular (rectilinear) grid, the chunk sizes along each axis; otherwise `null`. */
  readonly chunkShapes: readonly (readonly number[])[] | null;
  /** Shape of a shard (an object in storage), or `null` when the array is not sharded. */
  readonly shardShape: readonly number[] | null;
  /**
   * int64/uint64 fill values are `bigint`, bool ones `boolean`, complex ones `[re, im]`,
   * raw/structured ones the element's bytes, everything else `number`.
   */
  readonly fillValue: number | bigint | boolean | readonly [number, number] | Uint8Array;
  /** Bytes per element. */
  readonly itemSize: number;
  /** A `structured` element's fields (little-endian values at their byte offsets); otherwise `null`. */
  readonly fields: readonly Field[] | null;
  /**
   * Neuroglancer precomputed: every scale of the volume (open another with the `scale`
   * option), and the index of this one; otherwise `null`.
   */
  readonly scales: readonly ScaleInfo[] | null;
  readonly scaleIndex: number | null;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly dimensionNames: readonly (string | null)[] | null;

  #handle: WasmArray | null;
  readonly #ctor: TypedArrayCtor;
  readonly #unit: number;
  readonly #options: OpenOptions;
  /** Decoding workers to use (0: decode on this thread). */
  readonly #workers: number;
  /** This array's name in the decoding pool. */
  readonly #key = nextKey++;

  /** @internal Use {@link openArray} or {@link open}. */
  constructor(handle: unknown, wasmMeta: unknown, options: OpenOptions = {}) {
    const meta = wasmMeta as WasmArrayMeta;
    this.#handle = handle as WasmArray;
    this.#options = options;
    this.#chunkCache = options.chunkCacheBytes ? new ChunkCache(options.chunkCacheBytes) : null;
    const w = options.workers;
    this.#workers = w === false ? 0 : w === undefined ? (workersAvailable() ? defaultWorkers() : 0) : Math.max(0, Math.floor(w));
    // Plain bytes (no compression) cost more to move to a worker and back than to arrange here.
    if (!meta.costlyDecode) this.#workers = 0;
    // So do small chunks by default: handing one over and back costs this thread ~30 µs, about
    // what decoding 8 KiB here costs (measured: 64² uint16 chunks read 1.1-1.5× faster inline,
    // without long tasks; at 128 KiB per chunk, workers and inline are even on 2 cores).
    const chunkBytes = meta.chunkShape ? meta.chunkShape.reduce((a, b) => a * b, meta.itemSize) : Infinity;
    if (w === undefined && chunkBytes < SMALL_CHUNK) this.#workers = 0;
    this.url = meta.url;
    this.format = meta.format as Format;
    this.shape = Object.freeze(Array.from(meta.shape));
    this.dtype = meta.dtype as DataType;
    this.chunkShape = meta.chunkShape == null ? null : Object.freeze(Array.from(meta.chunkShape));
    this.chunkShapes =
      meta.chunkShapes == null ? null : Object.freeze(meta.chunkShapes.map((a) => Object.freeze(Array.from(a))));
    this.shardShape = meta.shardShape == null ? null : Object.freeze(Array.from(meta.shardShape));
    this.fillValue = meta.fillValue;
    this.attributes = meta.attributes ?? {};
    this.dimensionNames = meta.dimensionNames == null ? null : Object.freeze(Array.from(meta.dimensionNames));
    this.#ctor = ctorFor(meta.dtype);
    this.itemSize = meta.itemSize;
    this.fields = Array.isArray(meta.extra?.fields) ? Object.freeze(meta.extra.fields as Field[]) : null;
    this.scales = Array.isArray(meta.extra?.scales) ? Object.freeze(meta.extra.scales as ScaleInfo[]) : null;
    this.scaleIndex = typeof meta.extra?.scale === "number" ? meta.extra.scale : null;
    this.#unit = meta.dtype.startsWith("complex") ? 2 : this.#ctor === Uint8Array && meta.itemSize > 1 ? meta.itemSize : 1;
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  #live(): WasmArray {
    if (this.#handle === null) throw new ShardfetchError("Closed", `array ${this.url} was closed`);
    return this.#handle;
  }

  /**
   * Read one chunk (the inner chunk of a sharded array) by its grid coordinates.
   *
   * `data` is typed by `dtype`: bool → `Uint8Array` (0/1), int8 → `Int8Array`, uint8 →
   * `Uint8Array`, int16/uint16/int32/uint32/float32/float64 → the matching typed array, int64 →
   * `BigInt64Array`, uint64 → `BigUint64Array`, float16 → `Float16Array` where
   * `globalThis.Float16Array` exists, otherwise a `Uint16Array` of the raw IEEE half bits.
   *
   * For edge chunks `shape` is clipped to the array while `stride` stays the full chunk's, so
   * `data` may hold more elements than `prod(shape)`. Missing chunks read as the fill value.
   */
  async getChunk(coords: readonly number[], options: ReadOptions = {}): Promise<ChunkResult> {
    const { signal } = options;
    checkSignal(signal);
    if (!Array.isArray(coords)) throw new ShardfetchError("InvalidSelection", "chunk coordinates must be an array");
    await initialize();
    checkSignal(signal);
    this.#live();
    const cache = this.#chunkCache;
    const cached = cache?.get(coords);
    if (cached) return cached;
    // Calls issued in the same task are read together: neighbours in a shard share requests.
    // While reads are under way the network is busy anyway: wait one task more, so that calls
    // made as their answers land (each in its own task: a tile loader refilling its slots)
    // join the batch too.
    const result = new Promise<ChunkResult>((resolve, reject) => {
      if (this.#pending.length === 0) {
        if (this.#reading > 0) setTimeout(() => this.#flush(), 0);
        else queueMicrotask(() => this.#flush());
      }
      this.#pending.push({ coords: Array.from(coords), signal, priority: options.priority ?? 0, resolve, reject });
    });
    if (cache) void result.then((r) => cache.put(coords, r), () => undefined);
    return raceAbort(result, signal);
  }

  #pending: Pending[] = [];

  /** Batches whose reads are under way. */
  #reading = 0;

  #flush(): void {
    const batch = this.#pending.filter((p) => !p.signal?.aborted);
    this.#pending = [];
    if (batch.length === 0) return;
    let handle: WasmArray;
    try {
      handle = this.#live();
    } catch (e) {
      for (const p of batch) p.reject(toError(e));
      return;
    }
    this.#reading++;
    const done = () => {
      this.#reading--;
      this.#readDone();
    };
    // The shared read stops only when every caller in it has given up.
    const ctl = new AbortController();
    if (batch.every((p) => p.signal)) {
      let live = batch.length;
      const onAbort = () => {
        if (--live === 0) ctl.abort();
      };
      for (const p of batch) p.signal?.addEventListener("abort", onAbort, { once: true });
    }
    const list = batch.map((p) => p.coords);
    // The batch is as urgent as its most urgent caller.
    const priority = Math.max(...batch.map((p) => p.priority));
    const failAll = (e: unknown) => batch.forEach((p) => p.reject(toError(e)));
    const pool = this.#pool();
    if (!pool) {
      const onChunk = (i: number, r: WasmChunk | { error: unknown }) => {
        const p = batch[i];
        if ("error" in r) p?.reject(toError(r.error));
        else p?.resolve(toResult(r, this.#ctor, this.#unit));
      };
      handle.getChunks(list, ctl.signal, onChunk, priority).then(() => failAll("chunk was never read"), failAll).finally(done);
      return;
    }
    // Fetch here (requests merged, indexes cached); decode in the workers.
    const spec = this.#specText(handle);
    const onChunk = (i: number, r: WasmFetched) => {
      const p = batch[i];
      if (!p) return;
      if ("error" in r) p.reject(toError(r.error));
      else if ("encoded" in r) {
        pool.run(this.#key, spec, p.coords, r.encoded).then(
          (d) => {
            this.#decoded(d);
            p.resolve(toResult(d as WasmChunk, this.#ctor, this.#unit));
          },
          (e: unknown) => p.reject(toError(e)),
        );
      } else p.resolve(toResult(r, this.#ctor, this.#unit));
    };
    // Settled callers ignore the late rejection: it only reaches chunks never reported.
    handle.fetchChunks(list, ctl.signal, onChunk, priority).then(() => undefined, failAll).finally(done);
  }

  /**
   * The decoding pool, or `undefined` when decoding happens on this thread: workers off, failed,
   * or not ready yet (the first reads do not wait for workers to start).
   */
  #pool(): Pool | undefined {
    if (this.#workers === 0 || !wasmModule) return undefined;
    pool ??= new Pool(wasmModule);
    if (pool.broken) return undefined;
    if (pool.ready) {
      pool.grow(this.#workers);
      return pool;
    }
    // Workers start once this first read is over: starting them during it (a thread, its
    // scripts, a wasm instance) slowed the first chunk by 10–25 ms on a 2-core machine.
    this.#growAfterRead = true;
    return undefined;
  }

  #growAfterRead = false;

  /** A read is over: start the workers it did without. */
  #readDone(): void {
    if (!this.#growAfterRead) return;
    this.#growAfterRead = false;
    if (pool && !pool.broken) pool.grow(this.#workers);
  }

  #spec: string | undefined;
  #specText(handle: WasmArray): string {
    this.#spec ??= handle.spec();
    return this.#spec;
  }

  /**
   * Read a selection (one item per axis, see {@link Selection}); integer items drop their axis.
   * `data` is typed as for {@link getChunk}; the result is C-ordered by `stride`.
   */
  async get(selection: Selection, options: ReadOptions = {}): Promise<ChunkResult> {
    const { signal } = options;
    checkSignal(signal);
    if (!Array.isArray(selection)) throw new ShardfetchError("InvalidSelection", "selection must be an array");
    const sel = selection.map((s) => (s === undefined ? null : Array.isArray(s) ? [s[0], s[1]] : s)) as (
      | null
      | number
      | [number, number]
    )[];
    await initialize();
    checkSignal(signal);
    try {
      const handle = this.#live();
      const pool = this.#pool();
      const priority = options.priority ?? 0;
      const chunk = pool
        ? this.#getInWorkers(handle, pool, sel, signal, priority)
        : handle.get(sel, signal ?? null, priority);
      return toResult(await raceAbort(chunk, signal), this.#ctor, this.#unit);
    } catch (e) {
      throw toError(e);
    } finally {
      this.#readDone();
    }
  }

  /** A region, its chunks fetched here and decoded (and cut to the region) in the workers. */
  async #getInWorkers(
    handle: WasmArray,
    pool: Pool,
    sel: WasmSelectionItem[],
    signal: AbortSignal | undefined,
    priority: number,
  ): Promise<WasmChunk> {
    const plan = handle.plan(sel);
    const size = this.itemSize;
    const out = filled(plan.extent.reduce((a, b) => a * b, 1), handle.fill());
    const spec = this.#specText(handle);
    const decoding: Promise<void>[] = [];
    let failure: unknown;
    await handle.fetchChunks(
      plan.chunks.map((c) => c.coords),
      signal ?? null,
      (i, r) => {
        const piece = plan.chunks[i];
        if (!piece || failure !== undefined) return;
        if ("error" in r) failure = r.error;
        else if ("encoded" in r) {
          const job = pool.run(this.#key, spec, piece.coords, r.encoded, piece.lo, piece.hi);
          decoding.push(
            job.then((d) => {
              this.#decoded(d);
              paste(out, plan.extent, plan.start, d.bytes, piece.lo, piece.hi, size);
            }),
          );
        }
        // An absent chunk: the output already holds the fill value.
      },
      priority,
    );
    await Promise.all(decoding);
    if (failure !== undefined) throw failure;
    return { bytes: out, shape: plan.shape, stride: cStrides(plan.shape) };
  }

  /**
   * Another scale of this Neuroglancer precomputed volume (index or key), built from the
   * metadata already read: no request. Caches and counters are shared with this array.
   */
  openScale(scale: number | string): ShardedArray {
    const handle = this.#live();
    try {
      const other = handle.withScale(scale);
      return new ShardedArray(other, other.meta(), this.#options);
    } catch (e) {
      throw toError(e);
    }
  }

  /** Requests, bytes and index-cache counters of this array since it was opened. */
  stats(): ArrayStats {
    const s = this.#live().stats();
    return {
      ...s,
      workerJobs: this.#workerJobs,
      decodeMs: s.decodeMs + this.#workerMs,
      chunkCacheHits: this.#chunkCache?.hits ?? 0,
    };
  }

  #workerJobs = 0;
  #workerMs = 0;

  /** Count a chunk the pool decoded. */
  #decoded(d: Decoded): void {
    this.#workerMs += d.ms ?? 0;
    this.#workerJobs++;
  }
  readonly #chunkCache: ChunkCache | null;

  /** Release the wasm-side resources now (otherwise they go with garbage collection). */
  close(): void {
    const h = this.#handle;
    this.#handle = null;
    h?.free();
    pool?.forget(this.#key);
  }
}

/** An opened Zarr v3 group. */
export class Group {
  /** URL of the group's directory (no trailing slash). */
  readonly url: string;
  /** The storage format; children are opened as the same format without detection. */
  readonly format: Format;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** The URL the group was opened from and its path under it (a store root for the draft layout). */
  readonly #root: string;
  readonly #path: string;
  readonly #options: OpenOptions;

  /** @internal Use {@link open} or {@link Group.open}. */
  constructor(meta: WasmGroupMeta, options: OpenOptions) {
    this.url = meta.url;
    this.format = meta.format as Format;
    this.attributes = meta.attributes ?? {};
    this.#root = meta.root;
    this.#path = meta.path;
    const { path: _path, ...rest } = options;
    void _path;
    this.#options = rest;
  }

  /** Open a child array (path relative to this group); options default to the group's. */
  openArray(childPath: string, options: OpenOptions = {}): Promise<ShardedArray> {
    return openArray(this.#root, this.#child(childPath, options));
  }

  /** Open a child node (path relative to this group); options default to the group's. */
  open(childPath: string, options: OpenOptions = {}): Promise<ShardedArray | Group> {
    return open(this.#root, this.#child(childPath, options));
  }

  #child(childPath: string, options: OpenOptions): OpenOptions {
    const path = joinPath(this.#path, joinPath(childPath, options.path));
    return { format: this.format, ...this.#options, ...options, path };
  }
}

function joinPath(a: string, b?: string): string {
  const x = a.replace(/^\/+|\/+$/g, "");
  const y = (b ?? "").replace(/^\/+|\/+$/g, "");
  return x === "" ? y : y === "" ? x : `${x}/${y}`;
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/** Open the node (array or group) at `url` (+ `options.path`). */
export async function open(url: string, options: OpenOptions = {}): Promise<ShardedArray | Group> {
  if (typeof url !== "string" && !((url as unknown) instanceof URL)) {
    throw new ShardfetchError("InvalidSelection", "url must be a string");
  }
  checkSignal(options.signal);
  yieldWarmUp();
  const early = earlyMetadataRequest(String(url), options);
  opening++;
  try {
    await initialize();
  } finally {
    opening--;
  }
  checkSignal(options.signal);
  let node: WasmArray | WasmGroup;
  try {
    node = await openNode(String(url), wasmOptions(options, early));
  } catch (e) {
    throw toError(e);
  }
  let meta: ReturnType<WasmArray["meta"]> | ReturnType<WasmGroup["meta"]>;
  try {
    meta = node.meta();
  } catch (e) {
    node.free();
    throw toError(e);
  }
  if (node instanceof WasmArray || "shape" in meta) {
    return new ShardedArray(node as WasmArray, meta as WasmArrayMeta, options);
  }
  // A group needs nothing from the wasm side once its metadata is read.
  node.free();
  return new Group(meta as WasmGroupMeta, options);
}

/** Open the array at `url` (+ `options.path`); a group there rejects with code `NotAnArray`. */
export async function openArray(url: string, options: OpenOptions = {}): Promise<ShardedArray> {
  const node = await open(url, options);
  if (!(node instanceof ShardedArray)) {
    throw new ShardfetchError("NotAnArray", `${node.url} is a group, not an array`, { url: node.url });
  }
  return node;
}
