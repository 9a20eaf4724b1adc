// Bundler smoke tests (issue 15): the tiny app of tests/bundlers/common/app.js, importing
// `shardfetch` from the built pkg/ as an installed package, built by Vite, webpack 5 and
// esbuild; each output served and run in headless Chromium, which reads a sharded array with
// the decoding workers active and checks the values against the writer's (zarr-python).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const apps = path.join(root, "tests/bundlers");
const fixtures = path.join(root, "tests/fixtures");
const bin = (name) => path.join(apps, "node_modules/.bin", name);
const run = (cmd, args, cwd) => promisify(execFile)(cmd, args, { cwd, encoding: "utf8", maxBuffer: 1 << 24 });

// The fixtures read: a sharded, gzip-compressed uint16 array written by zarr-python, and a JPEG
// XL precomputed volume written by cloud-volume (its decoder a module the bundle must carry).
const CASE = { path: "zp/shard_gzip_end", expected: "expected/zp_shard_gzip_end.bin" };
const JXL = { path: "cloudvolume/cv_jxl_u8", expected: "expected/cloudvolume/cv_jxl_u8.bin" };

function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h;
}

/** How each bundler builds its app into `<app>/dist`. */
const BUILDS = {
  vite: (dir) => run(bin("vite"), ["build", "--config", "vite.config.js"], dir),
  webpack: async (dir) => {
    await run(bin("webpack"), ["--config", "webpack.config.js"], dir);
    fs.copyFileSync(path.join(dir, "index.html"), path.join(dir, "dist/index.html"));
  },
  // esbuild leaves `new URL("./worker.js", import.meta.url)` alone: the package's worker and
  // wasm/ are copied next to the bundle (README, "Bundlers").
  esbuild: async (dir) => {
    const dist = path.join(dir, "dist");
    fs.rmSync(dist, { recursive: true, force: true });
    await run(bin("esbuild"), ["main.js", "--bundle", "--format=esm", "--outdir=dist", "--log-level=warning"], dir);
    const pkg = path.join(apps, "node_modules/shardfetch");
    for (const f of ["worker.js", "warm.js"]) fs.copyFileSync(path.join(pkg, f), path.join(dist, f));
    fs.cpSync(path.join(pkg, "wasm"), path.join(dist, "wasm"), { recursive: true });
    fs.copyFileSync(path.join(dir, "index.html"), path.join(dist, "index.html"));
  },
};

let browser;
before(async () => {
  assert.ok(fs.existsSync(path.join(root, "pkg/index.js")), "pkg/ is built first (npm run build)");
  assert.ok(fs.existsSync(bin("vite")), "tests/bundlers dependencies are installed (scripts/ensure-tools.sh)");
  // `shardfetch` as an installed package: node_modules/shardfetch → pkg/ (what `npm install
  // ../../pkg` makes).
  const link = path.join(apps, "node_modules/shardfetch");
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(path.relative(path.dirname(link), path.join(root, "pkg")), link, "dir");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
});
after(async () => {
  await browser?.close();
});

for (const [name, build] of Object.entries(BUILDS)) {
  test(`${name}: a bundled app reads a sharded array with the decoding workers active`, async () => {
    const dir = path.join(apps, name);
    await build(dir);
    // App and data on two origins, as in production (the data server sends CORS headers).
    const app = await startServer({ root: { "/app": path.join(dir, "dist") } });
    const data = await startServer({ root: { "/fixtures": fixtures } });
    const page = await browser.newPage();
    const problems = [];
    page.on("pageerror", (e) => problems.push(String(e)));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    try {
      const url = `${data.url}/fixtures/data/${CASE.path}`;
      const jxl = `${data.url}/fixtures/data/${JXL.path}`;
      await page.goto(`${app.url}/app/index.html?url=${encodeURIComponent(url)}&jxl=${encodeURIComponent(jxl)}`);
      await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60000 });
      const r = await page.evaluate(() => window.__result);
      assert.ok(r.ok, `${r.code}: ${r.message} ${problems.join(" | ")}`);
      const expected = fs.readFileSync(path.join(fixtures, CASE.expected));
      assert.equal(r.length, expected.length);
      assert.equal(r.hash, fnv1a(expected), "values differ from the writer's");
      assert.ok(r.workerJobs > 0, `no chunk decoded in a worker (${problems.join(" | ")})`);
      // The JPEG XL volume: the writer's values (a region comes C-ordered).
      const want = fs.readFileSync(path.join(fixtures, JXL.expected));
      assert.equal(r.jxl.length, want.length);
      assert.equal(r.jxl.hash, fnv1a(want), "JPEG XL values differ from the writer's");
      const served = app.log.map((e) => e.path);
      // The module and one decoder module (bundlers may rename them: counted, not named).
      const wasm = [...new Set(served.filter((p) => p.endsWith(".wasm")))];
      assert.equal(wasm.length, 2, `wasm files served: ${wasm.join(", ")}`);
      console.log(`# ${name}: ${r.workerJobs} chunks decoded in workers; app files served: ${[...new Set(served)].join(", ")}`);
    } finally {
      await page.close();
      await app.close();
      await data.close();
    }
  });
}
