//! The JS↔wasm contract, written once: the TypeScript declarations of every shape that
//! crosses the boundary. The binding (`wasm::contract`) emits them into the generated
//! `shardfetch.d.ts`, which the TypeScript wrapper compiles against; compiled on every target
//! so that native tests check them against the core (`tests/contract.rs` checks the README
//! and the wrapper's option list against them).
pub use crate::core::error::ERROR_CODES_TS;

/// The store kinds of the registry as TypeScript: `WasmStoreKind`, `WasmStoreOptions`.
pub const STORES_TS: &str = {
    const PARTS: &[&str] = crate::core::store::registry::TS_PARTS;
    const N: usize = {
        let (mut n, mut i) = (0, 0);
        while i < PARTS.len() {
            n += PARTS[i].len();
            i += 1;
        }
        n
    };
    const BYTES: [u8; N] = {
        let mut out = [0u8; N];
        let (mut k, mut i) = (0, 0);
        while i < PARTS.len() {
            let b = PARTS[i].as_bytes();
            let mut j = 0;
            while j < b.len() {
                out[k] = b[j];
                k += 1;
                j += 1;
            }
            i += 1;
        }
        out
    };
    match core::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("the store kinds' TypeScript is not UTF-8"),
    }
};

/// The TypeScript declarations of the shapes the binding passes.
pub const CONTRACT: &str = r#"
/** Options of `openNode` (what the wrapper's `OpenOptions` passes on). */
export interface WasmOptions extends WasmStoreOptions {
  headers?: Record<string, string>;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  signal?: AbortSignal;
  path?: string;
  format?: string;
  store?: WasmStoreKind | "http";
  scale?: number | string;
  cacheBytes?: number;
  treat403AsMissing?: boolean;
  mergeGap?: number;
  mergeMax?: number;
  maxInFlight?: number;
  maxDecodedBytes?: number;
  maxMetadataBytes?: number;
  retry?: WasmRetry | false;
  /** How long what was read is trusted before it is checked again: `"open"` (default), milliseconds, or `"never"`. */
  recheck?: "open" | "never" | number;
  /** Whether ranged reads ask the server to refuse a changed object: `"if-match"`, `"if-range"`, or `false` (default). */
  conditional?: "if-match" | "if-range" | false;
  /** Fixed-length strings as text or as bytes; omitted: as the file declares them (an HDF5 or NetCDF string as text, Zarr's `null_terminated_bytes` as bytes). */
  strings?: "text" | "bytes";
  /** The wrapper's runner of the decoders kept outside the module (jpeg, png, jxl, bz2, lzma, pcodec, compresso, parquet, hdf5, webp, lerc, tiff, ccitt, netcdf3). */
  decoders?: WasmDecoders;
  /** A reference file's target URL → the URL to fetch (`undefined`/`null`: as it is); called when the file is read, synchronously. */
  resolveUrl?: (url: string) => string | undefined | null;
}

/**
 * Runs external decoder `name` (a module of its own, loaded by the wrapper) on `input` with its
 * numeric `args`; returns the decoded bytes, or throws `{ code, message }`.
 */
export type WasmDecoders = (name: string, input: Uint8Array, args: Float64Array) => Uint8Array;

/** How transient failures are retried (see the wrapper's `OpenOptions.retry`). */
export interface WasmRetry {
  attempts?: number;
  baseMs?: number;
  maxMs?: number;
  stallMs?: number;
  budgetMs?: number;
}

/** One scale of a Neuroglancer precomputed volume (axes x, y, z). */
export interface WasmScale {
  key: string;
  size: [number, number, number];
  chunkSize: [number, number, number];
  resolution: [number, number, number];
  voxelOffset: [number, number, number];
  encoding: string;
  sharded: boolean;
}

/** One field of a `structured` element: name, data type, byte offset in the element. */
export type WasmField = [name: string, dtype: string, byteOffset: number];

