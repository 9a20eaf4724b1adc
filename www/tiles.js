// Tile streaming: a byte-bounded LRU cache and a chunk loader that keeps at most N requests in
// flight, serves them in the caller's priority order and aborts the ones no longer wanted.

/** Least-recently-used map bounded by the bytes its entries declare. */
export class ByteLru {
  /** @param {number} maxBytes @param {(key: string, value: any) => void} [onEvict] */
  constructor(maxBytes, onEvict) {
    this.maxBytes = maxBytes;
    this.onEvict = onEvict;
    this.map = new Map(); // insertion order = recency order
    this.bytes = 0;
    this.evictions = 0;
  }

  get size() {
    return this.map.size;
  }

  has(key) {
    return this.map.has(key);
  }

  /** The value, marked as just used. */
  get(key) {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** The value, without touching its recency. */
  peek(key) {
    return this.map.get(key)?.value;
  }

  set(key, value, bytes) {
    this.delete(key);
    this.map.set(key, { value, bytes });
    this.bytes += bytes;
  }

  /** Change the byte size recorded for an entry (e.g. after it gained a canvas). */
  resize(key, bytes) {
    const e = this.map.get(key);
    if (!e) return;
    this.bytes += bytes - e.bytes;
    e.bytes = bytes;
  }

  delete(key) {
    const e = this.map.get(key);
    if (!e) return false;
    this.map.delete(key);
    this.bytes -= e.bytes;
    return true;
  }

  /** Evict least recently used entries until within budget, sparing keys in `keep`. */
  trim(keep) {
    if (this.bytes <= this.maxBytes) return;
    for (const [key, e] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      if (keep?.has(key)) continue;
      this.map.delete(key);
      this.bytes -= e.bytes;
      this.evictions++;
      this.onEvict?.(key, e.value);
    }
  }

  clear() {
    for (const [key, e] of this.map) this.onEvict?.(key, e.value);
    this.map.clear();
    this.bytes = 0;
  }
}

/**
 * Loads chunks with `array.getChunk(coords, {signal})`.
 *
 * `want(jobs)` replaces the wanted list (jobs in priority order, `{key, array, coords}`): requests
 * in flight that are no longer wanted are aborted, queued ones dropped, and free slots are filled
 * from the front of the list. Finished chunks go into `cache`; `onChange` is called after each.
 */
export class ChunkLoader {
  constructor({ cache, maxInFlight = 8, onChange }) {
    this.cache = cache;
    this.maxInFlight = maxInFlight;
    this.onChange = onChange;
    this.inFlight = new Map(); // key → { controller, t0 }
    this.queue = [];
    this.queued = new Set(); // keys in queue
    this.failed = new Map(); // key → error (not retried until reset)
    this.counters = { started: 0, loaded: 0, aborted: 0, dropped: 0, errors: 0, loadMs: 0, lastError: null };
  }

  get busy() {
    return this.inFlight.size > 0 || this.queue.length > 0;
  }

  want(jobs) {
    const wanted = new Set();
    for (const j of jobs) wanted.add(j.key);
    for (const [key, job] of this.inFlight) {
      if (wanted.has(key)) continue;
      job.controller.abort(new DOMException("tile left the view", "AbortError"));
      this.inFlight.delete(key);
      this.counters.aborted++;
    }
    const before = this.queue.length;
    this.queue = jobs.filter((j) => !this.cache.has(j.key) && !this.inFlight.has(j.key) && !this.failed.has(j.key));
    const kept = this.queue.filter((j) => this.queued.has(j.key)).length;
    this.counters.dropped += Math.max(0, before - kept);
    this.queued = new Set(this.queue.map((j) => j.key));
    this.#pump();
  }

  #pump() {
    while (this.inFlight.size < this.maxInFlight && this.queue.length > 0) {
      const job = this.queue.shift();
      this.queued.delete(job.key);
      if (this.cache.has(job.key) || this.inFlight.has(job.key)) continue;
      this.#start(job);
    }
  }

  #start(job) {
    const controller = new AbortController();
    const entry = { controller, t0: performance.now() };
    this.inFlight.set(job.key, entry);
    this.counters.started++;
    job.array.getChunk(job.coords, { signal: controller.signal }).then(
      (chunk) => {
        if (this.inFlight.get(job.key) !== entry) return; // aborted meanwhile
        this.inFlight.delete(job.key);
        this.counters.loaded++;
        this.counters.loadMs += performance.now() - entry.t0;
        this.cache.set(job.key, chunk, chunk.data.byteLength);
        this.#pump();
        this.onChange?.(job.key, null);
      },
      (err) => {
        if (this.inFlight.get(job.key) !== entry) return; // aborted: counted when aborting
        this.inFlight.delete(job.key);
        if (err?.code === "Aborted") return;
        this.failed.set(job.key, err);
        this.counters.errors++;
        this.counters.lastError = err;
        this.#pump();
        this.onChange?.(job.key, err);
      },
    );
  }

  /** Abort everything and forget failures (a new dataset, or a retry). */
  reset() {
    this.want([]);
    this.failed.clear();
  }
}
