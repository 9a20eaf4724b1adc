/**
 * Errors: every failure of this package is a {@link ShardfetchError} with a `code`.
 * @packageDocumentation
 */
import type { CoreErrorCode } from "./wasm/shardfetch.js";

/**
 * Error codes carried by {@link ShardfetchError.code}: the core's (generated from its Rust
 * list) and the wrapper's own — `Closed` (a closed array), `Internal` (a bug, or the module
 * failed to load), `Unknown` (something that was not an error object was thrown).
 */
export type ErrorCode = CoreErrorCode | "Closed" | "Internal" | "Unknown";

/** Every error thrown or rejected by this package. */
export class ShardfetchError extends Error {
  readonly code: ErrorCode;
  readonly url?: string;
  readonly status?: number;

  constructor(code: ErrorCode, message: string, extra: { url?: string; status?: number; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "ShardfetchError";
    this.code = code;
    if (extra.url !== undefined) this.url = extra.url;
    if (extra.status !== undefined) this.status = extra.status;
  }
}

/** Any thrown value as a ShardfetchError (the core's errors carry their code already). */
export function toError(e: unknown): ShardfetchError {
  if (e instanceof ShardfetchError) return e;
  if (e !== null && typeof e === "object") {
    const o = e as { code?: unknown; message?: unknown; url?: unknown; status?: unknown; name?: unknown };
    const message = typeof o.message === "string" ? o.message : String(e);
    const extra = {
      url: typeof o.url === "string" ? o.url : undefined,
      status: typeof o.status === "number" ? o.status : undefined,
      cause: e,
    };
    if (typeof o.code === "string" && o.code !== "") return new ShardfetchError(o.code as ErrorCode, message, extra);
    if (o.name === "AbortError" || o.name === "TimeoutError") return new ShardfetchError("Aborted", message, extra);
    if (e instanceof TypeError && /fetch|network/i.test(message)) return new ShardfetchError("Network", message, extra);
    return new ShardfetchError("Internal", message, extra);
  }
  return new ShardfetchError("Unknown", String(e));
}

export function abortedError(signal: AbortSignal): ShardfetchError {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? `: ${reason.message}` : "";
  return new ShardfetchError("Aborted", `operation aborted${detail}`, { cause: reason });
}

export function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortedError(signal);
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Reject as soon as `signal` aborts, even if the work (e.g. a custom fetch) ignores it. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