export interface WasmArrayMeta {
  url: string;
  format: "zarr3" | "zarr2" | "zarr3-draft" | "precomputed";
  shape: number[];
  dtype: WasmDataType;
  chunkShape: number[] | null;
  chunkShapes: number[][] | null;
  shardShape: number[] | null;
  /** int64/uint64/datetime64/timedelta64 `bigint`; complex `[re, im]`; raw, structured and bytes `Uint8Array`; text `string`; JSON any value. */
  fillValue: number | bigint | boolean | [number, number] | Uint8Array | string | WasmValue;
  /** datetime64/timedelta64: NumPy's unit (`"ns"`, `"D"`, `"generic"`, …) and its scale factor. */
  timeUnit: WasmTimeUnit | null;
  /** fixed_length_string: its charset and padding (HDF5's `cset` and `strpad`). */
  stringType: WasmStringType | null;
  itemSize: number;
  /** Decoding is real work (decompression, checksums): worth a worker. */
  costlyDecode: boolean;
  /** Read chunks are small (under 32 KiB decoded): handing them to a worker costs more than decoding them here. */
  smallChunks: boolean;
  /** JSON text of an object, not parsed by the module (the wrapper parses it when read). */
  attributes: string;
  dimensionNames: (string | null)[] | null;
  fields: WasmField[] | null;
  scales: WasmScale[] | null;
  scaleIndex: number | null;
  container: WasmContainer | null;
}

export interface WasmTimeUnit {
  unit: string;
  scaleFactor: number;
}

export interface WasmGroupMeta {
  url: string;
  format: "zarr3" | "zarr2" | "zarr3-draft" | "precomputed";
  /** JSON text of an object, not parsed by the module (the wrapper parses it when read). */
  attributes: string;
  /** What opens the group's store again (a store root for the draft layout; a pipeline URL when layers hold it), and its path under it. */
  root: string;
  path: string;
  /** Its children, as its consolidated metadata (or its parent's) lists them; empty without. */
  children: { name: string; kind: "array" | "group" }[];
  /** Whether consolidated metadata describes its members (children open without a request). */
  consolidated: boolean;
  container: WasmContainer | null;
}

/**
 * What holds a node when it is not plain objects: the innermost store kind over it, the URL of
 * the object it reads, a comment (an archive's; a snapshot's commit message), and the version
 * read, as the kind names it (`snapshot`: an Icechunk snapshot's id).
 */
export interface WasmContainer {
  kind: WasmStoreKind;
  url: string;
  comment: string;
  snapshot?: string;
}

/** A fixed-length string's charset and where its text ends: at the first NUL, before the trailing NULs or before the trailing spaces. */
export interface WasmStringType {
  charset: "ascii" | "utf-8";
  padding: "nullterm" | "nullpad" | "spacepad";
}

/** A multiscale image's description (core `metadata/multiscale.rs`): levels finest first. */
export interface WasmMultiscale {
  version: string;
  name: string | null;
  axes: { name: string; type: string | null; unit: string | null }[];
  levels: { path: string; scale: number[]; translation: number[] }[];
  omero: unknown;
  imageLabel: unknown;
}

/**
 * A chunk or region: little-endian values in a fresh buffer (`bytes`), or for text, bytes and
 * JSON arrays one JS value per element (`values`: strings, `Uint8Array`s, JSON values);
 * `shape` and `stride` (in elements) include the trailing axis of complex, raw and structured
 * elements.
 */
export type WasmChunk =
  | { bytes: Uint8Array; shape: number[]; stride: number[] }
  | { values: WasmValue[]; shape: number[]; stride: number[] };

/** One element of a text (`string`), bytes (`Uint8Array`) or JSON array. */
export type WasmValue = string | Uint8Array | unknown;

/** A chunk of a batch: decoded (or its fill, when absent), stored bytes for a worker, or an error. */
export type WasmChunkItem = WasmChunk | { encoded: Uint8Array } | { error: unknown };

