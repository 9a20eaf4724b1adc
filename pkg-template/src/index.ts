/**
 * shardfetch: read Zarr v3 (sharded or not), Zarr v2, MDIO and Neuroglancer precomputed arrays
 * from static HTTP storage, in browsers, (module) Web Workers and Node >= 20, via WebAssembly.
 * Works without a bundler in a plain `<script type="module">`. The module starts loading when
 * the package is imported.
 *
 * @packageDocumentation
 */
import { initialize } from "./module.js";

export { open, openArray } from "./open.js";
export { ShardedArray } from "./array.js";
export { Group, type GroupChild } from "./group.js";
export { openMultiscale, Multiscale, type MultiscaleAxis, type MultiscaleLevel } from "./multiscale.js";
export { ShardfetchError, type ErrorCode } from "./errors.js";
export { initialize, type InitializeOptions } from "./module.js";
export { memoryStats, type MemoryStats } from "./memory.js";
/** @internal Tests only (see module.ts). */
export { trapForTesting as __trapForTesting, wasmMemoryBytesForTesting as __wasmMemoryBytesForTesting } from "./module.js";
export { trapWorkerForTesting as __trapWorkerForTesting } from "./decoding.js";
export { setAutoWarmUp, warmUp, type WarmUpReport } from "./warmup.js";
/** @internal The map adapters' pixel work (`shardfetch/openlayers`, `shardfetch/maplibre`). */
export { composeTile as __composeTile, paintTile as __paintTile, prepareRaster as __prepareRaster } from "./raster.js";
export type {
  ArrayStats,
  ChunkResult,
  Container,
  DataType,
  Field,
  Float16ArrayLike,
  Format,
  OpenOptions,
  ReadOptions,
  Retry,
  ScaleInfo,
  Selection,
  SelectionItem,
  StoreKind,
  StringType,
  TypedArray,
} from "./types.js";

// Start loading the module as soon as the package is imported (first use would wait for it);
// a failure here is retried, and reported, on first use.
initialize().catch(() => undefined);
