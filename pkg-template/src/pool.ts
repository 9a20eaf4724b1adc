/**
 * A pool of decoding Web Workers shared by every array of the page (or worker).
 * @internal
 */

export interface Decoded {
  bytes: Uint8Array;
  shape?: number[];
  stride?: number[];
  /** Time the worker spent decoding. */
  ms?: number;
}

interface Slot {
  worker: Worker;
  /** Jobs sent and not answered. */
  jobs: Set<number>;
  /** Arrays whose spec this worker has. */
  known: Set<number>;
}

interface Waiting {
  resolve: (d: Decoded) => void;
  reject: (e: unknown) => void;
}

/** Where the platform can run module workers (browsers, and workers inside them). */
export function workersAvailable(): boolean {
  const g = globalThis as { Worker?: unknown; process?: { versions?: { node?: string } } };
  return typeof g.Worker === "function" && typeof g.process?.versions?.node !== "string";
}

/** The default pool size: leave a core to the page. */
export function defaultWorkers(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 2;
  return Math.max(1, Math.min(4, n - 1));
}

export class Pool {
  readonly #slots: Slot[] = [];
  readonly #waiting = new Map<number, Waiting>();
  readonly #module: WebAssembly.Module;
  #next = 1;
  /** Set when a worker failed: arrays then decode on their own thread. */
  broken = false;

  constructor(module: WebAssembly.Module) {
    this.#module = module;
  }

  /** Grow to at least `n` workers. */
  grow(n: number): void {
    while (this.#slots.length < n) {
      const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "shardfetch-decoder" });
      const slot: Slot = { worker, jobs: new Set(), known: new Set() };
      worker.onmessage = (ev: MessageEvent) => this.#answer(slot, ev.data);
      worker.onerror = (ev: ErrorEvent) => this.#fail(slot, ev.message || "decoding worker failed");
      worker.postMessage({ module: this.#module });
      this.#slots.push(slot);
    }
  }

  /** Decode chunk `coords` of array `key` (whose spec is `spec`); `[lo, hi)` cuts a box. */
  run(key: number, spec: string, coords: number[], bytes: Uint8Array, lo?: number[], hi?: number[]): Promise<Decoded> {
    const slot = this.#slots.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
    const id = this.#next++;
    slot.jobs.add(id);
    const job: Record<string, unknown> = { id, key, coords, bytes, lo, hi };
    if (!slot.known.has(key)) {
      job.spec = spec;
      slot.known.add(key);
    }
    return new Promise<Decoded>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      slot.worker.postMessage(job, [bytes.buffer]);
    });
  }

  /** Drop array `key`'s decoders. */
  forget(key: number): void {
    for (const s of this.#slots) {
      if (s.known.delete(key)) s.worker.postMessage({ forget: key });
    }
  }

  #answer(slot: Slot, m: { id: number; error?: unknown } & Decoded): void {
    slot.jobs.delete(m.id);
    const w = this.#waiting.get(m.id);
    if (!w) return;
    this.#waiting.delete(m.id);
    if (m.error !== undefined) w.reject(m.error);
    else w.resolve(m);
  }

  #fail(slot: Slot, message: string): void {
    // A worker that cannot load or crashes: its jobs fail, and the pool stops being used
    // (arrays decode on their own thread from then on) rather than respawning in a loop.
    this.broken = true;
    slot.worker.terminate();
    for (const id of slot.jobs) {
      this.#waiting.get(id)?.reject({ code: "Internal", message: `decoding worker: ${message}` });
      this.#waiting.delete(id);
    }
    slot.jobs.clear();
  }
}
