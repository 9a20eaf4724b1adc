/**
 * Decoded chunks kept for `getChunk` (option `chunkCacheBytes`), least recently used out —
 * across every array's cache: together they take what the module's caches leave of the page's
 * memory budget (`initialize({ memoryBudget })`). Results are copies both ways. Each is kept
 * with the stamp of its object's version (the module's `chunkStamp`): served only while that
 * is its object's version, and, under `recheck` after a time, only that long.
 * @internal
 */
import type { ArrayData, ChunkResult } from "./types.js";
import { api, isLoaded, memorySettings, setHeldOutside } from "./module.js";

type Result = ChunkResult<ArrayData>;

function copyResult(r: Result): Result {
  const data = (r.data as Uint8Array).slice() as unknown as ArrayData; // typed arrays and arrays have slice()
  return { data, shape: [...r.shape], stride: [...r.stride] };
}

/** Bytes a result holds (value arrays: an estimate per element). */
function sizeOf(r: Result): number {
  return "byteLength" in r.data ? r.data.byteLength : r.data.length * 64;
}

interface Kept {
  owner: ChunkCache;
  result: Result;
  size: number;
  stamp: number;
  at: number;
}

/** Every cache's entries by `id|coords`, least recently used first. */
const kept = new Map<string, Kept>();
let held = 0;
let nextId = 1;
/** Chunks evicted for the budget. */
let evicted = 0;

/** Chunks evicted so far, page-wide. */
export function chunkEvictions(): number {
  return evicted;
}

/** Bytes of decoded chunks kept, page-wide. */
export function chunkBytes(): number {
  return held;
}

/** Bytes the module's caches hold now. */
function moduleHeld(): number {
  if (!isLoaded()) return 0;
  const [, d, h, o] = api().memoryBudget(undefined, undefined);
  return d + h + o;
}

export class ChunkCache {
  readonly #id = nextId++;
  #bytes = 0;
  hits = 0;
  /** `maxAgeMs`: how long an entry is served (`recheck` in milliseconds), else for good. */
  constructor(readonly capacity: number, readonly maxAgeMs = Infinity) {}

  #drop(k: string, e: Kept): void {
    kept.delete(k);
    e.owner.#bytes -= e.size;
    held -= e.size;
  }

  /** The chunk at `coords` if kept under `stamp` (its object's version now) and not too old. */
  get(coords: readonly number[], stamp: number): Result | undefined {
    const k = `${this.#id}|${coords.join(",")}`;
    const e = kept.get(k);
    if (!e) return undefined;
    this.#drop(k, e);
    if (e.stamp !== stamp || performance.now() - e.at > this.maxAgeMs) {
      setHeldOutside(held);
      return undefined;
    }
    kept.set(k, e);
    e.owner.#bytes += e.size;
    held += e.size;
    this.hits++;
    return copyResult(e.result);
  }

  /** Keep `r`, read under `stamp`, if `now` (its object's stamp now) is still that. */
  put(coords: readonly number[], r: Result, stamp: number, now: number): void {
    const k = `${this.#id}|${coords.join(",")}`;
    const size = sizeOf(r);
    const budget = memorySettings().memoryBudget;
    if (size > this.capacity || size > budget || kept.has(k) || stamp !== now) return;
    // This array's oldest out for its cap; then the page's oldest for the budget.
    for (const [old, e] of kept) {
      if (this.#bytes + size <= this.capacity) break;
      if (e.owner !== this) continue;
      this.#drop(old, e);
    }
    const room = budget - moduleHeld();
    for (const [old, e] of kept) {
      if (held + size <= room) break;
      this.#drop(old, e);
      evicted++;
    }
    kept.set(k, { owner: this, result: copyResult(r), size, stamp, at: performance.now() });
    this.#bytes += size;
    held += size;
    setHeldOutside(held);
  }

  /** Drop this array's chunks (it was closed). */
  clear(): void {
    for (const [k, e] of kept) if (e.owner === this) this.#drop(k, e);
    setHeldOutside(held);
  }
}