/** A piece of a region read for a worker: its stored bytes and the box `[lo, hi)` to cut, or an error. */
/** A chunk's stored bytes and box; or (`pasted`) its box written here, which replaces any earlier hand-out of it (a read resolving a change); or an error. */
export type WasmRegionItem = { encoded: Uint8Array; coords: number[]; lo: number[]; hi: number[] } | { pasted: true } | { error: unknown };

/** Counters of an array's network use and decoding (shared by the scales of one volume). */
export interface WasmStats {
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
  /** The server answered a ranged request with the whole object: each object is then downloaded once per batch of reads and shared. */
  rangeIgnored: boolean;
  /** Requests sent again after a transient failure (a 5xx, 408, 429, a reset or stall, a body cut short). */
  retries: number;
  /** Changes of an object seen while the array was open (each resolved again, or `Changed`). */
  changes: number;
  /** Objects asked again whether they changed (`recheck` after a time). */
  revalidations: number;
  /** Milliseconds spent decoding (on this thread; the wrapper adds its workers' time). */
  decodeMs: number;
  /** Bytes this array's cache holds now (indexes, held reads, whole objects). */
  cachedBytes: number;
  /** Entries its cache evicted, for `cacheBytes` or the page's budget. */
  evictions: number;
}

/** Data types an array can have (the core's `DataType` names). */
export type WasmDataType =
  | "bool" | "int8" | "int16" | "int32" | "int64" | "uint8" | "uint16" | "uint32" | "uint64"
  | "float16" | "float32" | "float64" | "complex64" | "complex128" | "raw_bytes" | "structured"
  | "string" | "bytes" | "json" | "fixed_length_utf32" | "null_terminated_bytes" | "fixed_length_string"
  | "datetime64" | "timedelta64";
"#;

#[cfg(test)]
mod tests {
    use crate::core::metadata::DataType;

    /// Every data type the core names is in the contract's union, and nothing else is.
    #[test]
    fn data_types_are_in_the_contract() {
        let all = [
            DataType::Bool,
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
            DataType::Complex64,
            DataType::Complex128,
            DataType::RawBytes(1),
            DataType::Structured(1),
            DataType::String,
            DataType::Bytes,
            DataType::Json,
            DataType::FixedUtf32(1),
            DataType::FixedBytes(1),
            DataType::FixedString(crate::core::metadata::dtype::StrType::parse(1, "ascii", "nullterm").unwrap()),
            DataType::DateTime64(crate::core::metadata::dtype::TimeUnit::new("ns", 1).unwrap()),
            DataType::TimeDelta64(crate::core::metadata::dtype::TimeUnit::new("s", 10).unwrap()),
        ];
        // A new variant fails to compile here until it is listed above.
        let place = |t: DataType| match t {
            DataType::Bool => 0,
            DataType::Int8 => 1,
            DataType::Int16 => 2,
            DataType::Int32 => 3,
            DataType::Int64 => 4,
            DataType::UInt8 => 5,
            DataType::UInt16 => 6,
            DataType::UInt32 => 7,
            DataType::UInt64 => 8,
            DataType::Float16 => 9,
            DataType::Float32 => 10,
            DataType::Float64 => 11,
            DataType::Complex64 => 12,
            DataType::Complex128 => 13,
            DataType::RawBytes(_) => 14,
            DataType::Structured(_) => 15,
            DataType::String => 16,
            DataType::Bytes => 17,
            DataType::Json => 18,
            DataType::FixedUtf32(_) => 19,
            DataType::FixedBytes(_) => 20,
            DataType::FixedString(..) => 21,
            DataType::DateTime64(_) => 22,
            DataType::TimeDelta64(_) => 23,
        };
        assert!(all.iter().enumerate().all(|(i, &t)| place(t) == i));
        let union = &super::CONTRACT[super::CONTRACT.find("export type WasmDataType =").unwrap()..];
        let union = &union[..union.find(';').unwrap()];
        let listed: alloc::collections::BTreeSet<&str> = union.split('"').skip(1).step_by(2).collect();
        let names: alloc::collections::BTreeSet<&str> = all.iter().map(|t| t.name()).collect();
        assert_eq!(listed, names);
    }
}
