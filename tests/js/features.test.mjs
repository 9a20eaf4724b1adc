// The decoders outside the default package (cargo features lzma, pcodec, jxl: issue 13), read
// through the public API of the package built with them (pkg-full/, which `npm test` builds):
// every fixture that needs one, in Node (inline and in worker_threads) and in headless Chromium
// (a plain module page, decoding workers on), against its writer's values.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../server.mjs";
import { checkFixtures, loadManifests } from "./check-fixtures.mjs";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const fixturesDir = path.join(repo, "tests/fixtures");
const full = path.join(repo, "pkg-full/index.js");
const manifest = await loadManifests(async (rel) => JSON.parse(fs.readFileSync(path.join(fixturesDir, rel), "utf8")));
const loadExpected = async (rel) => new Uint8Array(fs.readFileSync(path.join(fixturesDir, rel)));
const FEATURES = ["lzma", "pcodec", "jxl"];
/** The cases only pkg-full reads. */
const only = { cases: [...manifest.unbuilt, ...manifest.cases.filter((c) => c.features.includes("encoding_jxl"))], groups: [] };

let api;
let data;
let pages;
let browser;

before(async () => {
  assert.ok(fs.existsSync(full), "pkg-full/ missing: SHARDFETCH_FEATURES=lzma,pcodec,jxl SHARDFETCH_OUT=pkg-full bash scripts/build.sh");
  api = await import(pathToFileURL(full).href);
  data = await startServer({ root: { "/fixtures": path.join(fixturesDir, "data"), "/fx": fixturesDir } });
  pages = await startServer({ root: { "/": repo } });
});

after(async () => {
  await browser?.close();
  await data?.close();
  await pages?.close();
});

test("the feature cases are there: lzma, pcodec and jxl fixtures, each by its writer", () => {
  const by = (f) => only.cases.filter((c) => c.features.some((x) => x.includes(f))).length;
  assert.ok(by("lzma") >= 3 && by("pcodec") >= 4 && by("jxl") >= 1, `${only.cases.map((c) => c.name)}`);
});

for (const [label, open] of [["inline", { workers: false }], ["worker_threads", { workers: 2 }]]) {
  test(`pkg-full in Node (${label}): every lzma, pcodec and jxl fixture reads its writer's values`, async () => {
    const r = await checkFixtures(api, `${data.url}/fixtures`, only, loadExpected, { open, features: FEATURES });
    assert.equal(r.count, only.cases.length);
    assert.equal(r.failed, 0, r.failures.join("\n"));
  });
}

test("pkg-full in headless Chromium (decoding workers): every lzma, pcodec and jxl fixture reads its writer's values", async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const page = await browser.newPage();
  const logs = [];
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && logs.push(`console: ${m.text()}`));
  const qs = new URLSearchParams({ data: data.url, pkg: "full", workers: "2" });
  await page.goto(`${pages.url}/tests/js/browser.html?${qs}`);
  const r = await (await page.waitForFunction(() => window.__shardfetchResult, null, { timeout: 240_000, polling: 200 })).jsonValue();
  assert.equal(r.count, only.cases.length, `${r.count} cases ran\n${logs.join("\n")}`);
  assert.equal(r.failed, 0, [...r.failures, ...logs].join("\n"));
  assert.ok(r.workerJobs > 0, "decoded in the workers");
  assert.ok(pages.log.some((e) => e.path === "/pkg-full/wasm/shardfetch_bg.wasm"), "the page loaded pkg-full's module");
  await page.close();
});
