// The page: URL parameters, the open form, the side panel, the counters overlay and errors.
//
// Query parameters (all optional; the page keeps them up to date while you pan, so a link
// reopens the same view):
//   url    dataset URL (default: the embedded sample)
//   cx, cy centre on the horizontal / vertical axis, level-0 voxels
//   zoom   screen pixels per level-0 voxel
//   at     positions on the other axes, level-0 voxels: at=z:5,c:1
//   h, v   names of the horizontal / vertical axes
//   lo, hi contrast limits (otherwise automatic from the data)
//   cmap   grey | oklab | fire | labels
//   level  pin a pyramid level (otherwise chosen by zoom)
//   mode   channel: one channel at a time (the default for an image whose file gives its channels
//          colours, an RGB TIFF or OME channel colours, is their colour composite)
//   cacheMB tile cache budget (default 256), inflight: max concurrent chunk requests (default 8)

import * as shardfetch from "shardfetch";
import { openDataset, DatasetError, inputOf, formatCoord } from "./datasets.js";
import { Viewer } from "./viewer.js";
import { COLORMAPS } from "./render.js";

const $ = (id) => document.getElementById(id);
const SAMPLE = new URL("./sample/cells.ome.zarr", location.href).href;
const SAMPLE_PRECOMPUTED = new URL("./sample/cells.precomputed", location.href).href;

const num = (v) => (v === null || v === "" || !Number.isFinite(Number(v)) ? undefined : Number(v));

function paramsToInitial(q) {
  const at = {};
  for (const part of (q.get("at") ?? "").split(",")) {
    const [name, i] = part.split(":");
    if (name && Number.isFinite(Number(i))) at[name] = Number(i);
  }
  return {
    cx: num(q.get("cx")),
    cy: num(q.get("cy")),
    zoom: num(q.get("zoom")),
    at,
    h: q.get("h") ?? undefined,
    v: q.get("v") ?? undefined,
    lo: num(q.get("lo")),
    hi: num(q.get("hi")),
    cmap: q.get("cmap") ?? undefined,
    level: num(q.get("level")),
    mode: q.get("mode") ?? undefined,
  };
}

const q0 = new URLSearchParams(location.search);
const viewer = new Viewer($("canvas"), {
  cacheBytes: (num(q0.get("cacheMB")) ?? 256) * 2 ** 20,
  maxInFlight: num(q0.get("inflight")) ?? 8,
  onStats: () => renderStats(),
  onFrame: () => renderAxes(),
  onTileError: (e) => {
    if (!tileErrorShown) {
      tileErrorShown = true;
      showError(new DatasetError(`A tile failed to load (${e?.code ?? "error"})`, e?.message ?? String(e), { code: e?.code }));
    }
  },
});
let tileErrorShown = false;

/** What tests and the console use: `await viewerApp.opened`, `viewer.whenIdle()`, … */
const app = {
  viewer,
  state: "idle", // "opening" | "ready" | "error"
  error: null,
  opened: Promise.resolve(),
  load,
};
window.viewerApp = app;

// --- opening ------------------------------------------------------------------------------------

let opening = null;

async function load(input, initial = {}) {
  opening?.abort();
  const controller = new AbortController();
  opening = controller;
  app.state = "opening";
  app.error = null;
  tileErrorShown = false;
  hideError();
  $("url").value = input;
  $("status").textContent = "opening…";
  $("status").hidden = false;
  const t0 = performance.now();
  let done;
  app.opened = new Promise((r) => (done = r));
  try {
    const ds = await openDataset(shardfetch, input, { signal: controller.signal });
    if (opening !== controller) {
      ds.close();
      return;
    }
    viewer.setDataset(ds, initial, t0);
    buildPanel(ds);
    app.state = "ready";
    document.title = `${ds.name} · shardfetch viewer`;
  } catch (e) {
    if (opening !== controller) return;
    viewer.close();
    clearPanel();
    app.state = "error";
    app.error = { title: e.title ?? "Error", detail: e.detail ?? e.message, code: e.code ?? "" };
    showError(e);
  } finally {
    if (opening === controller) $("status").hidden = true;
    done?.();
  }
}

