/**
 * What the module says of an opened node that an array (`array.ts`) and a group (`group.ts`)
 * read the same way: its attributes and what holds it. A module of its own so that `array.ts`
 * does not import `group.ts`, which names `ShardedArray` (no import circle:
 * `tests/js/ts-imports.test.mjs`).
 * @packageDocumentation
 */
import type { WasmContainer } from "./wasm/shardfetch.js";
import type { Container } from "./types.js";

/**
 * @internal A node's attributes from the JSON text the module hands over (an object's text,
 * unparsed in the module so that large attributes cost nothing until read).
 */
export function parseAttributes(text: string): Readonly<Record<string, unknown>> {
  const v: unknown = JSON.parse(text);
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** @internal What holds a node, as the module describes it, with an `.ozx`'s OME version. */
export function containerOf(c: WasmContainer | null | undefined): Container | null {
  if (!c) return null;
  let omeVersion: string | null = null;
  try {
    const v = (JSON.parse(c.comment) as { ome?: { version?: unknown } } | null)?.ome?.version;
    omeVersion = typeof v === "string" ? v : null;
  } catch {
    // Not JSON: no version.
  }
  return Object.freeze({ kind: c.kind, url: c.url, comment: c.comment, omeVersion, snapshot: c.snapshot ?? null });
}
