/**
 * {@link memoryStats}: what the library holds now, against the page's budget.
 * @internal
 */
import { api, isLoaded, memorySettings, wasmMemoryBytesForTesting as moduleMemoryBytes } from "./module.js";
import { chunkBytes, chunkEvictions } from "./chunk-cache.js";
import { workerMemory } from "./decoding.js";

/** What the library holds (see {@link memoryStats}). */
export interface MemoryStats {
  /** The page's budget (`initialize({ memoryBudget })`). */
  budget: number;
  /** Bytes the caches hold now, together: within the budget. */
  held: number;
  /** …by kind of cache. */
  caches: {
    /** Values derived from objects: shard indexes, TIFF directories, HDF5 B-trees, Icechunk manifests. */
    indexes: number;
    /** Merged reads' bytes kept for the chunks in their gaps. */
    heldReads: number;
    /** Whole objects (a server that ignores ranges) and the objects known missing. */
    objects: number;
    /** Decoded chunks kept for `getChunk` (`chunkCacheBytes`). */
    chunks: number;
  };
  /** Cache entries evicted so far to stay within the budget (module caches and decoded chunks). */
  evictions: number;
  /**
   * The module's memory on this thread: its caches, the reads under way, and what it once held
   * (a WebAssembly memory grows to its high-water mark and never shrinks).
   */
  moduleMemory: number;
  /** Each decoding worker's module memory and the chunks it has under way. */
  workers: { memory: number; jobs: number }[];
  /** The bound past which an idle worker is replaced (`initialize({ workerMemoryBytes })`), and how many were. */
  workerMemoryBytes: number;
  workersRecycled: number;
}

/** What the library holds now, by kind of cache and by worker (a viewer can show it). */
export function memoryStats(): MemoryStats {
  const [budget, indexes, heldReads, objects, evictions] = isLoaded()
    ? api().memoryBudget(undefined, undefined)
    : [memorySettings().memoryBudget, 0, 0, 0, 0];
  const chunks = chunkBytes();
  const w = workerMemory();
  return {
    budget,
    held: indexes + heldReads + objects + chunks,
    caches: { indexes, heldReads, objects, chunks },
    evictions: evictions + chunkEvictions(),
    moduleMemory: moduleMemoryBytes(),
    workers: w.workers,
    workerMemoryBytes: memorySettings().workerMemoryBytes,
    workersRecycled: w.recycled,
  };
}
