/**
 * `getChunk` calls made in the same task are read together: neighbours in one object share
 * requests, and each call keeps its own result and abort.
 * @internal
 */
import type { WasmArray, WasmChunk, WasmChunkItem } from "./wasm/shardfetch.js";
import type { ArrayData, ChunkResult } from "./types.js";
import type { Decoding } from "./decoding.js";
import type { ArrayDocs } from "./pool.js";
import { toError } from "./errors.js";
import { unlessTrapped } from "./module.js";
import { toResult, type TypedArrayCtor } from "./typed.js";

/**
 * `f` in the next task, without the ≥ 4 ms browsers give nested `setTimeout(…, 0)` (a caller
 * awaiting one chunk after another lands there each time): `setImmediate` in Node, a message to
 * itself in a page or worker.
 */
const nextTask: (f: () => void) => void = (() => {
  const g = globalThis as { setImmediate?: (f: () => void) => unknown };
  if (typeof g.setImmediate === "function") return (f) => void g.setImmediate!(f);
  if (typeof MessageChannel !== "function") return (f) => void setTimeout(f, 0);
  const ch = new MessageChannel();
  const queue: (() => void)[] = [];
  ch.port1.onmessage = () => queue.shift()?.();
  return (f) => {
    queue.push(f);
    ch.port2.postMessage(0);
  };
})();

interface Pending {
  coords: number[];
  signal: AbortSignal | undefined;
  priority: number;
  resolve: (r: ChunkResult<ArrayData>) => void;
  reject: (e: unknown) => void;
}

/** What a batch needs of its array. */
export interface BatchTarget {
  handle(): WasmArray;
  documents(): ArrayDocs;
  failedElsewhere(coords: number[], e: unknown): unknown;
  readonly ctor: TypedArrayCtor;
  readonly decoding: Decoding;
}

export class ChunkBatcher {
  #pending: Pending[] = [];
  /** Batches whose reads are under way. */
  #reading = 0;

  constructor(readonly target: BatchTarget) {}

  /** Read chunk `coords` with the calls made in this task. */
  add(coords: number[], signal: AbortSignal | undefined, priority: number): Promise<ChunkResult<ArrayData>> {
    return new Promise<ChunkResult<ArrayData>>((resolve, reject) => {
      // While reads are under way the network is busy anyway: wait one task more, so that
      // calls made as their answers land (each in its own task: a tile loader refilling its
      // slots) join the batch too.
      if (this.#pending.length === 0) {
        if (this.#reading > 0) nextTask(() => this.#flush());
        else queueMicrotask(() => this.#flush());
      }
      this.#pending.push({ coords, signal, priority, resolve, reject });
    });
  }

  #flush(): void {
    const batch = this.#pending.filter((p) => !p.signal?.aborted);
    this.#pending = [];
    if (batch.length === 0) return;
    const { target } = this;
    let handle: WasmArray;
    try {
      handle = target.handle();
    } catch (e) {
      for (const p of batch) p.reject(toError(e));
      return;
    }
    this.#reading++;
    // The shared read stops only when every caller in it has given up.
    const ctl = new AbortController();
    if (batch.every((p) => p.signal)) {
      let live = batch.length;
      const onAbort = () => {
        if (--live === 0) ctl.abort();
      };
      for (const p of batch) p.signal?.addEventListener("abort", onAbort, { once: true });
    }
    const pool = target.decoding.pool();
    const documents = pool ? target.documents() : { documents: "", decoders: {} };
    const reported = new Set<number>();
    const onChunk = (i: number, r: WasmChunkItem) => {
      const p = batch[i];
      if (!p) return;
      reported.add(i);
      if ("error" in r) p.reject(toError(r.error));
      else if ("encoded" in r) {
        // Fetched here (requests merged, indexes cached); decoded in a worker.
        pool?.run(target.decoding.key, documents, p.coords, r.encoded).then(
          (d) => {
            target.decoding.decoded(d);
            p.resolve(toResult(d as WasmChunk, target.ctor));
          },
          (e: unknown) => p.reject(toError(target.failedElsewhere(p.coords, e))),
        );
      } else p.resolve(toResult(r, target.ctor));
    };
    // The batch is as urgent as its most urgent caller. An error of the whole read reaches
    // the chunks not reported yet.
    const priority = Math.max(...batch.map((p) => p.priority));
    const list = batch.map((p) => p.coords);
    const failRest = (e: unknown) => batch.forEach((p, i) => reported.has(i) || p.reject(toError(e)));
    let reading: Promise<void>;
    try {
      reading = unlessTrapped(handle.readChunks(list, !pool, ctl.signal, priority, onChunk));
    } catch (e) {
      reading = Promise.reject(e);
    }
    reading
      .then(() => failRest({ code: "Internal", message: "chunk was never read" }), failRest)
      .finally(() => {
        this.#reading--;
        target.decoding.readDone();
      });
  }
}
