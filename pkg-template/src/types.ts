/**
 * The public types. Shapes that come from the wasm module are its contract's types
 * (`src/wasm/contract.rs`, emitted into `wasm/shardfetch.d.ts`), re-exported under public names.
 * @packageDocumentation
 */
import type {
  WasmArrayMeta,
  WasmDataType,
  WasmField,
  WasmRetry,
  WasmScale,
  WasmStats,
  WasmStoreKind,
  WasmStoreOptions,
  WasmStringType,
} from "./wasm/shardfetch.js";

/** What holds the nodes: a store kind's name (the README's "Stores" lists them, with their options). */
export type StoreKind = WasmStoreKind;

/** Data types an array can have. */
export type DataType = WasmDataType;

/** Storage formats: Zarr v3, Zarr v2, the pre-release Zarr v3 sharding-transformer layout, Neuroglancer precomputed. */
export type Format = WasmArrayMeta["format"];

/** One scale of a Neuroglancer precomputed volume (axes x, y, z; `resolution` in nanometres per voxel). */
export type ScaleInfo = WasmScale;

/** One field of a `structured` element: name, data type, byte offset in the element. */
export type Field = readonly [name: WasmField[0], dtype: DataType, byteOffset: WasmField[2]];

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

/**
 * A `fixed_length_string`'s charset and padding (HDF5's `cset` and `strpad`; a NetCDF `char` is
 * ASCII, `nullterm`): its text ends at the first NUL (`nullterm`), before the trailing NULs
 * (`nullpad`) or before the trailing spaces (`spacepad`).
 */
export type StringType = WasmStringType;

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
 * What a read's `data` is: a typed array by data type (see {@link ShardedArray.getChunk}), or one
 * value per element for text (`string`, `fixed_length_utf32`, `fixed_length_string`:
 * `string[]`), bytes (`bytes`, `null_terminated_bytes`: `Uint8Array[]`) and JSON (`json`: the
 * JSON values) arrays; option {@link OpenOptions.strings} turns fixed-length strings
 * (`fixed_length_string`, `null_terminated_bytes`) into text or bytes.
 */
export type ArrayData = TypedArray | string[] | Uint8Array[] | unknown[];

/**
 * One item per axis: `null` selects the whole axis, an integer selects one index (the axis is
 * dropped from the result), `[start, stop]` selects the half-open range `start <= i < stop`.
 */
export type SelectionItem = null | number | readonly [number, number];
export type Selection = readonly SelectionItem[];

