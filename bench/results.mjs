// What the benchmarks share: what every results file records (the build measured, the machine),
// the order libraries run in, the statistics, and how results files are written.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** `--name value` of this process's arguments, or `dflt`. */
export function option(name, dflt) {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
}

/** The commit measured, "+dirty" when tracked files differ from it. */
export function commit() {
  const git = (...a) => execFileSync("git", a, { cwd: repo, encoding: "utf8" }).trim();
  try {
    return git("rev-parse", "--short", "HEAD") + (git("status", "--porcelain", "--untracked-files=no") ? "+dirty" : "");
  } catch {
    return "unknown";
  }
}

/** The machine: processor, cores, memory, load (at the call), Node, the browser's version. */
export function machine(browserVersion) {
  let model = os.cpus()[0]?.model;
  try {
    model = /model name\s*:\s*(.*)/.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? model;
  } catch {
    // not Linux: the os module's name
  }
  return {
    cpu: model,
    cores: os.cpus().length,
    ramGiB: Math.round(os.totalmem() / 2 ** 30),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
    chromium: browserVersion,
    platform: `${os.type()} ${os.release()}`,
  };
}

/** Williams order of n libraries: over the repetitions each runs right after each other equally often. */
export function williams(n) {
  const first = [0];
  for (let k = 1; first.length < n; k++) {
    first.push(k);
    if (first.length < n) first.push(n - k);
  }
  const rows = Array.from({ length: n }, (_, r) => first.map((x) => (x + r) % n));
  return n % 2 ? [...rows, ...rows.map((row) => [...row].reverse())] : rows;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Requests (GET + HEAD), HEADs, CORS preflights and body bytes of data-server log entries. */
export function requestSummary(entries) {
  const req = entries.filter((e) => e.method === "GET" || e.method === "HEAD");
  return {
    requests: req.length,
    heads: entries.filter((e) => e.method === "HEAD").length,
    preflights: entries.filter((e) => e.method === "OPTIONS").length,
    bytes: req.reduce((a, e) => a + e.bytes, 0),
  };
}

/**
 * Writes `result` as JSON with one array element per line (small, and diffs stay readable;
 * `round`: non-integer numbers to 0.1) to `out`, or to `bench/results/<day>[-name][-k].json`
 * (never overwritten); returns the path.
 */
export function saveResults(result, { out, name = "", round = false } = {}) {
  const dir = path.join(repo, "bench", "results");
  if (!out) {
    const stem = new Date().toISOString().slice(0, 10) + (name ? `-${name}` : "");
    out = path.join(dir, `${stem}.json`);
    for (let k = 2; fs.existsSync(out); k++) out = path.join(dir, `${stem}-${k}.json`);
  }
  const rounded = (k, x) => (round && typeof x === "number" && !Number.isInteger(x) ? Math.round(x * 10) / 10 : x);
  const value = (v) => (Array.isArray(v) ? `[\n${v.map((x) => JSON.stringify(x, rounded)).join(",\n")}\n]` : JSON.stringify(v, rounded, 1));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `{\n${Object.entries(result).map(([k, v]) => `${JSON.stringify(k)}: ${value(v)}`).join(",\n")}\n}\n`);
  return out;
}

/**
 * The record of a small Node benchmark (bench/zip-entries.mjs and the like): `rows` as it prints
 * them; `save()` writes them with the command, the commit as the run started and the machine
 * (to `--out FILE`, else bench/results/<date>-<name>.json).
 */
export function startRecord(name) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--out");
  const rec = { date: new Date().toISOString(), command: `node bench/${name}.mjs ${argv.join(" ")}`.trim(), commit: commit(), rows: [] };
  return {
    rows: rec.rows,
    save: (extra = {}) => saveResults({ ...rec, machine: machine(), ...extra }, { name, out: at >= 0 ? path.resolve(argv[at + 1]) : undefined }),
  };
}