function showError(e) {
  $("error-title").textContent = e.title ?? "Error";
  $("error-detail").textContent = e.detail ?? e.message ?? String(e);
  $("error-hint").textContent = e.hint ?? "";
  $("error").dataset.code = e.code ?? "";
  $("error").hidden = false;
}

function hideError() {
  $("error").hidden = true;
}

$("error-close").addEventListener("click", hideError);

$("open-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const input = $("url").value.trim();
  if (!input) return;
  history.pushState(null, "", `?url=${encodeURIComponent(input)}`);
  load(input);
});

window.addEventListener("popstate", () => {
  const q = new URLSearchParams(location.search);
  load(inputOf(q, SAMPLE), paramsToInitial(q));
});

// --- panel ----------------------------------------------------------------------------------------

const fmtShape = (s) => s.join(" × ");
const UNITS = { micrometer: "µm", nanometer: "nm", millimeter: "mm", angstrom: "Å", second: "s", millisecond: "ms" };
const unit = (a) => (a.unit ? ` ${UNITS[a.unit] ?? a.unit}` : "");

function clearPanel() {
  for (const id of ["info", "sliders", "axis-h", "axis-v", "level", "cmap", "channel-list"]) $(id).replaceChildren();
  $("cursor").textContent = "–";
  $("overlay").textContent = "";
  $("channels").hidden = true;
  $("display").hidden = false;
  for (const id of ["axis-x", "axis-y"]) $(id).hidden = true;
  axesKey = "";
}

function option(value, text, selected) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  o.selected = selected;
  return o;
}

function buildPanel(ds) {
  clearPanel();
  const l0 = ds.levels[0];
  const info = [
    ["name", ds.name],
    ["format", ds.format],
    ["dtype", ds.dtype],
    ["axes", ds.axes.map((a) => a.name).join(", ")],
    ["shape", fmtShape(l0.shape)],
    ["chunk", fmtShape(l0.chunkShape)],
    ["shard", l0.shardShape ? fmtShape(l0.shardShape) : l0.hashSharded ? "sharded (by hash)" : "not sharded"],
    ["levels", String(ds.levels.length)],
    ["voxel", l0.scale.map((s, k) => `${+s.toPrecision(4)}${unit(ds.axes[k])}`).join(" × ")],
  ];
  if (ds.channels) info.push(["colour", `${ds.channels.list.map((c) => c.label).join(", ")} (${ds.channels.source})`]);
  const coords = (ds.coords ?? []).filter(Boolean);
  if (coords.length) info.push(["coordinates", coords.map((c) => `${c.name}${c.units ? ` (${c.units})` : ""}`).join(", ")]);
  for (const [k, v] of info) {
    const dt = document.createElement("dt");
    dt.dataset.key = k;
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    $("info").append(dt, dd);
  }
  const axisChoices = ds.axes.map((a, k) => ({ a, k })).filter(({ k }) => l0.shape[k] > 1 || ds.axes.length <= 2);
  for (const id of ["axis-h", "axis-v"]) {
    const sel = $(id);
    const current = id === "axis-h" ? viewer.h : viewer.v;
    for (const { a, k } of axisChoices) sel.append(option(k, a.name, k === current));
  }
  buildSliders(ds);
  $("level").append(option("auto", "auto", viewer.pin === null));
  ds.levels.forEach((l, i) => {
    const px = `${+l.scale[viewer.h].toPrecision(3)}${unit(ds.axes[viewer.h])}`;
    $("level").append(option(i, `${i}: ${fmtShape(l.shape)} (${px})`, viewer.pin === i));
  });
  const integer = /int|bool/.test(ds.dtype);
  for (const [name, cm] of Object.entries(COLORMAPS)) {
    if (name === "labels" && !integer) continue;
    $("cmap").append(option(name, cm.label, viewer.colouring.name === name));
  }
  buildChannels(ds);
  syncContrast(true);
  renderAxes();
}

