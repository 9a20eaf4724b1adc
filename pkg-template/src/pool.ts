/**
 * A pool of decoding workers shared by every array of the page (or worker, or Node process):
 * Web Workers in browsers, `worker_threads` in Node.
 *
 * Chunks handed over in the same task go to the workers as a few messages of many chunks, and
 * each message's chunks resolve together: fewer messages for many small chunks, and callers
 * that react to one answer by asking for more (a tile loader) ask in the same task, so their
 * requests merge. Until a worker is ready (`ready`), arrays decode on their own thread, so the
 * first tiles never wait for workers to start.
 * @internal
 */
import { nodeImport } from "./node-import.js";

export interface Decoded {
  bytes: Uint8Array;
  shape?: number[];
  stride?: number[];
  /** Time spent decoding. */
  ms?: number;
}

/** What a worker rebuilds an array's decoding from: its documents and its decoder modules. */
export interface ArrayDocs {
  documents: string;
  /** The compiled modules of the decoders outside the module that the array needs. */
  decoders: Record<string, WebAssembly.Module>;
}

/** One chunk to decode: the message contract with worker.ts. */
export interface Item {
  id: number;
  coords: number[];
  bytes: Uint8Array;
  lo?: number[];
  hi?: number[];
}

/** A decoding thread: a Web Worker, or a Node `worker_threads` Worker. */
interface Thread {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  terminate(): unknown;
  /** Node: whether the thread keeps the process alive (only while it has jobs). */
  ref?(): void;
  unref?(): void;
}

interface Slot {
  /** Unset while a Node thread is being created. */
  worker?: Thread;
  ready: boolean;
  /** Items sent and not answered. */
  jobs: Set<number>;
  /** Arrays whose documents this worker has. */
  known: Set<number>;
  /** Bytes of its instance's memory, as last reported. */
  memory: number;
}

/** A worker's message: ready, or the results of one group. */
type Answer = { ready?: boolean; trapped?: boolean; memory?: number; results?: ({ id: number; error?: unknown } & Decoded)[] };

interface Waiting {
  resolve: (d: Decoded) => void;
  reject: (e: unknown) => void;
}

/** Chunks of one message at most: a message's chunks resolve together, so not too many. */
const GROUP = 32;

function onNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: string } } };
  return typeof g.process?.versions?.node === "string";
}

/** Where the platform runs module workers by default (browsers, and workers inside them). */
export function workersAvailable(): boolean {
  return typeof (globalThis as { Worker?: unknown }).Worker === "function" && !onNode();
}

