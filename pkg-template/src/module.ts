/**
 * Loading the WebAssembly module: compiled once (streaming where served as `application/wasm`),
 * kept to start workers without compiling again, instantiated on this thread — and
 * instantiated again if it traps (a bug: nothing a caller sends should make it trap). Reads
 * under way then reject with `Internal`; arrays reopen from their metadata on their next use.
 * @internal
 */
import type { GlueApi } from "./wasm/factory.js";
import { errorMessage, ShardfetchError, toError } from "./errors.js";
import { nodeImport } from "./node-import.js";
import { cancelBody } from "./bodies.js";
import { tellProtocols } from "./protocols.js";

let ready: Promise<void> | undefined;
let compiled: WebAssembly.Module | undefined;
let glue: GlueApi | undefined;
/** The instance's linear memory (for tests: what the module itself holds). */
let memory: WebAssembly.Memory | undefined;
let loaded = false;
/** Counts instances: an array made by an earlier one is reopened before use. */
let generation = 0;
const onLoad: (() => void)[] = [];

/**
 * Rejecters of the work under way on the current instance, failed when it traps. A set, not a
 * race with one never-settling promise: such a race leaves a reaction on that promise per call,
 * each holding its answer, for as long as the page lives.
 */
let waiting = new Set<(e: unknown) => void>();

export function isNode(): boolean {
  return typeof process !== "undefined" && typeof process.versions?.node === "string";
}

async function compileWasm(): Promise<WebAssembly.Module> {
  const wasmUrl = new URL("./wasm/shardfetch_bg.wasm", import.meta.url);
  if (isNode() && wasmUrl.protocol === "file:") {
    // Node's fetch cannot read file: URLs.
    const fs = await (nodeImport("node:fs/promises") as Promise<typeof import("node:fs/promises")>);
    return WebAssembly.compile(await fs.readFile(wasmUrl));
  }
  const response = fetch(wasmUrl);
  try {
    return await WebAssembly.compileStreaming(response);
  } catch {
    // Served without `application/wasm`: compile from the bytes (the first answer's body,
    // refused unread, cancelled).
    void response.then(cancelBody, () => undefined);
    return WebAssembly.compile(await (await fetch(wasmUrl)).arrayBuffer());
  }
}

/**
 * The glue, imported when the module is first wanted rather than with this file: its fetch then
 * goes out beside the module's instead of before it (one round trip less before the first read).
 */
let factory: Promise<typeof import("./wasm/factory.js")> | undefined;
const glueFactory = () => (factory ??= import("./wasm/factory.js").catch((e: unknown) => {
  factory = undefined;
  throw e;
}));

async function instantiate(module: WebAssembly.Module): Promise<void> {
  const gen = generation;
  const { createGlue } = await glueFactory();
  const g = createGlue((e) => trapped(gen, e));
  const exports = (await g.default({ module_or_path: module })) as { memory?: WebAssembly.Memory };
  glue = g;
  memory = exports.memory;
  g.memoryBudget(budget.memoryBudget, heldOutside);
  tellProtocols(g);
  loaded = true;
  for (const f of onLoad) f();
}

async function load(): Promise<void> {
  const glueLoaded = glueFactory();
  glueLoaded.catch(() => undefined); // awaited in instantiate; not unhandled if the compile fails first
  compiled ??= await compileWasm();
  await instantiate(compiled);
}

/** The instance of generation `gen` trapped: fail what waits on it, start a new one. */
function trapped(gen: number, e: unknown): void {
  if (gen !== generation) return;
  generation++;
  glue = undefined;
  loaded = false;
  const failed = waiting;
  waiting = new Set();
  const error = new ShardfetchError(
    "Internal",
    `the shardfetch WebAssembly module stopped on a bug (${errorMessage(e)}); it was restarted and open arrays reopen from their metadata — please report this`,
    { cause: e },
  );
  for (const reject of failed) reject(error);
  ready = undefined;
  void initialize().catch(() => undefined);
}

