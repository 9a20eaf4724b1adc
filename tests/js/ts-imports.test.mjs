// The TypeScript wrapper's modules (pkg-template/src/*.ts) import each other without a circle:
// a circle makes the order modules initialise in depend on which one is imported first (a
// value read before its module has run is undefined, or a TDZ error), and ties two concerns
// together. Both `import` and `import type` count (and `export … from`): a type-only circle is
// harmless at run time today but becomes a real one as soon as a value crosses it. Reads the
// sources only; needs no build.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.resolve(here, "../../pkg-template/src");

// `import … from "./x.js"`, `import type … from "./x.js"`, `export … from "./x.js"` (at the start
// of a line, over several lines too) and side-effect `import "./x.js"`. Comments are removed
// first so that a commented-out import is no edge.
const FROM = /^\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["'](\.\.?\/[^"']+)["']/gm;
const BARE = /^\s*import\s*["'](\.\.?\/[^"']+)["']/gm;

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** Module name (file name without `.ts`) → the names of the src modules it imports. */
function importGraph() {
  const files = fs.readdirSync(src).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  const names = new Set(files.map((f) => f.slice(0, -3)));
  const graph = new Map();
  for (const f of files) {
    const text = stripComments(fs.readFileSync(path.join(src, f), "utf8"));
    const deps = new Set();
    for (const re of [FROM, BARE]) {
      for (const m of text.matchAll(re)) {
        // "./x.js" (how the sources name each other) → "x"; "./wasm/…" (generated) is no module here.
        const target = path.posix.normalize(m[1]).replace(/\.(js|ts)$/, "");
        if (names.has(target)) deps.add(target);
      }
    }
    graph.set(f.slice(0, -3), [...deps].sort());
  }
  return graph;
}

/**
 * The circles a depth-first search meets, one per edge back onto its stack, each as a path
 * a → … → a: none if and only if the graph has no circle.
 */
function cycles(graph) {
  const found = [];
  const state = new Map(); // undefined: unvisited, 1: on the stack, 2: done
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const d of graph.get(n) ?? []) {
      if (state.get(d) === 1) found.push([...stack.slice(stack.indexOf(d)), d].join(" → "));
      else if (state.get(d) === undefined) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of [...graph.keys()].sort()) if (state.get(n) === undefined) visit(n);
  return found;
}

test("the cycle finder finds a circle (so that the next test can fail)", () => {
  const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]);
  assert.deepEqual(cycles(g), ["a → b → c → a"]);
  assert.deepEqual(cycles(new Map([["a", ["b"]], ["b", []]])), []);
});

test("the import parser reads import, import type, multi-line imports and export … from", () => {
  const text = stripComments(`
    import { a, type B } from "./one.js";
    import type {
      C,
      D,
    } from "./two.js";
    export { e } from "./three.js";
    export * from './four.js';
    import "./five.js";
    // import { gone } from "./six.js";
    const s = "not an import from './seven.js'";
  `);
  const got = [...text.matchAll(FROM), ...text.matchAll(BARE)].map((m) => m[1]).sort();
  assert.deepEqual(got, ["./five.js", "./four.js", "./one.js", "./three.js", "./two.js"]);
});

test("pkg-template/src/*.ts: no import circle (value or type imports)", () => {
  const graph = importGraph();
  assert.ok(graph.size > 10, `read ${graph.size} modules in ${src}: expected more than 10`);
  const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
  assert.ok(edges > 10, `found ${edges} imports between the modules: expected more than 10`);
  const found = cycles(graph);
  assert.deepEqual(found, [], `import circle(s) among pkg-template/src/*.ts:\n  ${found.join("\n  ")}`);
});
