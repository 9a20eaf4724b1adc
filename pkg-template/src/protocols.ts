/**
 * What a browser shows of each origin's protocol, told to the module, which sets the origin's
 * requests in flight by it (`src/wasm/origins.rs`): 6 by default in a browser, which queues
 * requests past 6 to an HTTP/1.1 origin itself, unmerged; 16 for an origin seen answering
 * over HTTP/2 or 3. Resource timing shows the protocol for the page's own origin and for one
 * sending `Timing-Allow-Origin`; elsewhere (Node, Deno) nothing holds requests back: 16.
 * @internal
 */
import type { GlueApi } from "./wasm/factory.js";

/** Origin → answered over HTTP/2 or 3. */
const seen = new Map<string, boolean>();
let current: GlueApi | undefined;
let watching = false;

function inBrowser(): boolean {
  const g = globalThis as { document?: unknown; WorkerGlobalScope?: unknown; process?: { versions?: { node?: unknown } } };
  return typeof g.process?.versions?.node !== "string" && (g.document !== undefined || typeof g.WorkerGlobalScope === "function");
}

function note(entries: PerformanceEntryList): void {
  for (const e of entries) {
    const protocol = (e as PerformanceResourceTiming).nextHopProtocol;
    if (!protocol) continue;
    let origin: string;
    try {
      origin = new URL(e.name).origin;
    } catch {
      continue;
    }
    if (seen.has(origin)) continue;
    const multiplexed = /^h[23]/.test(protocol);
    seen.set(origin, multiplexed);
    current?.originSpeaks(origin, multiplexed);
  }
}

/** A (new) instance of the module: the browser's default, and what is known so far. */
export function tellProtocols(glue: GlueApi): void {
  if (!inBrowser()) return;
  current = glue;
  glue.requestsPerOrigin(6);
  for (const [origin, multiplexed] of seen) glue.originSpeaks(origin, multiplexed);
  if (watching || typeof PerformanceObserver !== "function") return;
  watching = true;
  try {
    new PerformanceObserver((list) => note(list.getEntries())).observe({ type: "resource", buffered: true });
  } catch {
    // No resource timing here: every origin keeps the default.
  }
}
