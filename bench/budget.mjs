#!/usr/bin/env node
// The page's memory budget (issue 46 item 4) where the caches bind: four arrays (one synthetic
// 8192² uint8 sharded array opened four times: shards 4096², inner chunks 512² = 256 KiB) each
// read as a checkerboard of chunks, so that every merged read has gaps and is held (up to each
// array's `cacheBytes`, 64 MiB by default). Each budget runs in a fresh Node process (a wasm
// memory never shrinks); prints what memoryStats() reports and the process's memory.
//
//   node bench/budget.mjs [--budgets 4096,256,64] [--pkg DIR] [--out FILE]   (MiB)
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { commit, machine, option } from "./results.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const args = process.argv.slice(2);
const MiB = 2 ** 20;

if (args[0] === "--child") {
  // In the child: read, then report one JSON line.
  const [, entry, url, budgetMiB] = args;
  const api = await import(entry);
  if (Number(budgetMiB) > 0) await api.initialize({ memoryBudget: Number(budgetMiB) * MiB });
  const { value } = await import(pathToFileURL(path.join(repo, "tests/js/synth-value.mjs")).href);
  let wrong = 0;
  let peakHeld = 0;
  const arrays = [];
  for (let a = 0; a < 4; a++) arrays.push(await api.openArray(url, { workers: false, mergeGap: MiB }));
  for (const [i, arr] of arrays.entries()) {
    const [ny, nx] = arr.shape.map((s, k) => s / arr.chunkShape[k]);
    const coords = [];
    for (let y = 0; y < ny; y++) for (let x = (y + i) % 2; x < nx; x += 2) coords.push([y, x]);
    // Chunks asked in one task are read together (merged, gaps held); a row of shards at a time.
    for (let y0 = 0; y0 < ny; y0 += 8) {
      const row = coords.filter(([y]) => y >= y0 && y < y0 + 8);
      const got = await Promise.all(row.map((c) => arr.getChunk(c)));
      got.forEach((r, k) => {
        const [cy, cx] = row[k].map((c, d) => c * arr.chunkShape[d]);
        if (r.data[0] !== value(cy, cx) || r.data[r.data.length - 1] !== value(cy + 511, cx + 511)) wrong++;
      });
      peakHeld = Math.max(peakHeld, api.memoryStats().held);
    }
  }
  const m = api.memoryStats();
  const held = arrays.map((a) => a.stats().cachedBytes / MiB);
  console.log(JSON.stringify({ budget: m.budget / MiB, held: m.held / MiB, peakHeld: peakHeld / MiB, caches: m.caches, evictions: m.evictions, moduleMemory: m.moduleMemory / MiB, rss: process.memoryUsage().rss / MiB, perArray: held, wrong }));
  process.exit(0);
}

const pkgDir = path.resolve(option("pkg", path.join(repo, "pkg")));
const entry = pathToFileURL(path.join(pkgDir, "index.js")).href;
const budgets = option("budgets", "4096,256,64").split(",").map(Number);
const code = `import { startSynth } from ${JSON.stringify(pathToFileURL(path.join(repo, "tests/js/synth.mjs")).href)};
  const s = await startSynth({ shape: [8192, 8192], shard: [4096, 4096], chunk: [512, 512] }); console.log(s.url);`;
const server = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((ok) => server.stdout.once("data", (d) => ok(String(d).trim())));
const results = { date: new Date().toISOString(), command: ["node", "bench/budget.mjs", ...args].join(" "), commit: commit(), machine: machine(), runs: [] };
console.log("| memoryBudget | held at the end (peak) | per array | evictions | module memory | RSS | wrong |");
console.log("|---:|---:|---|---:|---:|---:|---:|");
for (const b of budgets) {
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child", entry, url, String(b)], { stdio: ["ignore", "pipe", "inherit"] });
    let s = "";
    p.stdout.on("data", (d) => (s += d));
    p.on("exit", (c) => (c === 0 ? resolve(JSON.parse(s.trim().split("\n").pop())) : reject(new Error(`child exit ${c}`))));
  });
  results.runs.push(out);
  const f = (x) => x.toFixed(1);
  console.log(`| ${b} MiB | ${f(out.held)} (${f(out.peakHeld)}) MiB | ${out.perArray.map(f).join(" / ")} | ${out.evictions} | ${f(out.moduleMemory)} MiB | ${f(out.rss)} MiB | ${out.wrong} |`);
}
server.kill();
const file = option("out", path.join(here, "results", `budget-${results.date.slice(0, 10)}.json`));
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, JSON.stringify(results, null, 1));
console.log(`saved ${path.relative(repo, file)}`);