/** Options of {@link initialize}: the page's memory budget. */
export interface InitializeOptions {
  /**
   * Bytes that every array's caches share (shard indexes, other indexes and directories, held
   * merged reads, whole objects, decoded chunks of `chunkCacheBytes`): least recently used out
   * across arrays; each array's `cacheBytes` stays a cap inside it. Default 256 MiB.
   */
  memoryBudget?: number;
  /**
   * A decoding worker whose WebAssembly memory grew past this many bytes is replaced once idle
   * (a wasm memory never shrinks). Default 64 MiB.
   */
  workerMemoryBytes?: number;
}

const MiB = 1 << 20;
const budget = { memoryBudget: 256 * MiB, workerMemoryBytes: 64 * MiB };
/** Bytes the wrapper holds against the budget (decoded chunks). */
let heldOutside = 0;

/** The page's memory settings (see {@link InitializeOptions}). */
export function memorySettings(): Readonly<Required<InitializeOptions>> {
  return budget;
}

/** The wrapper now holds `bytes` against the budget. */
export function setHeldOutside(bytes: number): void {
  heldOutside = bytes;
  glue?.memoryBudget(undefined, bytes);
}

function setBudget(options: InitializeOptions): void {
  for (const k of ["memoryBudget", "workerMemoryBytes"] as const) {
    const v = options[k];
    if (v === undefined) continue;
    if (typeof v !== "number" || !(v >= 0)) throw new ShardfetchError("InvalidSelection", `initialize: ${k} must be a number of bytes ≥ 0, got ${String(v)}`);
    budget[k] = v;
  }
  if (options.memoryBudget !== undefined) glue?.memoryBudget(budget.memoryBudget, heldOutside);
}

/**
 * Load and instantiate the WebAssembly module. Called automatically on first use; call it
 * yourself to start loading early. Safe to call many times; `options` set the page's memory
 * budget (a smaller one evicts at once).
 */
export function initialize(options?: InitializeOptions): Promise<void> {
  if (options) {
    try {
      setBudget(options);
    } catch (e) {
      return Promise.reject(e);
    }
  }
  if (!ready) {
    ready = load().catch((e: unknown) => {
      ready = undefined; // allow a retry (e.g. after a network error)
      throw new ShardfetchError("Internal", `failed to load the shardfetch WebAssembly module: ${errorMessage(e)}`, {
        cause: e,
      });
    });
  }
  return ready;
}

/** The module's exports on this thread (after {@link initialize}). */
export function api(): GlueApi {
  if (glue === undefined) throw new ShardfetchError("Internal", "the shardfetch WebAssembly module is not loaded");
  return glue;
}

/** Which instance is current: objects from an earlier one must be rebuilt. */
export function moduleGeneration(): number {
  return generation;
}

/** `work` (a promise of the current instance), rejected with `Internal` if the instance traps first. */
export function unlessTrapped<T>(work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const on = waiting;
    on.add(reject);
    work.then(
      (v) => {
        on.delete(reject);
        resolve(v);
      },
      (e: unknown) => {
        on.delete(reject);
        reject(e);
      },
    );
  });
}

/** The compiled module, once loaded (for workers: they instantiate it without compiling). */
export function wasmModule(): WebAssembly.Module | undefined {
  return compiled;
}

/** Whether the module is instantiated on this thread. */
export function isLoaded(): boolean {
  return loaded;
}

/** Run `f` each time the module has loaded on this thread. */
export function whenLoaded(f: () => void): void {
  onLoad.push(f);
}

/**
 * Tests only: the bytes of this thread's instance's linear memory (0 before it loads), which
 * Node's `process.memoryUsage().arrayBuffers` does not count.
 */
export function wasmMemoryBytesForTesting(): number {
  return memory?.buffer.byteLength ?? 0;
}

/**
 * Tests only: make the module trap as a bug would (`unreachable`) — at once, or `later` from
 * inside a read-like task — to check that it is replaced and arrays keep working.
 */
export async function trapForTesting(later = false): Promise<void> {
  await initialize();
  const g = api();
  try {
    await (later ? unlessTrapped(g.trapForTest(true)) : g.trapForTest(false));
  } catch (e) {
    throw toError(e);
  }
}

