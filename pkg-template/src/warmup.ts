/**
 * The warm-up: compile the module's read path in a short-lived background worker (`warm.ts`)
 * so that the page's first `open` and reads do not compile it on the page's thread.
 * @packageDocumentation
 */
import { errorMessage } from "./errors.js";
import { initialize, wasmModule, whenLoaded } from "./module.js";
import { cores, workersAvailable } from "./pool.js";

/** What {@link warmUp} did. */
export interface WarmUpReport {
  /** Whether a worker ran (not where there are no Web Workers, e.g. Node, or it failed to start). */
  ran: boolean;
  /** Stopped early: an `open` started on a machine with no core to spare (≤ 2). */
  stopped: boolean;
  /** From the start to the answer, ms. */
  ms: number;
  /** Reads that matched the values their writer (zarr-python, tensorstore) read back. */
  checked: number;
  /** What went wrong; the warm-up never rejects. */
  errors: string[];
}

/** `open` calls waiting for the module. */
let opening = 0;
let autoWarmUp = true;

/**
 * Whether the package starts its warm-up worker by itself once the module has loaded (default
 * true). Call with `false` right after importing it where a worker is not wanted (a Content
 * Security Policy without `worker-src`, a bundle that leaves `warm.js` out); `warmUp()` still
 * runs it on demand.
 */
export function setAutoWarmUp(enabled: boolean): void {
  autoWarmUp = enabled;
}

interface Warming {
  promise: Promise<WarmUpReport>;
  done: boolean;
  stop(): void;
}

let warming: Warming | undefined;

/**
 * Compile the read path (Zarr v3/v2 and Neuroglancer precomputed metadata, sharding, gzip,
 * zstd, blosc, JPEG, compressed_segmentation, regions) in a background Web Worker, so that the
 * first `open` and reads do not compile it on this thread (V8 compiles each wasm function at
 * its first call; the compiled code is shared by every thread using the module). Runs by
 * itself once the module is loaded if nothing is being opened by then; calling it again
 * returns the same report. No requests to any data server.
 */
export function warmUp(): Promise<WarmUpReport> {
  warming ??= startWarmUp();
  return warming.promise;
}

// Nothing being opened once the module has loaded: compile the read path meanwhile.
whenLoaded(() => {
  if (autoWarmUp && opening === 0 && workersAvailable()) void warmUp();
});

function startWarmUp(): Warming {
  const t0 = performance.now();
  let worker: Worker | undefined;
  let resolve!: (r: WarmUpReport) => void;
  const report = (ran: boolean, errors: string[], checked = 0, stopped = false): WarmUpReport => ({
    ran,
    stopped,
    ms: performance.now() - t0,
    checked,
    errors,
  });
  const state: Warming = {
    promise: new Promise<WarmUpReport>((r) => (resolve = r)),
    done: false,
    stop() {
      finish(report(worker !== undefined, [], 0, true));
      if (warming === state) warming = undefined; // a later call may run it again
    },
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = (r: WarmUpReport) => {
    if (state.done) return;
    state.done = true;
    clearTimeout(timer);
    worker?.terminate();
    resolve(r);
  };
  void (async () => {
    if (!workersAvailable()) return finish(report(false, []));
    try {
      await initialize();
    } catch (e) {
      return finish(report(false, [errorMessage(e)]));
    }
    if (state.done) return;
    try {
      worker = new Worker(new URL("./warm.js", import.meta.url), { type: "module", name: "shardfetch-warm-up" });
    } catch (e) {
      return finish(report(false, [errorMessage(e)]));
    }
    worker.onmessage = (ev: MessageEvent<{ checked: number; errors: string[] }>) =>
      finish(report(true, ev.data.errors, ev.data.checked));
    worker.onerror = (ev: ErrorEvent) => finish(report(false, [ev.message || "the warm-up worker failed to start"]));
    worker.postMessage({ module: wasmModule() });
    // ~0.1-0.2 s on a slow machine: a worker that never answers is not kept alive.
    timer = setTimeout(() => finish(report(true, ["the warm-up worker did not answer within 20 s"])), 20_000);
  })();
  return state;
}

/**
 * An `open` starts (it waits for the module until `done` is called): with no core to spare, a
 * warm-up under way would only slow it down.
 */
export function opens(): { done(): void } {
  if (warming && !warming.done && cores() <= 2) warming.stop();
  opening++;
  let open = true;
  return {
    done() {
      if (open) opening--;
      open = false;
    },
  };
}