// channels: a colour composite (each channel its colour and limits) or one at a time
let channelsVersion = -1;
function buildChannels(ds) {
  $("channel-list").replaceChildren();
  $("channels").hidden = !ds.channels;
  channelsVersion = -1;
  if (!ds.channels) return;
  $("channel-mode").value = viewer.compositeOn ? "composite" : "channel";
  viewer.composite.channels.forEach((c, i) => {
    const row = document.createElement("div");
    row.className = "channel";
    row.dataset.index = String(i);
    const on = document.createElement("input");
    Object.assign(on, { type: "checkbox", checked: c.visible, title: "show" });
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = c.colour ? `rgb(${c.colour.join(",")})` : "linear-gradient(45deg, #000, #fff)";
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = c.role === "alpha" ? `${c.label} (alpha)` : c.label;
    const lo = document.createElement("input");
    const hi = document.createElement("input");
    for (const [el, what] of [[lo, "min"], [hi, "max"]]) {
      Object.assign(el, { type: "number", step: "any", title: what });
      el.className = what;
      el.addEventListener("change", () => {
        const a = Number(lo.value);
        const b = Number(hi.value);
        if (Number.isFinite(a) && Number.isFinite(b)) viewer.setChannel(i, { lo: a, hi: b });
      });
    }
    on.addEventListener("change", () => {
      viewer.setChannel(i, { visible: on.checked });
      row.classList.toggle("off", !on.checked);
    });
    row.classList.toggle("off", !c.visible);
    row.append(on, swatch, name, lo, hi);
    $("channel-list").append(row);
  });
  syncChannels();
}

function syncChannels() {
  const ds = viewer.ds;
  if (!ds?.channels) return;
  const composing = viewer.composing();
  $("channel-list").hidden = !composing;
  $("channel-auto").hidden = !composing;
  $("display").hidden = composing;
  if (viewer.composite.version === channelsVersion) return;
  channelsVersion = viewer.composite.version;
  for (const row of $("channel-list").children) {
    const c = viewer.composite.channels[Number(row.dataset.index)];
    for (const [sel, v] of [[".min", c.lo], [".max", c.hi]]) {
      const el = row.querySelector(sel);
      if (document.activeElement !== el) el.value = String(+Number(v).toPrecision(6));
    }
  }
}

$("channel-auto").addEventListener("click", () => viewer.autoContrast());
$("channel-mode").addEventListener("change", () => {
  viewer.setComposite($("channel-mode").value === "composite");
  buildSliders(viewer.ds);
  syncChannels();
  syncContrast(true);
  scheduleUrlUpdate();
});

function buildSliders(ds) {
  $("sliders").replaceChildren();
  const l0 = ds.levels[0];
  ds.axes.forEach((a, k) => {
    if (k === viewer.h || k === viewer.v || l0.shape[k] <= 1) return;
    if (k === viewer.channelAxis && viewer.composing()) return; // all channels are drawn
    const label = document.createElement("label");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = a.name;
    const input = document.createElement("input");
    Object.assign(input, { type: "range", min: 0, max: l0.shape[k] - 1, step: 1, value: viewer.at[k] });
    input.dataset.axis = a.name;
    const out = document.createElement("output");
    out.textContent = sliderText(k, viewer.at[k]);
    if (ds.coords?.[k] || (k === viewer.channelAxis && ds.channels)) out.className = "coord";
    input.addEventListener("input", () => {
      viewer.setAt(k, Number(input.value));
      out.textContent = sliderText(k, viewer.at[k]);
    });
    label.append(name, input, out);
    $("sliders").append(label);
  });
}

/** A slider's position: the index, and its coordinate (or channel name) when the file gives one. */
function sliderText(k, i) {
  const ds = viewer.ds;
  const c = ds.coords?.[k];
  if (c) return `${i} · ${c.label(c.values[i])}`;
  if (k === viewer.channelAxis && ds.channels?.list[i]) return `${i} · ${ds.channels.list[i].label}`;
  return String(i);
}

