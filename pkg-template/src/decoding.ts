/**
 * Where an array's chunks decode: in the shared pool of Web Workers, or on this thread. The
 * policy, the pool's growth after an array's first read, and the array's worker counters.
 * @internal
 */
import type { WasmArrayMeta } from "./wasm/shardfetch.js";
import { memorySettings, wasmModule } from "./module.js";
import { defaultWorkers, Pool, workersAvailable } from "./pool.js";
import type { Decoded } from "./pool.js";

/** The decoding pool shared by every array (created on first use). */
let pool: Pool | undefined;
let nextKey = 1;

export class Decoding {
  /** Decoding workers to use (0: decode on this thread). */
  readonly #workers: number;
  /** This array's name in the pool. */
  readonly key = nextKey++;
  #growAfterRead = false;
  jobs = 0;
  ms = 0;

  constructor(workers: number | false | undefined, meta: WasmArrayMeta) {
    let n = workers === false ? 0 : workers === undefined ? (workersAvailable() ? defaultWorkers() : 0) : Math.max(0, Math.floor(workers));
    // Plain bytes (no compression) cost more to move to a worker and back than to arrange here.
    if (!meta.costlyDecode) n = 0;
    // So do small chunks by default: handing one over and back costs this thread ~30 µs, about
    // what decoding 8 KiB here costs (measured: 64² uint16 chunks read 1.1-1.5× faster inline,
    // without long tasks; at 128 KiB per chunk, workers and inline are even on 2 cores).
    if (workers === undefined && meta.smallChunks) n = 0;
    this.#workers = n;
  }

  /**
   * The pool, or `undefined` when decoding happens on this thread: workers off, failed, or not
   * ready yet (the first reads do not wait for workers to start).
   */
  pool(): Pool | undefined {
    const module = wasmModule();
    if (this.#workers === 0 || !module) return undefined;
    pool ??= new Pool(module, () => memorySettings().workerMemoryBytes);
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

  /** A read is over: start the workers it did without. */
  readDone(): void {
    if (!this.#growAfterRead) return;
    this.#growAfterRead = false;
    if (pool && !pool.broken) pool.grow(this.#workers);
  }

  /** Count a chunk the pool decoded. */
  decoded(d: Decoded): void {
    this.ms += d.ms ?? 0;
    this.jobs++;
  }

  /** The array is closed: the workers drop its decoder. */
  forget(): void {
    pool?.forget(this.key);
  }
}

/**
 * Tests only: make one ready decoding worker trap as a bug would; resolves to whether it was
 * replaced (false when no worker is ready).
 */
export function trapWorkerForTesting(): Promise<boolean> {
  return pool?.trapOneForTesting() ?? Promise.resolve(false);
}

/** The pool's workers (none before it starts), and how many were replaced for their memory. */
export function workerMemory(): { workers: { memory: number; jobs: number }[]; recycled: number } {
  return { workers: pool?.workers() ?? [], recycled: pool?.recycled ?? 0 };
}
