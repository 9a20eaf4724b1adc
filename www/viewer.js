// The 2D tile view: geometry (world coordinates, zoom, pyramid level), which tiles are wanted
// and in which order, drawing them (coarser levels under sharper ones), and pan/zoom input.
//
// Coordinates: every axis has world coordinates (the dataset's physical units); voxel i of a
// level covers [translation + i·scale, translation + (i+1)·scale). The view keeps the world
// position of the screen centre on the two displayed axes and `zoom` in CSS pixels per world
// unit. The position on every other axis is a level-0 voxel index (the sliders).
// The public view API (URL parameters, setView) speaks level-0 voxel units: cx, cy, zoom.

import { ByteLru, ChunkLoader } from "./tiles.js";
import { Colouring, CompositeColouring, autoLimits, extractPlane } from "./render.js";

const BACKGROUND = "#101114";
const FRAME_BUDGET_MS = 10; // main-thread time per frame for cutting and colouring tiles
const MAX_TILES = 4096; // a pinned or fallback level needing more tiles than this is not drawn

export class Viewer {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{cacheBytes?: number, maxInFlight?: number, onStats?: () => void, onFrame?: () => void, onTileError?: (e: any, key: string) => void}} options
   */
  constructor(canvas, { cacheBytes = 256 * 2 ** 20, maxInFlight = 8, onStats, onFrame, onTileError } = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d", { alpha: false });
    this.cacheBytes = cacheBytes;
    this.maxInFlight = maxInFlight;
    this.onStats = onStats;
    this.onFrame = onFrame;
    this.onTileError = onTileError;
    this.ds = null;
    this.W = 1;
    this.H = 1;
    this.dpr = 1;
    this.raf = 0;
    this.idleWaiters = [];
    this.longestTaskMs = 0;
    this.longTasks = 0;
    this.lastStats = 0;
    this.#observeLongTasks();
    this.#resize();
    new ResizeObserver(() => {
      this.#resize();
      this.redraw();
    }).observe(canvas);
    this.#bindInput();
  }

  // --- dataset and view state -----------------------------------------------------------------

  /**
   * Show a dataset. `initial`: { cx, cy, zoom, at: {axisName: index}, h, v (axis names), lo, hi,
   * cmap, level, mode: "composite" | "channel" } (all optional), `t0`: performance.now() when
   * opening began. A dataset whose file gives its channels colours (`ds.channels`) is drawn as
   * their colour composite unless `mode` is "channel".
   */
  setDataset(ds, initial = {}, t0 = performance.now()) {
    this.close();
    if (ds.levels[0].shape.length < 2) throw new Error("only arrays with at least 2 dimensions can be shown");
    this.ds = ds;
    this.t0 = t0;
    this.cache = new ByteLru(this.cacheBytes, (key, value) => this.#evicted(key, value));
    this.planesOf = new Map(); // chunk key → Set of plane keys cut from it (views into it)
    this.loader = new ChunkLoader({
      cache: this.cache,
      maxInFlight: this.maxInFlight,
      onChange: (key, err) => {
        if (err) this.onTileError?.(err, key);
        this.redraw();
      },
    });
    this.tilesDrawn = 0;
    this.timing = { openMs: performance.now() - t0, firstTileMs: null, firstScreenMs: null, colourMs: 0, coloured: 0 };
    this.colouring = new Colouring(ds.dtype);
    if (ds.labels && /int/.test(ds.dtype)) this.colouring.set({ name: "labels" });
    const byName = (n) => ds.axes.findIndex((a) => a.name === n);
    this.h = byName(initial.h) >= 0 ? byName(initial.h) : ds.display.h;
    this.v = byName(initial.v) >= 0 ? byName(initial.v) : ds.display.v;
    if (this.h === this.v) this.v = this.h === ds.display.v ? ds.display.h : ds.display.v;
    const l0 = ds.levels[0];
    this.at = ds.axes.map((a, k) => {
      const want = initial.at?.[a.name];
      if (Number.isFinite(want)) return Math.min(Math.max(0, Math.round(want)), l0.shape[k] - 1);
      return a.type === "space" ? Math.floor(l0.shape[k] / 2) : 0;
    });
    this.pin = Number.isInteger(initial.level) && initial.level >= 0 && initial.level < ds.levels.length ? initial.level : null;
    const manual = Number.isFinite(initial.lo) && Number.isFinite(initial.hi);
    if (initial.cmap) this.colouring.set({ name: initial.cmap });
    if (manual) this.colouring.set({ lo: initial.lo, hi: initial.hi });
    else if (ds.window) this.colouring.set(ds.window);
    this.autoPending = !manual && !ds.window && this.colouring.name !== "labels";
    this.manualContrast = manual;
    // channels drawn together: each its colour and limits (the file's window, else automatic)
    this.channelAxis = ds.channels ? ds.channels.axis : -1;
    this.compositeOn = Boolean(ds.channels) && initial.mode !== "channel";
    this.composite = ds.channels
      ? new CompositeColouring(
          ds.channels.list.map((c) => ({ label: c.label, colour: c.colour, role: c.role, lo: c.window?.lo ?? 0, hi: c.window?.hi ?? 1, visible: c.visible })),
          { ycbcr: ds.channels.ycbcr, premultiplied: ds.channels.premultiplied },
        )
      : null;
    if (this.composite && manual) this.composite.setAll({ lo: initial.lo, hi: initial.hi });
    this.compositeAutoPending = Boolean(this.composite) && !manual && ds.channels.list.some((c) => !c.window);
    this.range = null; // data range seen by auto contrast
    this.fit();
    if (Number.isFinite(initial.zoom) && initial.zoom > 0) this.zoom = initial.zoom / l0.scale[this.h];
    if (Number.isFinite(initial.cx)) this.center[0] = l0.translation[this.h] + initial.cx * l0.scale[this.h];
    if (Number.isFinite(initial.cy)) this.center[1] = l0.translation[this.v] + initial.cy * l0.scale[this.v];
    this.#frame(); // now, not at the next animation frame: the first requests leave at once
  }

  close() {
    if (!this.ds) return;
    this.loader.reset();
    this.cache.clear();
    this.ds.close();
    this.ds = null;
    for (const w of this.idleWaiters.splice(0)) w.reject(new Error("dataset closed"));
  }

  /** Level-0 voxel extent of a displayed axis in world units: [start, end). */
  #extent(axis) {
    const l0 = this.ds.levels[0];
    return [l0.translation[axis], l0.translation[axis] + l0.shape[axis] * l0.scale[axis]];
  }

  fitZoom() {
    const [h0, h1] = this.#extent(this.h);
    const [v0, v1] = this.#extent(this.v);
    return 0.96 * Math.min(this.W / (h1 - h0), this.H / (v1 - v0));
  }

  fit() {
    const [h0, h1] = this.#extent(this.h);
    const [v0, v1] = this.#extent(this.v);
    this.center = [(h0 + h1) / 2, (v0 + v1) / 2];
    this.zoom = this.fitZoom();
    this.redraw();
  }

  #clampZoom(z) {
    const l0 = this.ds.levels[0];
    const max = 64 / Math.min(l0.scale[this.h], l0.scale[this.v]);
    return Math.min(Math.max(z, this.fitZoom() / 8), max);
  }

  setDisplayAxes(h, v) {
    if (h === v) return;
    this.h = h;
    this.v = v;
    this.fit();
  }

  setAt(axis, index) {
    const n = this.ds.levels[0].shape[axis];
    const i = Math.min(Math.max(0, Math.round(index)), n - 1);
    if (this.at[axis] === i) return;
    this.at[axis] = i;
    // one channel at a time: its own window from the metadata (OME), unless set by hand
    const w = axis === this.channelAxis && !this.ds.channels.shared && !this.manualContrast ? this.ds.channels.list[i]?.window : null;
    if (w) this.colouring.set(w);
    this.redraw();
  }

  /** Whether the channels are drawn as one colour composite now (the channel axis not on screen). */
  composing() {
    return this.compositeOn && this.channelAxis >= 0 && this.channelAxis !== this.h && this.channelAxis !== this.v;
  }

  /** Draw the channels as a colour composite (true) or one at a time with the colormap (false). */
  setComposite(on) {
    if (!this.composite || this.compositeOn === Boolean(on)) return;
    this.compositeOn = Boolean(on);
    this.redraw();
  }

  /** Change one channel of the composite: { lo, hi, visible }. */
  setChannel(i, { lo, hi, visible }) {
    if (!this.composite) return;
    if (lo !== undefined || hi !== undefined) this.compositeAutoPending = false;
    if (this.composite.set(i, { lo, hi, visible })) this.redraw();
  }

  setLevel(pin) {
    this.pin = pin;
    this.redraw();
  }

  setColours({ name, lo, hi }) {
    if (lo !== undefined || hi !== undefined) {
      this.manualContrast = true;
      this.autoPending = false;
    }
    if (this.colouring.set({ name, lo, hi })) this.redraw();
  }

  /** Contrast from the visible, loaded tiles (the finest level drawn). */
  autoContrast() {
    const planes = this.#visiblePlanes();
    if (this.composing()) {
      if (!this.#compositeLimits(planes, true)) this.compositeAutoPending = true;
      this.redraw();
      return;
    }
    const lim = autoLimits(planes);
    if (!lim) {
      this.autoPending = true;
      this.manualContrast = false;
      this.redraw();
      return;
    }
    this.range = [Math.min(lim.min, this.range?.[0] ?? lim.min), Math.max(lim.max, this.range?.[1] ?? lim.max)];
    this.manualContrast = false;
    this.colouring.set({ lo: lim.lo, hi: lim.hi });
    this.redraw();
  }

  /** Set the view in level-0 voxel units: { cx, cy, zoom, at: {axisName: index}, level }. */
  setView({ cx, cy, zoom, at, level } = {}) {
    const l0 = this.ds.levels[0];
    if (Number.isFinite(zoom) && zoom > 0) this.zoom = zoom / l0.scale[this.h];
    if (Number.isFinite(cx)) this.center[0] = l0.translation[this.h] + cx * l0.scale[this.h];
    if (Number.isFinite(cy)) this.center[1] = l0.translation[this.v] + cy * l0.scale[this.v];
    for (const [name, i] of Object.entries(at ?? {})) {
      const k = this.ds.axes.findIndex((a) => a.name === name);
      if (k >= 0) this.at[k] = Math.min(Math.max(0, Math.round(i)), l0.shape[k] - 1);
    }
    if (level !== undefined) this.pin = level;
    this.redraw();
  }

  /** The view in level-0 voxel units (what setView and the URL take). */
  view() {
    const l0 = this.ds.levels[0];
    const at = {};
    this.ds.axes.forEach((a, k) => {
      if (k !== this.h && k !== this.v) at[a.name] = this.at[k];
    });
    return {
      cx: (this.center[0] - l0.translation[this.h]) / l0.scale[this.h],
      cy: (this.center[1] - l0.translation[this.v]) / l0.scale[this.v],
      zoom: this.zoom * l0.scale[this.h],
      at,
      h: this.ds.axes[this.h].name,
      v: this.ds.axes[this.v].name,
    };
  }

  // --- level and tiles ------------------------------------------------------------------------

  /**
   * The finest level whose voxels cover at least ~one device pixel: tiles are drawn with
   * nearest-neighbour sampling, so a finer level would only alias (and cost 4x the requests);
   * the coarser level is the writer's proper downsampling. Zoomed out beyond the coarsest
   * level: the coarsest.
   */
  level() {
    if (this.pin !== null && this.tileCount(this.pin) <= MAX_TILES) return this.pin;
    const levels = this.ds.levels;
    for (let i = 0; i < levels.length; i++) {
      const l = levels[i];
      const px = this.zoom * Math.sqrt(l.scale[this.h] * l.scale[this.v]) * this.dpr;
      if (px >= 0.9) return i;
    }
    return levels.length - 1;
  }

  /** How many tiles of level `li` the screen needs (without building them). */
  tileCount(li) {
    const L = this.ds.levels[li];
    const n = (axis, half, c) => {
      const s = L.scale[axis];
      const t = L.translation[axis];
      const i0 = Math.max(0, Math.floor((c - half - t) / s));
      const i1 = Math.min(L.shape[axis], Math.ceil((c + half - t) / s));
      return i1 <= i0 ? 0 : Math.ceil(i1 / L.chunkShape[axis]) - Math.floor(i0 / L.chunkShape[axis]);
    };
    return n(this.h, this.W / 2 / this.zoom, this.center[0]) * n(this.v, this.H / 2 / this.zoom, this.center[1]);
  }

  /** Tiles of level `li` that intersect the screen, nearest to the centre first. */
  tilesAt(li) {
    const ds = this.ds;
    const L = ds.levels[li];
    const l0 = ds.levels[0];
    const { h, v } = this;
    const halfW = this.W / 2 / this.zoom;
    const halfH = this.H / 2 / this.zoom;
    const span = (axis, w0, w1) => {
      const s = L.scale[axis];
      const t = L.translation[axis];
      const n = L.shape[axis];
      const c = L.chunkShape[axis];
      const i0 = Math.max(0, Math.floor((w0 - t) / s));
      const i1 = Math.min(n, Math.ceil((w1 - t) / s));
      return i1 <= i0 ? [0, 0] : [Math.floor(i0 / c), Math.ceil(i1 / c)];
    };
    const [ch0, ch1] = span(h, this.center[0] - halfW, this.center[0] + halfW);
    const [cv0, cv1] = span(v, this.center[1] - halfH, this.center[1] + halfH);
    // the chunk and local index of every other axis at this level
    const coords = new Array(L.shape.length).fill(0);
    const fixed = new Array(L.shape.length).fill(0);
    for (let k = 0; k < L.shape.length; k++) {
      if (k === h || k === v) continue;
      const world = l0.translation[k] + (this.at[k] + 0.5) * l0.scale[k];
      const idx = Math.min(Math.max(0, Math.floor((world - L.translation[k]) / L.scale[k])), L.shape[k] - 1);
      coords[k] = Math.floor(idx / L.chunkShape[k]);
      fixed[k] = idx - coords[k] * L.chunkShape[k];
    }
    // a composite tile: the plane of every channel, from one chunk or several (planar)
    const ck = this.composing() ? this.channelAxis : -1;
    const channels = ck >= 0 ? L.shape[ck] : 1;
    const fixedKey = fixed.map((f, k) => (k === h || k === v || k === ck ? "*" : f)).join(",") + (ck >= 0 ? "|composite" : "");
    const tiles = [];
    for (let cv = cv0; cv < cv1; cv++) {
      for (let chh = ch0; chh < ch1; chh++) {
        const c = coords.slice();
        c[h] = chh;
        c[v] = cv;
        const parts = [];
        for (let i = 0; i < channels; i++) {
          if (ck < 0) {
            parts.push({ chunkKey: `${li}:${c.join(",")}`, coords: c, fixed });
            break;
          }
          const pc = c.slice();
          const pf = fixed.slice();
          pc[ck] = Math.floor(i / L.chunkShape[ck]);
          pf[ck] = i - pc[ck] * L.chunkShape[ck];
          parts.push({ chunkKey: `${li}:${pc.join(",")}`, coords: pc, fixed: pf });
        }
        const chunkKey = parts[0].chunkKey;
        const x0 = L.translation[h] + chh * L.chunkShape[h] * L.scale[h];
        const x1 = L.translation[h] + Math.min((chh + 1) * L.chunkShape[h], L.shape[h]) * L.scale[h];
        const y0 = L.translation[v] + cv * L.chunkShape[v] * L.scale[v];
        const y1 = L.translation[v] + Math.min((cv + 1) * L.chunkShape[v], L.shape[v]) * L.scale[v];
        const dx = ((x0 + x1) / 2 - this.center[0]) * this.zoom;
        const dy = ((y0 + y1) / 2 - this.center[1]) * this.zoom;
        tiles.push({
          key: `${chunkKey}|${h},${v}|${fixedKey}`,
          chunkKey,
          parts,
          level: li,
          coords: parts[0].coords,
          fixed: parts[0].fixed,
          x0,
          x1,
          y0,
          y1,
          dist: dx * dx + dy * dy,
        });
      }
    }
    tiles.sort((a, b) => a.dist - b.dist);
    return tiles;
  }

  // --- planes (the coloured 2D cut of a chunk) ----------------------------------------------------

  #evicted(key, value) {
    if (key.includes("|")) {
      for (const ck of value?.chunkKeys ?? [key.slice(0, key.indexOf("|"))]) this.planesOf.get(ck)?.delete(key);
      return;
    }
    // planes that are views into this chunk go with it
    for (const pk of this.planesOf.get(key) ?? []) {
      const p = this.cache.peek(pk);
      if (p && !p.copied) this.cache.delete(pk);
    }
    this.planesOf.delete(key);
  }

  /** The colours' version a plane is painted against (a composite's or the colormap's). */
  #versionOf(p) {
    return p.channelValues ? this.composite.version : this.colouring.version;
  }

  /** Whether colouring waits for the automatic contrast (of the composite, or of the colormap). */
  #pending(tile) {
    return tile.key.endsWith("|composite") ? this.compositeAutoPending : this.autoPending;
  }

  #haveChunks(tile) {
    return tile.parts.every((part) => this.cache.has(part.chunkKey));
  }

  /** The tile's plane (one per channel when composing), cut from its chunk(s). */
  #cut(tile, get) {
    const planes = tile.parts.map((part) => extractPlane(get(part.chunkKey), this.h, this.v, part.fixed, this.ds.dtype));
    if (!tile.key.endsWith("|composite")) return planes[0];
    const bytes = planes.reduce((s, q) => s + (q.copied ? q.values.byteLength : 0), 0);
    return { values: planes[0].values, channelValues: planes.map((q) => q.values), w: planes[0].w, h: planes[0].h, copied: planes.every((q) => q.copied), bytes };
  }

  /** The tile's plane, cut and coloured now if its chunk is here and time allows; else null. */
  #plane(tile, budget) {
    let p = this.cache.get(tile.key);
    if (p) {
      if (p.version !== this.#versionOf(p) && !this.#pending(tile) && budget.ok()) this.#paint(p);
      return p;
    }
    // no colouring before the automatic contrast is known (it waits for the first few tiles)
    if (!this.#haveChunks(tile) || this.#pending(tile) || !budget.ok()) return null;
    const t = performance.now();
    p = this.#cut(tile, (k) => this.cache.get(k));
    p.canvas = null;
    p.version = 0;
    p.chunkKeys = [...new Set(tile.parts.map((part) => part.chunkKey))];
    this.#paint(p, t);
    this.cache.set(tile.key, p, (p.bytes ?? (p.copied ? p.values.byteLength : 0)) + p.w * p.h * 4);
    for (const ck of p.chunkKeys) {
      if (!this.planesOf.has(ck)) this.planesOf.set(ck, new Set());
      this.planesOf.get(ck).add(tile.key);
    }
    return p;
  }

  /** Colour a plane into its own small canvas. */
  #paint(p, t = performance.now()) {
    if (!p.canvas) {
      p.canvas = typeof OffscreenCanvas === "function" ? new OffscreenCanvas(p.w, p.h) : Object.assign(document.createElement("canvas"), { width: p.w, height: p.h });
      p.ctx = p.canvas.getContext("2d");
    }
    const img = p.ctx.createImageData(p.w, p.h);
    if (p.channelValues) this.composite.colour(p.channelValues, new Uint32Array(img.data.buffer));
    else this.colouring.colour(p.values, new Uint32Array(img.data.buffer));
    p.ctx.putImageData(img, 0, 0);
    p.version = this.#versionOf(p);
    this.timing.colourMs += performance.now() - t;
    this.timing.coloured++;
  }

  #visiblePlanes() {
    if (!this.ds) return [];
    const li = this.level();
    for (let l = li; l < this.ds.levels.length; l++) {
      const planes = this.tilesAt(l)
        .map((t) => this.cache.peek(t.key))
        .filter(Boolean);
      if (planes.length) return planes;
    }
    return [];
  }

  // --- drawing ------------------------------------------------------------------------------------

  #resize() {
    const r = this.canvas.getBoundingClientRect();
    this.dpr = window.devicePixelRatio || 1;
    this.W = Math.max(1, r.width);
    this.H = Math.max(1, r.height);
    const w = Math.max(1, Math.round(r.width * this.dpr));
    const h = Math.max(1, Math.round(r.height * this.dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
  }

  redraw() {
    if (!this.raf && this.ds) this.raf = requestAnimationFrame(() => this.#frame());
  }

  #frame() {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    const ds = this.ds;
    if (!ds) return;
    const start = performance.now();
    let calls = 0;
    const budget = {
      starved: false,
      ok() {
        const ok = calls++ === 0 || performance.now() - start < FRAME_BUDGET_MS;
        if (!ok) this.starved = true;
        return ok;
      },
    };
    const li = this.level();
    const last = ds.levels.length - 1;
    const target = this.tilesAt(li);
    const previewLevel = li < last ? Math.min(li + 2, last) : -1;
    const missing = target.filter((t) => !this.cache.has(t.key));
    const preview = previewLevel >= 0 && missing.length > 0 ? this.tilesAt(previewLevel) : [];

    // 1. what to load: the coarse preview (a few tiles) first, then the target level centre-out
    const jobs = [];
    const seen = new Set();
    for (const t of [...preview, ...missing]) {
      if (this.cache.has(t.key)) continue;
      for (const part of t.parts) {
        if (seen.has(part.chunkKey)) continue;
        seen.add(part.chunkKey);
        jobs.push({ key: part.chunkKey, array: ds.levels[t.level].array, coords: part.coords });
      }
    }
    this.loader.want(jobs);

    // 2. auto contrast once the preview (or a first few target tiles) is in
    if (this.composing() ? this.compositeAutoPending : this.autoPending) this.#tryAutoContrast(preview, target);

    // 3. draw: coarser levels, then up to two finer ones (whatever is cached), then the target
    const ctx = this.ctx;
    ctx.imageSmoothingEnabled = false;
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    const keep = new Set();
    const order = [];
    for (let l = last; l > li; l--) order.push(l);
    for (let l = Math.max(0, li - 2); l < li; l++) if (this.tileCount(l) <= MAX_TILES) order.push(l);
    for (const l of order) {
      for (const t of l === previewLevel && preview.length ? preview : this.tilesAt(l)) {
        if (!this.cache.has(t.key) && !this.#haveChunks(t)) continue;
        const p = this.#plane(t, budget);
        if (p) this.#drawTile(t, p, keep);
      }
    }
    let drawn = 0;
    let fresh = 0;
    let failed = 0;
    for (const t of target) {
      const p = this.#plane(t, budget);
      for (const part of t.parts) keep.add(part.chunkKey);
      if (!p) {
        if (t.parts.some((part) => this.loader.failed.has(part.chunkKey))) failed++;
        continue;
      }
      this.#drawTile(t, p, keep);
      drawn++;
      if (p.version === this.#versionOf(p)) fresh++;
    }
    this.cache.trim(keep);

    // 4. bookkeeping
    const now = performance.now();
    if (this.timing.firstTileMs === null && this.tilesDrawn > 0) {
      this.timing.firstTileMs = now - this.t0;
    }
    this.frameInfo = { level: li, previewLevel, tiles: target.length, drawn, fresh, failed, frameMs: now - start };
    const complete = fresh + failed >= target.length;
    const idle = complete && !this.loader.busy && !(this.composing() ? this.compositeAutoPending : this.autoPending);
    if (budget.starved) this.redraw(); // more to cut or colour: next frame (chunk arrivals redraw too)
    if (idle) {
      if (this.timing.firstScreenMs === null) this.timing.firstScreenMs = now - this.t0;
      for (const w of this.idleWaiters.splice(0)) w.resolve(this.counters());
    }
    if (now - this.lastStats > 150 || idle) {
      this.lastStats = now;
      this.onStats?.();
    }
    this.onFrame?.();
  }

  #tryAutoContrast(preview, target) {
    const have = (tiles) => tiles.filter((t) => this.cache.has(t.key) || this.#haveChunks(t));
    const fromPreview = preview.length > 0 && have(preview).length === preview.length;
    const enoughTarget = have(target).length >= Math.min(target.length, 4);
    if (!fromPreview && !enoughTarget && this.loader.busy) return;
    const tiles = fromPreview ? preview : have(target);
    const planes = [];
    for (const t of tiles) {
      const p = this.cache.peek(t.key) ?? (this.#haveChunks(t) ? this.#cut(t, (k) => this.cache.peek(k)) : null);
      if (p) planes.push(p);
    }
    if (this.composing()) {
      this.#compositeLimits(planes, false);
      this.compositeAutoPending = false;
      this.onStats?.();
      return;
    }
    const lim = autoLimits(planes);
    this.autoPending = false;
    if (!lim) return;
    this.range = [lim.min, lim.max];
    this.colouring.set({ lo: lim.lo, hi: lim.hi });
    this.onStats?.();
  }

  /**
   * A composite's limits from `planes` (each with channelValues): one for all colour channels of
   * an RGB image (its colour balance kept), each channel its own otherwise; `all`: also the
   * channels whose limits the file gives. False when there was nothing to measure.
   */
  #compositeLimits(planes, all) {
    const per = this.composite.channels.map((_, c) => planes.map((p) => ({ values: p.channelValues?.[c] ?? [] })));
    const list = this.ds.channels.list;
    let any = false;
    if (this.ds.channels.shared) {
      const colour = list.map((c, k) => k).filter((k) => list[k].role === "colour" && (all || !list[k].window));
      const lim = autoLimits(colour.flatMap((k) => per[k]));
      if (lim) for (const k of colour) any = this.composite.set(k, { lo: lim.lo, hi: lim.hi }) || true;
      return any;
    }
    list.forEach((c, k) => {
      if (!all && c.window) return;
      const lim = autoLimits(per[k]);
      if (lim) any = this.composite.set(k, { lo: lim.lo, hi: lim.hi }) || true;
    });
    return any;
  }

  #drawTile(t, p, keep) {
    const d = this.dpr;
    const sx = (w) => Math.round(((w - this.center[0]) * this.zoom + this.W / 2) * d);
    const sy = (w) => Math.round(((w - this.center[1]) * this.zoom + this.H / 2) * d);
    const X0 = sx(t.x0);
    const X1 = sx(t.x1);
    const Y0 = sy(t.y0);
    const Y1 = sy(t.y1);
    if (X1 <= X0 || Y1 <= Y0) return;
    // own background first: transparent pixels (NaN, label 0) must not show coarser tiles below
    this.ctx.fillRect(X0, Y0, X1 - X0, Y1 - Y0);
    this.ctx.drawImage(p.canvas, 0, 0, p.w, p.h, X0, Y0, X1 - X0, Y1 - Y0);
    this.tilesDrawn++;
    keep.add(t.key);
    for (const part of t.parts) keep.add(part.chunkKey);
  }

  // --- reading values ---------------------------------------------------------------------------

  /** The data under a CSS pixel of the canvas, from the finest level that has it loaded. */
  probe(px, py) {
    if (!this.ds) return null;
    const ds = this.ds;
    const wh = this.center[0] + (px - this.W / 2) / this.zoom;
    const wv = this.center[1] + (py - this.H / 2) / this.zoom;
    const l0 = ds.levels[0];
    const pos0 = this.at.slice();
    pos0[this.h] = Math.floor((wh - l0.translation[this.h]) / l0.scale[this.h]);
    pos0[this.v] = Math.floor((wv - l0.translation[this.v]) / l0.scale[this.v]);
    if (pos0[this.h] < 0 || pos0[this.v] < 0 || pos0[this.h] >= l0.shape[this.h] || pos0[this.v] >= l0.shape[this.v]) return null;
    for (let li = 0; li < ds.levels.length; li++) {
      const L = ds.levels[li];
      const ih = Math.floor((wh - L.translation[this.h]) / L.scale[this.h]);
      const iv = Math.floor((wv - L.translation[this.v]) / L.scale[this.v]);
      if (ih < 0 || iv < 0 || ih >= L.shape[this.h] || iv >= L.shape[this.v]) continue;
      const tile = this.tilesAt(li).find((t) => wh >= t.x0 && wh < t.x1 && wv >= t.y0 && wv < t.y1);
      const p = tile && this.cache.peek(tile.key);
      if (!p) continue;
      const lh = ih - tile.coords[this.h] * L.chunkShape[this.h];
      const lv = iv - tile.coords[this.v] * L.chunkShape[this.v];
      const i = lv * p.w + lh;
      return { level: li, position: pos0, value: p.channelValues ? p.channelValues.map((vals) => vals[i]) : p.values[i] };
    }
    return { level: null, position: pos0, value: undefined };
  }

  // --- numbers ------------------------------------------------------------------------------------

  /** Live counters: the library's per-array stats summed over levels, and the viewer's own. */
  counters() {
    const net = { requests: 0, bytes: 0, indexHits: 0, indexFetches: 0, chunks: 0, mergedRequests: 0, decodeMs: 0, workerJobs: 0 };
    if (!this.ds) return { net, tiles: {}, time: {} };
    // Scales of one precomputed volume share their reader (and its counters): count them once.
    const levels = this.ds.sharedStats ? this.ds.levels.slice(0, 1) : this.ds.levels;
    for (const l of levels) {
      try {
        const s = l.array.stats();
        for (const k of Object.keys(net)) net[k] += s[k] ?? 0;
      } catch {
        // closed
      }
    }
    const c = this.loader.counters;
    let planes = 0;
    for (const k of this.cache.map.keys()) if (k.includes("|")) planes++;
    return {
      net,
      tiles: {
        visible: this.frameInfo?.tiles ?? 0,
        drawn: this.frameInfo?.drawn ?? 0,
        inFlight: this.loader.inFlight.size,
        queued: this.loader.queue.length,
        cachedChunks: this.cache.size - planes,
        cachedPlanes: planes,
        cacheBytes: this.cache.bytes,
        evicted: this.cache.evictions,
        started: c.started,
        loaded: c.loaded,
        aborted: c.aborted,
        dropped: c.dropped,
        errors: c.errors,
      },
      time: {
        openMs: this.timing.openMs,
        firstTileMs: this.timing.firstTileMs,
        firstScreenMs: this.timing.firstScreenMs,
        loadMsAvg: c.loaded ? c.loadMs / c.loaded : null,
        colourMsAvg: this.timing.coloured ? this.timing.colourMs / this.timing.coloured : null,
        longestTaskMs: this.longestTaskMs,
        longTasks: this.longTasks,
      },
      level: this.frameInfo?.level ?? null,
      previewLevel: this.frameInfo?.previewLevel ?? null,
    };
  }

  /** Resolves (with the counters) once every visible tile of the current level is drawn. */
  whenIdle() {
    return new Promise((resolve, reject) => {
      this.idleWaiters.push({ resolve, reject });
      this.redraw();
    });
  }

  #observeLongTasks() {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          this.longTasks++;
          this.longestTaskMs = Math.max(this.longestTaskMs, e.duration);
        }
      }).observe({ type: "longtask", buffered: false });
    } catch {
      // not supported: the counter stays 0
    }
  }

  // --- input ----------------------------------------------------------------------------------

  panBy(dx, dy) {
    this.center[0] -= dx / this.zoom;
    this.center[1] -= dy / this.zoom;
    this.redraw();
  }

  /** Zoom by `factor` keeping the point under CSS pixel (px, py) fixed. */
  zoomAt(factor, px = this.W / 2, py = this.H / 2) {
    const wx = this.center[0] + (px - this.W / 2) / this.zoom;
    const wy = this.center[1] + (py - this.H / 2) / this.zoom;
    this.zoom = this.#clampZoom(this.zoom * factor);
    this.center[0] = wx - (px - this.W / 2) / this.zoom;
    this.center[1] = wy - (py - this.H / 2) / this.zoom;
    this.redraw();
  }

  #bindInput() {
    const c = this.canvas;
    const pointers = new Map();
    let pinch = null;
    const local = (e) => {
      const r = c.getBoundingClientRect();
      return [e.clientX - r.left, e.clientY - r.top];
    };
    c.addEventListener("pointerdown", (e) => {
      if (!this.ds || (e.pointerType === "mouse" && e.button !== 0)) return;
      c.setPointerCapture(e.pointerId);
      pointers.set(e.pointerId, local(e));
      pinch = null;
      c.classList.add("dragging");
    });
    c.addEventListener("pointermove", (e) => {
      const p = local(e);
      this.pointer = p;
      if (!pointers.has(e.pointerId)) {
        this.onStats?.();
        return;
      }
      const prev = pointers.get(e.pointerId);
      pointers.set(e.pointerId, p);
      if (pointers.size === 1) {
        this.panBy(p[0] - prev[0], p[1] - prev[1]);
      } else if (pointers.size === 2) {
        const [a, b] = [...pointers.values()];
        const mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
        const dist = Math.hypot(a[0] - b[0], a[1] - b[1]);
        if (pinch) {
          this.panBy(mid[0] - pinch.mid[0], mid[1] - pinch.mid[1]);
          if (pinch.dist > 0) this.zoomAt(dist / pinch.dist, mid[0], mid[1]);
        }
        pinch = { mid, dist };
      }
    });
    const up = (e) => {
      pointers.delete(e.pointerId);
      pinch = null;
      if (pointers.size === 0) c.classList.remove("dragging");
    };
    c.addEventListener("pointerup", up);
    c.addEventListener("pointercancel", up);
    c.addEventListener("pointerleave", () => {
      this.pointer = null;
      this.onStats?.();
    });
    c.addEventListener(
      "wheel",
      (e) => {
        if (!this.ds) return;
        e.preventDefault();
        const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? this.H : 1;
        const k = e.ctrlKey ? 0.01 : 0.0015; // ctrlKey: a trackpad pinch
        const [px, py] = local(e);
        this.zoomAt(Math.exp(-e.deltaY * unit * k), px, py);
      },
      { passive: false },
    );
    c.addEventListener("dblclick", (e) => {
      if (!this.ds) return;
      const [px, py] = local(e);
      this.zoomAt(e.shiftKey ? 0.5 : 2, px, py);
    });
  }
}
