/**
 * {@link ShardedArray}: an opened array. Reads go to the module (which plans, fetches, decodes
 * and assembles); this class adapts types, batches `getChunk` calls of one task, and hands
 * decoding to the worker pool.
 * @packageDocumentation
 */
import type { WasmArray, WasmArrayMeta, WasmRegion } from "./wasm/shardfetch.js";
import type { ArrayData, ArrayStats, ChunkResult, Container, DataType, Field, Format, OpenOptions, ReadOptions, ScaleInfo, Selection, StringType, TypedArray } from "./types.js";
import { checkSignal, raceAbort, ShardfetchError, toError, type ErrorCode } from "./errors.js";
import { api, initialize, moduleGeneration, unlessTrapped } from "./module.js";
import { wasmOptions } from "./early.js";
import { ctorFor, toResult, type TypedArrayCtor } from "./typed.js";
import { ChunkCache } from "./chunk-cache.js";
import { ChunkBatcher } from "./batch.js";
import { Decoding } from "./decoding.js";
import type { ArrayDocs, Pool } from "./pool.js";
import { compiledDecoders } from "./decoders.js";
import { containerOf, parseAttributes } from "./node-meta.js";

/** An opened array. */
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
   * int64/uint64/datetime64/timedelta64 fill values are `bigint` (NaT: -2⁶³), bool ones
   * `boolean`, complex ones `[re, im]`, raw/structured ones the element's bytes, text ones a
   * `string`, bytes ones a `Uint8Array` (fixed-length strings: as option `strings` says),
   * everything else `number`.
   */
  readonly fillValue: WasmArrayMeta["fillValue"];
  /**
   * datetime64/timedelta64 (NumPy's, Zarr v3 `numpy.datetime64`/`numpy.timedelta64`): the unit
   * each int64 counts, `scaleFactor` times NumPy's `unit` (`"ns"`, `"s"`, `"D"`, …; a datetime
   * counts from 1970-01-01T00:00Z); otherwise `null`.
   */
  readonly timeUnit: { readonly unit: string; readonly scaleFactor: number } | null;
  /**
   * `fixed_length_string` (an HDF5 fixed-length string, a NetCDF `char`): its charset and
   * padding, which decide its text (see {@link OpenOptions.strings}); otherwise `null`.
   */
  readonly stringType: StringType | null;
  /** Bytes per element. */
  readonly itemSize: number;
  /** A `structured` element's fields (little-endian values at their byte offsets); otherwise `null`. */
  readonly fields: readonly Field[] | null;
  /**
   * Neuroglancer precomputed: every scale of the volume (open another with {@link openScale}
   * or the `scale` option), and the index of this one; otherwise `null`.
   */
  readonly scales: readonly ScaleInfo[] | null;
  readonly scaleIndex: number | null;
  /** @internal The attributes' JSON text, as the module handed it over. */
  readonly attributesText: string;
  #attributes: Readonly<Record<string, unknown>> | undefined;
  readonly dimensionNames: readonly (string | null)[] | null;
  /** The archive holding the array (a `.zip`, an `.ozx`) or its Icechunk repository (the snapshot read), or `null`. */
  readonly container: Container | null;

  #handle: WasmArray | null;
  /** The module instance the handle belongs to, and what rebuilds it in a new one. */
  #generation: number;
  readonly #state: string;
  readonly #options: OpenOptions;
  readonly #chunkCache: ChunkCache | null;
  readonly #batch: ChunkBatcher;
  readonly ctor: TypedArrayCtor;
  /** @internal */
  readonly decoding: Decoding;

  /** @internal Use {@link openArray} or {@link open}. */
  constructor(handle: WasmArray, meta: WasmArrayMeta, options: OpenOptions = {}) {
    this.#handle = handle;
    this.#generation = moduleGeneration();
    this.#state = handle.state();
    this.#options = options;
    const maxAge = typeof options.recheck === "number" ? options.recheck : Infinity;
    this.#chunkCache = options.chunkCacheBytes ? new ChunkCache(options.chunkCacheBytes, maxAge) : null;
    this.decoding = new Decoding(options.workers, meta);
    this.url = meta.url;
    this.format = meta.format;
    this.shape = Object.freeze(Array.from(meta.shape));
    this.dtype = meta.dtype;
    this.chunkShape = meta.chunkShape == null ? null : Object.freeze(Array.from(meta.chunkShape));
    this.chunkShapes =
      meta.chunkShapes == null ? null : Object.freeze(meta.chunkShapes.map((a) => Object.freeze(Array.from(a))));
    this.shardShape = meta.shardShape == null ? null : Object.freeze(Array.from(meta.shardShape));
    this.fillValue = meta.fillValue;
    this.timeUnit = meta.timeUnit;
    this.stringType = meta.stringType;
    this.attributesText = meta.attributes ?? "{}";
    this.dimensionNames = meta.dimensionNames == null ? null : Object.freeze(Array.from(meta.dimensionNames));
    this.container = containerOf(meta.container);
    this.itemSize = meta.itemSize;
    this.fields = meta.fields === null ? null : Object.freeze(meta.fields as Field[]);
    this.scales = meta.scales === null ? null : Object.freeze(meta.scales);
    this.scaleIndex = meta.scaleIndex;
    this.ctor = ctorFor(meta.dtype);
    this.#batch = new ChunkBatcher(this);
  }

  /** The array's attributes (parsed on first access: large ones cost nothing until read). */
  get attributes(): Readonly<Record<string, unknown>> {
    return (this.#attributes ??= parseAttributes(this.attributesText));
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /**
   * @internal The module's array; throws once closed. After the module was replaced (it
   * trapped), the array is rebuilt in the new one from its metadata, without a request.
   */
  handle(): WasmArray {
    if (this.#handle === null) throw new ShardfetchError("Closed", `array ${this.url} was closed`);
    if (this.#generation !== moduleGeneration()) {
      const { signal: _s, ...options } = wasmOptions(this.#options);
      void _s;
      this.#handle = api().reopenArray(this.#state, options);
      this.#generation = moduleGeneration();
    }
    return this.#handle;
  }

  #documents: ArrayDocs | undefined;
  /** @internal What the workers rebuild the array from: its documents and decoder modules. */
  documents(): ArrayDocs {
    this.#documents ??= { documents: this.handle().documents(), decoders: compiledDecoders(this.handle().decoders()) };
    return this.#documents;
  }

  /**
   * Read one chunk (the inner chunk of a sharded array) by its grid coordinates.
   *
   * `data` is typed by `dtype`: bool → `Uint8Array` (0/1), int8 → `Int8Array`, uint8 →
   * `Uint8Array`, int16/uint16/int32/uint32/float32/float64 → the matching typed array, int64 →
   * `BigInt64Array`, uint64 → `BigUint64Array`, datetime64/timedelta64 → `BigInt64Array` (counts
   * of {@link timeUnit}; NaT is -2⁶³), float16 → `Float16Array` where
   * `globalThis.Float16Array` exists, otherwise a `Uint16Array` of the raw IEEE half bits.
   * Complex elements get a trailing axis of 2 (re, im), raw and structured ones of `itemSize`.
   * Text, bytes and JSON arrays give one value per element (`string[]`, `Uint8Array[]`, JSON
   * values; see {@link ArrayData}; fixed-length strings as option {@link OpenOptions.strings}
   * says): name the type, `getChunk<string[]>(…)`.
   *
   * For edge chunks `shape` is clipped to the array while `stride` stays the full chunk's, so
   * `data` may hold more elements than `prod(shape)`. Missing chunks read as the fill value.
   * Calls made in the same task are read together.
   */
  async getChunk<T extends ArrayData = TypedArray>(coords: readonly number[], options: ReadOptions = {}): Promise<ChunkResult<T>> {
    const { signal } = options;
    checkSignal(signal);
    if (!Array.isArray(coords)) throw new ShardfetchError("InvalidSelection", "chunk coordinates must be an array");
    await initialize();
    checkSignal(signal);
    const handle = this.handle();
    const cache = this.#chunkCache;
    // (A chunk kept from another version of its object is not served: see ChunkCache.)
    const stamp = cache ? handle.chunkStamp(Array.from(coords)) : 0;
    const cached = cache?.get(coords, stamp);
    if (cached) return cached as ChunkResult<T>;
    const result = this.#batch.add(Array.from(coords), signal, options.priority ?? 0);
    if (cache) void result.then((r) => cache.put(coords, r, stamp, this.handle().chunkStamp(Array.from(coords))), () => undefined);
    return raceAbort(result, signal) as Promise<ChunkResult<T>>;
  }

  /**
   * Read a selection (one item per axis, see {@link Selection}); integer items drop their axis.
   * `data` is typed as for {@link getChunk}; the result is C-ordered by `stride`.
   */
  async get<T extends ArrayData = TypedArray>(selection: Selection, options: ReadOptions = {}): Promise<ChunkResult<T>> {
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
    let region: WasmRegion | undefined;
    try {
      region = this.handle().region(sel);
      const pool = this.decoding.pool();
      const read = this.#readRegion(region, pool, signal, options.priority ?? 0);
      await raceAbort(unlessTrapped(read), signal);
      return toResult(region.finish(), this.ctor) as ChunkResult<T>;
    } catch (e) {
      throw toError(e);
    } finally {
      region?.free();
      this.decoding.readDone();
    }
  }

  /**
   * A TIFF image's tag `tag`, whatever its size: its value as `attributes.tiff.tags` gives the
   * values the bytes already read hold (a number or a list, ASCII as a string, rationals divided
   * out), read by range when the attributes give only where it is (`{ type, count, offset }`:
   * a tile index, a large description) — through whatever holds the file (a zip, a pipeline).
   * `undefined` when the image has no such tag, or the array is not a TIFF image (no request).
   */
  async tiffTag(tag: number, options: { signal?: AbortSignal } = {}): Promise<number | number[] | string | null | undefined> {
    const { signal } = options;
    checkSignal(signal);
    const tags = (this.attributes.tiff as { tags?: Record<string, unknown> } | undefined)?.tags;
    const given = tags?.[String(tag)];
    if (given === undefined) return undefined;
    if (given === null || typeof given !== "object" || Array.isArray(given)) return given as number | number[] | string;
    await initialize();
    try {
      const text = await raceAbort(unlessTrapped(this.handle().readDocument(`tags/${tag}`, signal)), signal);
      return text === undefined ? undefined : (JSON.parse(text) as number | number[] | string | null);
    } catch (e) {
      throw toError(e);
    }
  }

  /**
   * Fetch the region's chunks here; decode them here, or in the workers (which cut each chunk's
   * box). A chunk handed out again (its object changed during the read: every chunk of it is
   * read again) is pasted from its last hand-out only, whichever decode ends last.
   */
  async #readRegion(region: WasmRegion, pool: Pool | undefined, signal: AbortSignal | undefined, priority: number) {
    if (!pool) return region.read(true, signal ?? null, priority, () => undefined);
    const documents = this.documents();
    const decoding: Promise<void>[] = [];
    const latest = new Map<number, number>();
    let failure: unknown;
    await region.read(false, signal ?? null, priority, (i, item) => {
      if ("error" in item) failure ??= item.error;
      else if ("pasted" in item) latest.set(i, (latest.get(i) ?? 0) + 1);
      else if (failure === undefined) {
        const turn = (latest.get(i) ?? 0) + 1;
        latest.set(i, turn);
        const job = pool.run(this.decoding.key, documents, item.coords, item.encoded, item.lo, item.hi);
        decoding.push(
          job.then(
            (d) => {
              this.decoding.decoded(d);
              if (latest.get(i) === turn) region.paste(i, d.bytes);
            },
            (e: unknown) => {
              throw this.failedElsewhere(item.coords, e);
            },
          ),
        );
      }
    });
    await Promise.all(decoding);
    if (failure !== undefined) throw failure;
  }

  /**
   * @internal A chunk a worker failed to decode: the error naming its object, and what is
   * cached of that object dropped when the error shows its bytes inconsistent.
   */
  failedElsewhere(coords: number[], e: unknown): unknown {
    const { code, message, status } = (e ?? {}) as { code?: unknown; message?: unknown; status?: number };
    if (typeof code !== "string" || typeof message !== "string" || code === "Internal") return e;
    try {
      const url = this.handle().failedElsewhere(coords, code);
      return new ShardfetchError(code as ErrorCode, message.includes(url) ? message : `${url}: ${message}`, { url, status });
    } catch {
      return e;
    }
  }

  /**
   * Another scale of this Neuroglancer precomputed volume (index or key), built from the
   * metadata already read: no request. Caches and counters are shared with this array.
   */
  openScale(scale: number | string): ShardedArray {
    try {
      const other = this.handle().withScale(scale);
      return new ShardedArray(other, other.meta(), this.#options);
    } catch (e) {
      throw toError(e);
    }
  }

  /** Requests, bytes, cache and decoding counters of this array since it was opened. */
  stats(): ArrayStats {
    const s = this.handle().stats();
    return {
      ...s,
      workerJobs: this.decoding.jobs,
      decodeMs: s.decodeMs + this.decoding.ms,
      chunkCacheHits: this.#chunkCache?.hits ?? 0,
    };
  }

  /** Release the wasm-side resources now (otherwise they go with garbage collection). */
  close(): void {
    const h = this.#handle;
    this.#handle = null;
    h?.free();
    this.#chunkCache?.clear();
    this.decoding.forget();
  }
}