/** Cores the platform reports (2 where it does not say). */
export function cores(): number {
  return (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 2;
}

/** The default pool size: leave a core to the page. */
export function defaultWorkers(): number {
  return Math.max(1, Math.min(4, cores() - 1));
}

export class Pool {
  readonly #slots: Slot[] = [];
  readonly #waiting = new Map<number, Waiting>();
  readonly #module: WebAssembly.Module;
  /** Items handed over in this task, by array. */
  #queued = new Map<number, { docs: ArrayDocs; items: Item[] }>();
  #next = 1;
  /** Set when a worker failed: arrays then decode on their own thread. */
  broken = false;

  /** `bound()`: the memory past which an idle worker is replaced. */
  constructor(module: WebAssembly.Module, readonly bound: () => number = () => Infinity) {
    this.#module = module;
  }

  /** Workers wanted (they are created in a later task: never on a caller's critical path). */
  #want = 0;
  #growing = false;

  /** Grow to at least `n` workers. */
  grow(n: number): void {
    this.#want = Math.max(this.#want, n);
    if (this.broken || this.#growing || this.#slots.length >= this.#want) return;
    this.#growing = true;
    setTimeout(() => {
      this.#growing = false;
      this.#spawn();
    }, 0);
  }

  #spawn(): void {
    while (this.#slots.length < this.#want) {
      const slot: Slot = { ready: false, jobs: new Set(), known: new Set(), memory: 0 };
      this.#slots.push(slot);
      if (onNode()) {
        this.#spawnNode(slot);
        continue;
      }
      // The URL literal stays here so that bundlers see the worker and emit it.
      const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "shardfetch-decoder" });
      worker.onmessage = (ev: MessageEvent) => this.#answer(slot, ev.data);
      worker.onerror = (ev: ErrorEvent) => this.#fail(slot, ev.message || "decoding worker failed");
      this.#start(slot, worker);
    }
  }

  /** Node: a `worker_threads` Worker, which keeps the process alive only while it has jobs. */
  #spawnNode(slot: Slot): void {
    (nodeImport("node:worker_threads") as Promise<typeof import("node:worker_threads")>).then(
      (wt) => {
        const worker = new wt.Worker(new URL("./worker.js", import.meta.url), { name: "shardfetch-decoder" });
        worker.on("message", (data: unknown) => this.#answer(slot, data as Answer));
        worker.on("error", (e: Error) => this.#fail(slot, e.message || "decoding worker failed"));
        worker.unref();
        this.#start(slot, worker as unknown as Thread);
      },
      (e: unknown) => this.#fail(slot, String(e)),
    );
  }

  #start(slot: Slot, worker: Thread): void {
    slot.worker = worker;
    worker.postMessage({ module: this.#module });
  }

  /** Decode chunk `coords` of array `key` (built from `docs`); `[lo, hi)` cuts a box. */
  run(key: number, docs: ArrayDocs, coords: number[], bytes: Uint8Array, lo?: number[], hi?: number[]): Promise<Decoded> {
    const id = this.#next++;
    const item: Item = { id, coords, bytes, lo, hi };
    return new Promise<Decoded>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      if (this.#queued.size === 0) queueMicrotask(() => this.#send());
      let q = this.#queued.get(key);
      if (!q) this.#queued.set(key, (q = { docs, items: [] }));
      q.items.push(item);
    });
  }

  /** Whether a worker can take chunks. */
  get ready(): boolean {
    return this.#slots.some((s) => s.ready);
  }

  /** Drop array `key`'s decoders. */
  forget(key: number): void {
    for (const s of this.#slots) {
      if (s.known.delete(key)) s.worker?.postMessage({ forget: key });
    }
  }

  /** Send what this task handed over: groups of chunks to the least busy ready workers. */
  #send(): void {
    const queued = this.#queued;
    const ready = this.#slots.filter((s) => s.ready);
    // None ready (each replaced since the caller saw one, its successor still starting): the
    // chunks wait for the first to say it is ready.
    if (ready.length === 0) return;
    this.#queued = new Map();
    for (const [key, { docs, items }] of queued) {
      // Spread over the workers, in groups of at most GROUP chunks.
      const groups = Math.max(Math.min(ready.length, items.length), Math.ceil(items.length / GROUP));
      const size = Math.ceil(items.length / groups);
      for (let at = 0; at < items.length; at += size) {
        const group = items.slice(at, at + size);
        const slot = ready.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
        for (const it of group) slot.jobs.add(it.id);
        const message: Record<string, unknown> = { key, items: group };
        if (!slot.known.has(key)) {
          message.documents = docs.documents;
          message.decoders = docs.decoders;
          slot.known.add(key);
        }
        slot.worker?.ref?.();
        slot.worker?.postMessage(message, group.map((it) => it.bytes.buffer as ArrayBuffer));
      }
    }
  }

  #answer(slot: Slot, m: Answer): void {
    if (typeof m.memory === "number") slot.memory = m.memory;
    if (m.ready) {
      slot.ready = true;
      if (this.#queued.size > 0) this.#send();
      return;
    }
    for (const r of m.results ?? []) {
      slot.jobs.delete(r.id);
      const w = this.#waiting.get(r.id);
      if (!w) continue;
      this.#waiting.delete(r.id);
      if (r.error !== undefined) w.reject(r.error);
      else w.resolve(r);
    }
    if (m.trapped) this.#replace(slot);
    else if (slot.jobs.size === 0 && slot.memory > this.bound()) this.#recycle(slot);
    else if (slot.jobs.size === 0) slot.worker?.unref?.();
  }

  /** An idle worker whose memory grew past the bound: a new one takes its place (memory given back). */
  #recycle(slot: Slot): void {
    if (!this.#drop(slot, "replaced")) return;
    this.recycled++;
    this.grow(this.#want);
  }

  /** Workers replaced for their memory. */
  recycled = 0;

  /** Each worker's memory and chunks under way. */
  workers(): { memory: number; jobs: number }[] {
    return this.#slots.map((s) => ({ memory: s.memory, jobs: s.jobs.size }));
  }

  /**
   * A worker whose instance trapped (a bug): what it still had fails with `Internal` and a new
   * worker takes its place, as the page's own instance is replaced (module.ts).
   */
  #replace(slot: Slot): void {
    if (!this.#drop(slot, "replaced after its module stopped on a bug")) return;
    this.replaced++;
    this.grow(this.#want);
  }

  /** `slot` out of the pool, its worker ended, what it still had failed with `Internal`; false when it was out already. */
  #drop(slot: Slot, why: string): boolean {
    const at = this.#slots.indexOf(slot);
    if (at < 0) return false;
    this.#slots.splice(at, 1);
    slot.ready = false;
    slot.worker?.terminate();
    for (const id of slot.jobs) {
      this.#waiting.get(id)?.reject({ code: "Internal", message: `decoding worker: ${why}` });
      this.#waiting.delete(id);
    }
    slot.jobs.clear();
    return true;
  }

  /** Workers replaced after a trap (tests). */
  replaced = 0;

  /** Tests only: make a ready worker's instance trap, as a bug would; resolves once it is replaced. */
  async trapOneForTesting(): Promise<boolean> {
    const slot = this.#slots.find((s) => s.ready);
    if (!slot) return false;
    const before = this.replaced;
    slot.worker?.postMessage({ trapForTest: true });
    for (let i = 0; i < 500 && this.replaced === before; i++) await new Promise((r) => setTimeout(r, 10));
    return this.replaced > before;
  }

  #fail(slot: Slot, message: string): void {
    // A worker that cannot load or crashes: its jobs fail, and the pool stops being used
    // (arrays decode on their own thread from then on) rather than respawning in a loop.
    this.broken = true;
    this.#drop(slot, message);
    // Chunks waiting for a worker to be ready, with none left that will be: they fail too.
    if (this.#slots.length > 0) return;
    for (const { items } of this.#queued.values()) {
      for (const it of items) {
        this.#waiting.get(it.id)?.reject({ code: "Internal", message: `decoding worker: ${message}` });
        this.#waiting.delete(it.id);
      }
    }
    this.#queued.clear();
  }
}