/** The coordinate of level-0 index `i` on axis `k`, with its units, or null. */
function coordText(k, i) {
  const c = viewer.ds?.coords?.[k];
  if (!c || !(i >= 0 && i < c.values.length)) return null;
  const v = c.label(c.values[i]);
  return c.label === formatCoord && c.units ? `${v} ${c.units}` : v;
}

// --- coordinate axes --------------------------------------------------------------------------------

let axesKey = "";
/** Index steps of 1, 2, 5 × 10^n, the smallest at least `x`. */
function niceStep(x) {
  if (!(x > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= x);
}

/** Ticks of the coordinates of the displayed axes along the top (horizontal) and left edges. */
function renderAxes() {
  const ds = viewer.ds;
  const key = ds && ds.coords ? [viewer.h, viewer.v, viewer.center, viewer.zoom, viewer.W, viewer.H].join("|") : "";
  if (key === axesKey) return;
  axesKey = key;
  const l0 = ds?.levels[0];
  for (const [id, k, ci, size, spacing] of [["axis-x", viewer.h, 0, viewer.W, 80], ["axis-y", viewer.v, 1, viewer.H, 36]]) {
    const el = $(id);
    const c = key ? ds.coords[k] : null;
    el.hidden = !c;
    if (!c) continue;
    const s = l0.scale[k];
    const t = l0.translation[k];
    const px = viewer.zoom * s; // CSS pixels per level-0 voxel
    const world = (screen) => viewer.center[ci] + (screen - size / 2) / viewer.zoom;
    const i0 = Math.max(0, Math.floor((world(0) - t) / s));
    const i1 = Math.min(l0.shape[k] - 1, Math.ceil((world(size) - t) / s));
    const step = niceStep(spacing / px);
    const ticks = [];
    for (let i = Math.ceil(i0 / step) * step; i <= i1 && ticks.length < 200; i += step) {
      const at = (t + (i + 0.5) * s - viewer.center[ci]) * viewer.zoom + size / 2;
      if (at < (ci === 0 ? 70 : 40) || at > size - (ci === 0 ? 120 : 4)) continue; // clear of the corner and the title
      const tick = document.createElement("span");
      tick.className = "tick";
      tick.dataset.index = String(i);
      tick.style[ci === 0 ? "left" : "top"] = `${at - (ci === 0 ? 0 : 18)}px`;
      tick.textContent = c.label(c.values[i]);
      ticks.push(tick);
    }
    const title = document.createElement("span");
    title.className = "axis-title";
    title.textContent = `${c.longName || c.name}${c.units ? ` (${c.units})` : ""}`;
    el.replaceChildren(title, ...ticks);
  }
}

function syncSliders() {
  for (const input of $("sliders").querySelectorAll("input")) {
    const k = viewer.ds.axes.findIndex((a) => a.name === input.dataset.axis);
    if (Number(input.value) !== viewer.at[k]) {
      input.value = viewer.at[k];
      input.nextElementSibling.textContent = sliderText(k, viewer.at[k]);
    }
  }
}

$("axis-h").addEventListener("change", () => {
  let h = Number($("axis-h").value);
  let v = viewer.v;
  if (h === v) v = viewer.h;
  viewer.setDisplayAxes(h, v);
  $("axis-v").value = String(v);
  buildSliders(viewer.ds);
});
$("axis-v").addEventListener("change", () => {
  let v = Number($("axis-v").value);
  let h = viewer.h;
  if (h === v) h = viewer.v;
  viewer.setDisplayAxes(h, v);
  $("axis-h").value = String(h);
  buildSliders(viewer.ds);
});
$("level").addEventListener("change", () => viewer.setLevel($("level").value === "auto" ? null : Number($("level").value)));
$("fit").addEventListener("click", () => viewer.fit());
$("cmap").addEventListener("change", () => {
  viewer.setColours({ name: $("cmap").value });
  syncContrast(true);
});
$("auto").addEventListener("click", () => viewer.autoContrast());

// contrast: range sliders over the data range, number fields for exact values
let contrastVersion = -1;
function contrastDomain() {
  const c = viewer.colouring;
  const small = { bool: [0, 1], uint8: [0, 255], int8: [-128, 127], uint16: [0, 65535], int16: [-32768, 32767] }[c.dtype];
  let [min, max] = small ?? viewer.range ?? [c.lo, c.hi];
  if (!small && viewer.range) {
    const pad = (max - min) * 0.1;
    [min, max] = [min - pad, max + pad];
  }
  return [Math.min(min, c.lo), Math.max(max, c.hi)];
}
function syncContrast(force = false) {
  const c = viewer.colouring;
  if (!c) return;
  $("contrast").hidden = c.name === "labels";
  if (!force && c.version === contrastVersion) return;
  contrastVersion = c.version;
  const [min, max] = contrastDomain();
  const integer = /int|bool/.test(c.dtype);
  const step = integer ? 1 : (max - min) / 1000 || 1e-6;
  for (const [id, value] of [["lo", c.lo], ["hi", c.hi]]) {
    const range = $(`${id}-range`);
    Object.assign(range, { min, max, step });
    range.value = String(value);
    if (document.activeElement !== $(id)) $(id).value = String(+Number(value).toPrecision(6));
  }
}
function contrastInput(source) {
  let lo = Number(source === "range" ? $("lo-range").value : $("lo").value);
  let hi = Number(source === "range" ? $("hi-range").value : $("hi").value);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return;
  viewer.setColours({ lo, hi });
  if (source === "range") {
    $("lo").value = String(+lo.toPrecision(6));
    $("hi").value = String(+hi.toPrecision(6));
  }
  contrastVersion = viewer.colouring.version;
}
for (const id of ["lo-range", "hi-range"]) $(id).addEventListener("input", () => contrastInput("range"));
for (const id of ["lo", "hi"]) $(id).addEventListener("change", () => contrastInput("number"));

// --- keyboard -----------------------------------------------------------------------------------

document.addEventListener("keydown", (e) => {
  if (!viewer.ds || e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const step = 64;
  const firstSlider = $("sliders").querySelector("input");
  const k = firstSlider ? viewer.ds.axes.findIndex((a) => a.name === firstSlider.dataset.axis) : -1;
  const actions = {
    ArrowLeft: () => viewer.panBy(step, 0),
    ArrowRight: () => viewer.panBy(-step, 0),
    ArrowUp: () => viewer.panBy(0, step),
    ArrowDown: () => viewer.panBy(0, -step),
    "+": () => viewer.zoomAt(1.5),
    "=": () => viewer.zoomAt(1.5),
    "-": () => viewer.zoomAt(1 / 1.5),
    f: () => viewer.fit(),
    a: () => viewer.autoContrast(),
    "[": () => k >= 0 && viewer.setAt(k, viewer.at[k] - 1),
    "]": () => k >= 0 && viewer.setAt(k, viewer.at[k] + 1),
    PageUp: () => k >= 0 && viewer.setAt(k, viewer.at[k] - 1),
    PageDown: () => k >= 0 && viewer.setAt(k, viewer.at[k] + 1),
  };
  const f = actions[e.key];
  if (f) {
    e.preventDefault();
    f();
  }
});

// --- overlay, cursor, URL ---------------------------------------------------------------------

const MB = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(2)} MB` : `${(b / 1e3).toFixed(1)} kB`);
const ms = (x) => (x === null || x === undefined ? "–" : `${x.toFixed(x < 10 ? 1 : 0)} ms`);

/** What the library holds against the page's budget (shardfetch's memoryStats). */
function memoryLine() {
  const m = shardfetch.memoryStats();
  const w = m.workers.map((x) => MB(x.memory)).join(", ");
  return `memory ${MB(m.held)} of ${MB(m.budget)}  (indexes ${MB(m.caches.indexes)}, reads ${MB(m.caches.heldReads)}, chunks ${MB(m.caches.chunks)})  module ${MB(m.moduleMemory)}  workers ${w || "–"}`;
}

function renderStats() {
  if (!viewer.ds) return;
  const c = viewer.counters();
  const ds = viewer.ds;
  const L = ds.levels[c.level ?? 0];
  const t = c.tiles;
  $("overlay").textContent = [
    `level ${c.level}/${ds.levels.length - 1}  ${fmtShape(L.shape)}  chunk ${fmtShape(L.chunkShape)}` +
      (c.previewLevel >= 0 && c.previewLevel !== null ? `  (preview ${c.previewLevel})` : ""),
    `net    ${c.net.requests} requests (${c.net.mergedRequests} merged)  ${MB(c.net.bytes)}  index ${c.net.indexFetches} fetched / ${c.net.indexHits} hits`,
    `tiles  ${t.drawn}/${t.visible} drawn  ${t.inFlight} in flight  ${t.queued} queued  ${t.aborted} aborted  ${t.errors} errors`,
    `cache  ${t.cachedChunks} chunks + ${t.cachedPlanes} tiles  ${MB(t.cacheBytes)}  ${t.evicted} evicted`,
    `time   first tile ${ms(c.time.firstTileMs)}  screen ${ms(c.time.firstScreenMs)}  load ${ms(c.time.loadMsAvg)}/chunk` +
      `  decode ${ms(c.net.chunks ? c.net.decodeMs / c.net.chunks : null)}/chunk (${c.net.workerJobs} in workers)` +
      `  colour ${ms(c.time.colourMsAvg)}/tile  longest task ${ms(c.time.longestTaskMs)}`,
    memoryLine(),
  ].join("\n");
  syncContrast();
  syncSliders();
  syncChannels();
  renderCursor();
  scheduleUrlUpdate();
}

function renderCursor() {
  const p = viewer.pointer && viewer.probe(viewer.pointer[0], viewer.pointer[1]);
  if (!p) {
    $("cursor").textContent = "–";
    return;
  }
  const ds = viewer.ds;
  const pos = ds.axes
    .map((a, k) => {
      if (k === viewer.channelAxis && viewer.composing()) return null;
      const c = coordText(k, p.position[k]);
      return c === null ? `${a.name} ${p.position[k]}` : `${a.name} ${p.position[k]} = ${c}`;
    })
    .filter(Boolean)
    .join("  ");
  const one = (v) => `${typeof v === "number" && !Number.isInteger(v) ? v.toPrecision(6) : v}`;
  const value =
    p.value === undefined
      ? "(not loaded)"
      : Array.isArray(p.value)
        ? p.value.map((v, i) => `${ds.channels.list[i]?.label ?? i} ${one(v)}`).join("  ")
        : one(p.value);
  $("cursor").textContent = `${pos}\nvalue ${value}${p.level ? `  (level ${p.level})` : ""}`;
}

let urlTimer = 0;
function scheduleUrlUpdate() {
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    if (!viewer.ds || app.state !== "ready") return;
    const v = viewer.view();
    const q = new URLSearchParams(location.search);
    q.set("url", $("url").value);
    q.set("cx", String(+v.cx.toFixed(1)));
    q.set("cy", String(+v.cy.toFixed(1)));
    q.set("zoom", String(+v.zoom.toPrecision(4)));
    const at = Object.entries(v.at).map(([n, i]) => `${n}:${i}`).join(",");
    if (at) q.set("at", at);
    else q.delete("at");
    if (viewer.manualContrast) {
      q.set("lo", String(viewer.colouring.lo));
      q.set("hi", String(viewer.colouring.hi));
    }
    q.set("cmap", viewer.colouring.name);
    if (viewer.ds.channels && !viewer.compositeOn) q.set("mode", "channel");
    else q.delete("mode");
    if (viewer.pin !== null) q.set("level", String(viewer.pin));
    else q.delete("level");
    const next = `?${q.toString().replace(/%2F/g, "/").replace(/%3A/g, ":").replace(/%2C/g, ",")}`;
    if (next !== location.search) history.replaceState(null, "", next);
  }, 400);
}

// --- start ------------------------------------------------------------------------------------

$("sample-link").href = `?url=${encodeURIComponent(SAMPLE)}`;
$("sample-pc-link").href = `?url=${encodeURIComponent(SAMPLE_PRECOMPUTED)}`;
load(inputOf(q0, SAMPLE), paramsToInitial(q0));
