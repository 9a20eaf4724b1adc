#!/usr/bin/env node
// Markdown tables for BENCHMARKS.md from one or more results files of bench/run.mjs:
//   node bench/report.mjs bench/results/2026-01-01.json [more.json ...]
// Medians are over the samples of every file together; "per run" lists each file's own median,
// which is the run-to-run spread on a shared machine.
import fs from "node:fs";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node bench/report.mjs RESULTS.json [...]");
  process.exit(2);
}
const runs = files.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const f = (x, d = 0) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(d));
const MiB = 2 ** 20;

const keyOf = (s) => `${s.dataset}|${s.workload}|${s.lib}`;
const groups = new Map();
runs.forEach((r, i) => {
  for (const s of r.samples) {
    const k = keyOf(s);
    if (!groups.has(k)) groups.set(k, { dataset: s.dataset, workload: s.workload, lib: s.lib, byRun: runs.map(() => []) });
    groups.get(k).byRun[i].push(s);
  }
});

const summary = new Map();
for (const [k, g] of groups) {
  const all = g.byRun.flat();
  const ok = all.filter((s) => !s.error);
  summary.set(k, {
    ...g,
    n: ok.length,
    failed: all.length - ok.length,
    error: all.find((s) => s.error)?.error,
    ms: median(ok.map((s) => s.ms)),
    perRun: g.byRun.map((xs) => median(xs.filter((s) => !s.error).map((s) => s.ms))),
    outBytes: ok[0]?.outBytes ?? 0,
    requests: median(all.map((s) => s.requests)),
    heads: median(all.map((s) => s.heads)),
    bytes: median(all.map((s) => s.bytes)),
    reread: median(all.map((s) => s.rereadBytes ?? 0)),
    longTaskMs: median(ok.map((s) => s.longTaskMs)),
    importMs: g.workload === "cold" ? median(ok.map((s) => s.importMs?.[g.lib.startsWith("shardfetch") ? "shardfetch" : "zarrita"])) : null,
    correct: ok.every((s) => s.ok),
  });
}

const datasets = [...new Set([...groups.values()].map((g) => g.dataset))];
const workloads = ["full", "tiles", "windows", "cold"];
const libs = ["shardfetch", "shardfetch-noworkers", "zarrita", "zarrita-tuned"];

console.log(`Runs: ${runs.map((r) => `${r.date} (${r.durationS} s, load ${r.machine.loadavg.join("/")})`).join("; ")}\n`);
for (const d of datasets) {
  const info = runs[0].datasets[d];
  console.log(`#### ${d}: ${info.note} — ${f(info.decodedBytes / MiB, 1)} MiB decoded, ${f(info.storedBytes / MiB, 1)} MiB stored, ${info.innerChunks} inner chunks\n`);
  console.log("| workload | library | median ms | per-run medians | MiB/s | requests (HEAD) | MiB sent (re-sent) | long tasks ms | sf ÷ zarrita | sf ÷ zarrita-tuned |");
  console.log("|---|---|---:|---|---:|---:|---:|---:|---:|---:|");
  for (const w of workloads) {
    for (const l of libs) {
      const s = summary.get(`${d}|${w}|${l}`);
      if (!s) continue;
      const vs = (other) => {
        const o = summary.get(`${d}|${w}|${other}`);
        return l.startsWith("shardfetch") && o?.n && s.n ? `${f(o.ms / s.ms, 2)}×` : "";
      };
      if (s.n === 0) {
        console.log(`| ${w} | ${l} | failed ${s.failed}× | ${s.error} | | ${f(s.requests)} | ${f(s.bytes / MiB, 2)} | | | |`);
        continue;
      }
      const ms = s.ms < 100 ? f(s.ms, 1) : f(s.ms);
      const wrong = s.correct ? "" : " **wrong data**";
      const fails = s.failed ? ` (${s.failed} failed)` : "";
      const imp = s.importMs != null ? ` (+${f(s.importMs)} import)` : "";
      console.log(
        `| ${w} | ${l} | ${ms}${imp}${wrong}${fails} | ${s.perRun.map((x) => f(x)).join(" / ")} | ${f(s.outBytes / MiB / (s.ms / 1000), 1)} | ${f(s.requests)}${s.heads ? ` (${f(s.heads)})` : ""} | ${f(s.bytes / MiB, 2)}${s.reread > 0 ? ` (${f(s.reread / MiB, 2)})` : ""} | ${f(s.longTaskMs)} | ${vs("zarrita")} | ${vs("zarrita-tuned")} |`,
      );
    }
  }
  console.log("");
}

const dec = runs.flatMap((r) => r.decoders ?? []);
if (dec.length) {
  console.log("#### Decoding in Chromium, data in memory (MiB/s of decoded output; median pass, per run)\n");
  console.log("| dataset | shardfetch getChunk | zarrita get | shardfetch decode only | zarrita decode only | shardfetch decoder alone | DecompressionStream (one at a time / all at once) | numcodecs.js zstd / blosc alone |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const d of [...new Set(dec.map((x) => x.dataset))]) {
    const xs = dec.filter((x) => x.dataset === d);
    const col = (k) => (xs.some((x) => x[k] != null) ? xs.map((x) => f(x[k])).join(" / ") : "");
    const ds = xs.some((x) => x.decompressionStreamMBps) ? xs.map((x) => `${f(x.decompressionStreamMBps)} / ${f(x.decompressionStreamConcurrentMBps)}`).join("; ") : "";
    console.log(`| ${d} | ${col("shardfetchMBps")} | ${col("zarritaMBps")} | ${col("shardfetchDecodeOnlyMBps")} | ${col("zarritaDecodeOnlyMBps")} | ${col("shardfetchDecoderMBps")} | ${ds} | ${col("numcodecsZstdMBps") || col("numcodecsBloscMBps")} |`);
  }
  console.log("");
}

const profiles = runs.flatMap((r) => r.profiles ?? []);
for (const p of profiles) {
  console.log(`- ${p.dataset} ${p.workload} ${p.lib} (${f(p.ms)} ms): ${p.top.filter((t) => !/^\((idle|program)\)/.test(t.fn)).slice(0, 6).map((t) => `${t.fn.replace(/::h[0-9a-f]{16}/, "")} ${t.ms} ms`).join("; ")}`);
  if (p.threads) console.log(`  - threads busy (traced run, ${f(p.tracedMs)} ms): ${p.threads.map((t) => `${t.thread} ${t.busyMs} ms`).join(", ")}`);
}