/** Result of {@link ShardedArray.getChunk} and {@link ShardedArray.get}. */
export interface ChunkResult<T extends ArrayData = TypedArray> {
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

/**
 * Options for {@link open} and {@link openArray}; a store kind's own options (see the README's
 * "Stores") come from the module's contract.
 */
export interface OpenOptions extends WasmStoreOptions {
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
  /**
   * What holds the nodes: the store kind `url` names (see the README's "Stores"), `path` the node
   * inside it; detected when omitted (a pipeline URL's stages, an extension, a document), and
   * the plain object tree's name stops the detection.
   */
  store?: StoreKind;
  /**
   * Reference files: the URL to fetch for a target URL the file names (templates expanded, a
   * relative one already resolved against the reference file, `s3://`/`gs://` not yet mapped to
   * their public HTTPS endpoints, which happens to what this returns). For your own endpoint or
   * signer; `undefined` keeps the URL. Called when the file is read (a Parquet set: each record
   * file), not per request (once per run of keys naming a target: once per file for kerchunk's),
   * synchronously (a `Promise` is not awaited: an error).
   */
  resolveUrl?: (url: string) => string | undefined | null;
  /** Neuroglancer precomputed: which scale, by index or by key (default 0). */
  scale?: number | string;
  /**
   * Fixed-length strings — `fixed_length_string` (HDF5 fixed-length strings, NetCDF `char`:
   * one character per element) and Zarr's `null_terminated_bytes` (NumPy `S`) — as `"text"`
   * (`string[]`) or `"bytes"` (`Uint8Array[]`, as h5py and NumPy give them). Omitted: as the
   * file declares them, `fixed_length_string` as text and `null_terminated_bytes` as bytes.
   * Text is decoded per the {@link ShardedArray.stringType}: UTF-8 with U+FFFD for malformed
   * sequences (as `TextDecoder`), ASCII byte by byte as Latin-1 (a high byte is kept, as
   * U+0080–U+00FF); `null_terminated_bytes` as UTF-8. Either way the padding is removed (up to
   * the first NUL, trailing NULs, trailing spaces). The fill value follows the same choice.
   */
  strings?: "text" | "bytes";
  /** Byte budget of the in-memory cache (shard indexes, small objects). */
  cacheBytes?: number;
  /** Treat HTTP 403 like 404 (missing object → fill value), as S3 answers for missing keys. */
  treat403AsMissing?: boolean;
  /**
   * Chunks of one object wanted together (a `get`, or `getChunk` calls made in the same task)
   * are read with one request when fewer than `mergeGap` bytes lie between them (default
   * 256 KiB) and the request stays within `mergeMax` bytes (default 16 MiB). The same rules
   * merge reads of one object waiting for a `maxInFlight` slot.
   */
  mergeGap?: number;
  mergeMax?: number;
  /**
   * Workers that decode chunks off this thread (each with its own wasm instance; buffers are
   * transferred, never copied): Web Workers in browsers, `worker_threads` in Node. Default:
   * `hardwareConcurrency - 1` (1 to 4) in browsers; in Node none unless a number is given
   * (see BENCHMARKS.md); `false` decodes on this thread.
   */
  workers?: number | false;
  /**
   * Requests in flight per origin (shared by every array of that origin; the last value set
   * applies); more wait, highest `priority` first, neighbours in one object leaving as one
   * request. Default: in a browser 6, and 16 for an origin its resource timing shows answering
   * over HTTP/2 or 3 (the page's own origin, or one that sends `Timing-Allow-Origin`); elsewhere
   * (Node, Deno) 16. A browser keeps at most 6 connections to an HTTP/1.1 origin and queues
   * the rest itself, unmerged: there 6 moves that queue here (README, Network behaviour).
   */
  maxInFlight?: number;
  /**
   * The most bytes one decoded chunk, fill value chunk or region may take (default 512 MiB,
   * at most 1 GiB): a larger read fails with `TooLarge` (naming the size and the limit) before
   * anything is allocated or requested, instead of exhausting the page's memory.
   */
  maxDecodedBytes?: number;
  /**
   * Transient failures — HTTP 408, 429 and 5xx, a reset connection, a body cut short, a request
   * without an answer or body progress for `stallMs` — are retried with exponential backoff and
   * full jitter (delays up to `baseMs`·2ⁿ, at most `maxMs`; `Retry-After` honoured), at most
   * `attempts` tries in all and no retry starting later than `budgetMs` after the first; a read's
   * `signal` ends it at once. Defaults: 5 tries, 200 ms, 5 s, stall 10 s, budget 30 s. `false`:
   * one try (stalls still end requests).
   */
  retry?: Retry | false;
  /** The most bytes a metadata document (`zarr.json`, `.zarray`, `info`, …) may have (default 16 MiB). */
  maxMetadataBytes?: number;
  /**
   * How long what was read (metadata, shard indexes, directories, kept bytes) is trusted before
   * it is checked again (README, "When files change"). Every answer is checked against the
   * version (`ETag`, else `Last-Modified`) of the first answer for its object, at no request of
   * its own; a change is resolved by reading the new version, or is `Changed`. `"open"`
   * (default): nothing is asked again while no answer shows a change. A number: what was last
   * confirmed more than that many milliseconds ago is confirmed again before use (a `HEAD`;
   * the array's metadata: a `GET`), so an appended array or a moved Icechunk branch is seen
   * within that time. `"never"`: the objects are taken as immutable (answers not compared).
   */
  recheck?: "open" | "never" | number;
  /**
   * Ask the server to refuse a read of a changed object: `"if-match"` (`If-Match`, or
   * `If-Unmodified-Since`: a 412) or `"if-range"` (`If-Range`: the new whole object instead of
   * the range, kept for the read that resolves the change). Both cost a CORS preflight per
   * object cross-origin (README, "When files change"). Default `false`: the change is seen in
   * the answer's validators.
   */
  conditional?: "if-match" | "if-range" | false;
  /**
   * Keep up to this many bytes of decoded chunks for `getChunk` (least recently used out);
   * default 0: none (a viewer usually keeps its own tiles). Results are copies: writing to one
   * does not change the cache.
   */
  chunkCacheBytes?: number;
}

/** See {@link OpenOptions.retry}. */
export type Retry = WasmRetry;

/** Options of a single read. */
export interface ReadOptions {
  signal?: AbortSignal;
  /**
   * When an origin's requests in flight are at their limit (`maxInFlight`), waiting requests
   * start highest priority first (default 0): a viewer gives its visible tiles a higher one.
   */
  priority?: number;
}

/** Counters of one array (see {@link ShardedArray.stats}): the module's, and the wrapper's. */
export interface ArrayStats extends WasmStats {
  /** Chunks decoded by the worker pool (the rest were decoded on this thread). */
  workerJobs: number;
  /** getChunk calls answered by the decoded-chunk cache (option `chunkCacheBytes`). */
  chunkCacheHits: number;
}

/**
 * What holds a node when it is not plain objects: the innermost store kind (see the README's
 * "Stores"), the URL of the object it reads, its comment (an archive's; a snapshot's commit
 * message) and the OME version a comment names (`{"ome": {"version": "0.5"}}`, as an `.ozx`'s).
 */
export interface Container {
  kind: StoreKind;
  url: string;
  comment: string;
  omeVersion: string | null;
  /** The version read, as the store kind names it (a snapshot's id: a branch or tag is resolved once, at open), or `null`. */
  snapshot: string | null;
}
