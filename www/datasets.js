// Dataset adapters: turn a URL into the multiscale description the viewer draws.
//
// A Dataset is
//   { url, format, name, dtype, axes, levels, display: { h, v }, labels, window, channels, coords, close() }
//   axes:   [{ name, type: "space" | "time" | "channel" | "other", unit }]
//   levels: finest first; { array, path, shape, chunkShape, shardShape, hashSharded, scale, translation }
//           voxel i of a level covers world [translation + i·scale, translation + (i+1)·scale)
//   display: default axis indices for the horizontal and vertical screen directions
//   window:  optional initial contrast limits { lo, hi } from the metadata (OMERO)
//   channels: null, or the colours the file gives the channels of one axis (drawn as a colour
//           composite): { axis, source, ycbcr, premultiplied, list: [{ label, colour: [r, g, b] |
//           null, role: "colour" | "alpha", window: { lo, hi } | null, visible }] }
//   coords:  null, or per axis null or { name, values (level-0 index → coordinate), units,
//           label(value) } (a NetCDF variable's 1-D coordinate variables)
//
// Each format is one small adapter below; all read through shardfetch's open/openArray.

import { hexColour } from "./render.js";

/** Options for every array the viewer opens: the library's defaults (neighbouring tiles share a request). */
const READ = {};

/** An error with a short title, the detail, and a hint of what to do about it. */
export class DatasetError extends Error {
  constructor(title, detail, { hint = "", code = "", cause } = {}) {
    super(`${title}: ${detail}`, cause === undefined ? undefined : { cause });
    this.name = "DatasetError";
    this.title = title;
    this.detail = detail;
    this.hint = hint;
    this.code = code;
  }
}

const PREFIXES = /^(zarr[23]?|precomputed):\/\//i;
// (`|zip:path`, `|zarr3:` pipelines, `.zip`/`.ozx` archives and reference files are the library's.)
/** Any other format prefix before a URL (`n5://https://…`): the library refuses it (UnsupportedFormat). */
const OTHER_PREFIX = /^[a-z][\w+.-]*:\/\/[a-z][\w+.-]*:\/\//i;

/**
 * What a page's query opens: `?url=` as typed; an Icechunk repository given by
 * `?url=<repository>&store=icechunk&branch=…` (`tag=`, `snapshot=`, `path=`) as the pipeline
 * `<repository>|icechunk:@branch.…/<path>` (the library's syntax, which `?url=` may carry itself);
 * any other `?url=…&path=<node>` (a reference file's variable, an array in an archive) as
 * `<url>|zarr:<node>`.
 */
export function inputOf(query, fallback) {
  const url = query.get("url") ?? fallback;
  const version = ["branch", "tag", "snapshot"].find((k) => query.get(k));
  const node = (query.get("path") ?? "").replace(/^\/+/, "");
  if (url.includes("|icechunk:")) return url;
  if (query.get("store") === "icechunk" || version !== undefined) {
    const at = version === undefined ? "" : `@${version === "snapshot" ? "" : `${version}.`}${query.get(version)}/`;
    return `${url}|icechunk:${at}${node}`;
  }
  return node ? `${url}|zarr:${node}` : url;
}

/** Normalise user input: scheme prefixes (Neuroglancer style), trailing metadata file names. */
export function parseInput(input) {
  let url = String(input ?? "").trim();
  let hint = null;
  const m = PREFIXES.exec(url);
  if (m) {
    hint = m[1].toLowerCase();
    url = url.slice(m[0].length);
  } else if (OTHER_PREFIX.test(url)) {
    // As typed: `new URL` would also turn `n5://https://h` into `n5://https//h`.
    return { url, hint: "other" };
  }
  // A Neuroglancer pipeline (`url|zip:path|zarr3:`) goes to the library as typed (browsers
  // percent-encode `|` when normalising a URL).
  const bar = url.indexOf("|");
  const pipeline = bar < 0 ? "" : url.slice(bar);
  if (bar >= 0) url = url.slice(0, bar);
  url = url.replace(/\/(zarr\.json|\.zarray|\.zgroup|\.zattrs|\.zmetadata|info)$/, "").replace(/\/+$/, "");
  if (/\/info$/.test(String(input)) && hint === null) hint = "precomputed";
  return { url: new URL(url, globalThis.location?.href).href.replace(/\/+$/, "") + pipeline, hint };
}

function axisType(name, given) {
  if (given) return given;
  const n = String(name).toLowerCase();
  if (["x", "y", "z"].includes(n)) return "space";
  if (["t", "time"].includes(n)) return "time";
  if (["c", "ch", "channel", "channels"].includes(n)) return "channel";
  return "other";
}

/** Default display axes: the last two spatial axes (x horizontal); else the last two of size > 1. */
function defaultDisplay(axes, shape) {
  const idx = (pred) => axes.map((a, i) => i).filter((i) => pred(i) && shape[i] > 1);
  let pick = idx((i) => axes[i].type === "space");
  if (pick.length < 2) pick = idx(() => true);
  if (pick.length < 2) pick = axes.map((a, i) => i); // 1-D or degenerate arrays
  if (pick.length === 1) return { h: pick[0], v: pick[0] };
  return { h: pick[pick.length - 1], v: pick[pick.length - 2] };
}

/** The chunk grid as tiles: a rectilinear grid whose chunks are one size but a shorter last one
 * (a TIFF's short last strip) is the regular grid of that size; other irregular grids are refused. */
function tileShape(array) {
  if (array.chunkShape) return [...array.chunkShape];
  const sizes = (array.chunkShapes ?? []).map((a) => (a.slice(0, -1).every((n) => n === a[0]) && a[a.length - 1] <= a[0] ? a[0] : null));
  if (sizes.length !== array.shape.length || sizes.some((n) => n == null)) {
    throw new Error(`${array.url}: chunks of unequal sizes along an axis are not drawn by this viewer`);
  }
  return sizes;
}

function levelOf(array, path, scale, translation, hashSharded = false) {
  return {
    array,
    path,
    shape: [...array.shape],
    chunkShape: tileShape(array),
    shardShape: array.shardShape ? [...array.shardShape] : null,
    // Neuroglancer shards group chunks by hash, not by a grid: no shard shape to show.
    hashSharded,
    scale,
    translation,
  };
}

function closeAll(levels) {
  for (const l of levels) {
    try {
      l.array.close?.();
    } catch {
      // already closed
    }
  }
}

// --- plain arrays (Zarr v3 / v2, and what the library presents as one) -----------------------

/** What the panel calls a single array: the format it was read from, not how it is presented. */
function arrayFormat(array, hdf5Kind) {
  const sharded = array.shardShape ? "sharded" : "";
  switch (array.container?.kind) {
    case "netcdf3":
      return "NetCDF-3 variable";
    case "hdf5":
      return hdf5Kind === "netcdf4" ? "NetCDF-4 variable (HDF5)" : "HDF5 dataset";
    case "tiff": {
      const ph = PHOTOMETRIC[array.attributes?.tiff?.photometric];
      const samples = array.dimensionNames?.[0] === "sample" ? array.shape[0] : 1;
      return ph === "grey" && samples > 1 ? `TIFF image (${samples} samples)` : ph ? `TIFF image (${ph})` : "TIFF image";
    }
    default: {
      const where = { zip: "in a zip", references: "kerchunk references", icechunk: "Icechunk" }[array.container?.kind];
      const notes = [sharded, where].filter(Boolean);
      const base = array.format === "zarr2" ? "Zarr v2 array" : array.format === "precomputed" ? "Neuroglancer precomputed" : "Zarr array";
      return notes.length ? `${base} (${notes.join(", ")})` : base;
    }
  }
}

const PHOTOMETRIC = { 0: "min-is-white", 1: "grey", 2: "RGB", 3: "palette", 5: "CMYK", 6: "YCbCr" };

async function plainArray(api, array, signal) {
  const n = array.shape.length;
  const names = array.dimensionNames?.some((d) => d) ? array.dimensionNames.map((d, i) => d ?? `dim_${i}`) : null;
  const fallback = ["t", "c", "z", "y", "x"];
  const axes = Array.from({ length: n }, (_, i) => {
    const name = names ? names[i] : n <= 3 ? fallback[5 - n + i] : `dim_${i}`;
    return { name, type: names ? axisType(name) : n <= 3 ? "space" : "other", unit: "" };
  });
  const levels = [levelOf(array, "", axes.map(() => 1), axes.map(() => 0))];
  const channels = tiffChannels(array, axes.findIndex((a) => a.name === "sample"));
  if (channels) axes[channels.axis].type = "channel";
  const { coords, hdf5Kind } = await coordinatesOf(api, array, signal);
  return {
    url: array.url,
    format: arrayFormat(array, hdf5Kind),
    name: array.url.split("/").pop() || array.url,
    dtype: array.dtype,
    axes,
    levels,
    display: defaultDisplay(axes, array.shape),
    labels: array.dtype === "uint64",
    window: null,
    channels,
    coords,
    close: () => closeAll(levels),
  };
}

// --- colour: TIFF photometric, OME channel colours ---------------------------------------------

const RGB = [[255, 0, 0], [0, 255, 0], [0, 0, 255]];

/**
 * A TIFF image of Photometric RGB (2) or YCbCr (6) with 3 or more samples on axis `axis`: its
 * first three samples as red, green, blue, and an alpha sample when ExtraSamples (tag 338) says
 * the fourth is one. JPEG-compressed YCbCr arrives as RGB (the decoder converts it); any other
 * YCbCr as the samples stored. Other photometrics (grey, palette, CMYK…): null.
 */
function tiffChannels(array, axis) {
  const tiff = array.attributes?.tiff;
  const ph = tiff?.photometric;
  if (axis < 0 || (ph !== 2 && ph !== 6) || array.shape[axis] < 3) return null;
  const ycbcr = ph === 6 && tiff.compression !== 7;
  const full = array.dtype === "uint8" ? { lo: 0, hi: 255 } : null;
  const list = ["R", "G", "B"].map((label, k) => ({ label, colour: RGB[k], role: "colour", window: full, visible: true }));
  const extra = [tiff.tags?.["338"]].flat()[0];
  if (array.shape[axis] >= 4 && (extra === 1 || extra === 2)) {
    const max = { uint8: 255, uint16: 65535 }[array.dtype] ?? 1;
    list.push({ label: "A", colour: null, role: "alpha", window: { lo: 0, hi: max }, visible: true });
  }
  return { axis, source: `TIFF Photometric ${ph === 2 ? "RGB" : "YCbCr"}`, ycbcr, premultiplied: extra === 1, shared: true, list };
}

/** OME `omero.channels` with colours for the channel axis: each its colour and window. */
function omeChannels(ms, axes, shape) {
  const chans = ms.omero?.channels;
  const axis = axes.findIndex((a) => a.type === "channel");
  if (!Array.isArray(chans) || axis < 0 || chans.length !== shape[axis] || chans.length < 2) return null;
  if (!chans.some((c) => hexColour(c?.color))) return null;
  const list = chans.map((c, k) => {
    const w = c?.window;
    const window = w && Number.isFinite(w.start) && Number.isFinite(w.end) && w.end > w.start ? { lo: w.start, hi: w.end } : null;
    return { label: String(c?.label || `channel ${k}`), colour: hexColour(c?.color) ?? [255, 255, 255], role: "colour", window, visible: c?.active !== false };
  });
  return { axis, source: "OME channel colours", ycbcr: false, premultiplied: false, shared: false, list };
}

// --- coordinates: a NetCDF variable's 1-D coordinate variables -------------------------------

const MAX_COORDS = 1 << 20;

const UNIT_MS = { day: 86400e3, hour: 3600e3, minute: 60e3, second: 1e3, millisecond: 1 };

/**
 * Labels of CF times (`units: "days since 2000-01-01"`) as ISO dates; null for other units, and
 * for calendars other than the Gregorian one (no leap days, 360 days: not JavaScript's dates).
 */
function cfTime(units, calendar) {
  const m = /^\s*(day|hour|minute|second|millisecond)s?\s+since\s+(.+?)\s*$/i.exec(String(units ?? ""));
  if (!m || !["", "standard", "gregorian", "proleptic_gregorian"].includes(String(calendar ?? "").toLowerCase())) return null;
  let ref = m[2].trim().replace(" ", "T");
  if (/^\d{4}-\d{1,2}-\d{1,2}$/.test(ref)) ref += "T00:00:00";
  if (!/(Z|[+-]\d\d:?\d\d)$/.test(ref)) ref += "Z";
  const t0 = Date.parse(ref);
  if (!Number.isFinite(t0)) return null;
  const ms = UNIT_MS[m[1].toLowerCase()];
  return (v) => {
    const d = new Date(t0 + v * ms);
    if (!Number.isFinite(d.getTime())) return String(v);
    const iso = d.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso.replace(/\.000Z$/, "Z").replace("T", " ");
  };
}

/** A coordinate value as the axes and the cursor show it (six significant digits). */
export function formatCoord(v) {
  if (!Number.isFinite(v)) return String(v);
  return Number.isInteger(v) ? String(v) : String(+v.toPrecision(6));
}

/**
 * A NetCDF or HDF5 variable's coordinates: for each of its dimensionNames, the 1-D variable of
 * that name and length in its group or an enclosing one (NetCDF-4 scoping), read whole. Also
 * whether the HDF5 file is a NetCDF-4 one (its root's `_NCProperties`, or dimension names).
 */
async function coordinatesOf(api, array, signal) {
  const kind = array.container?.kind;
  if (kind !== "netcdf3" && kind !== "hdf5") return { coords: null, hdf5Kind: null };
  let root;
  try {
    root = await api.open(array.container.url, { ...READ, signal });
  } catch (e) {
    if (e?.code === "Aborted") throw e;
    return { coords: null, hdf5Kind: array.dimensionNames ? "netcdf4" : null };
  }
  const hdf5Kind = root.attributes?._NCProperties !== undefined || array.dimensionNames?.some((d) => d) ? "netcdf4" : null;
  const base = array.container.url.replace(/\/+$/, "");
  const rel = array.url.startsWith(`${base}/`) ? array.url.slice(base.length + 1) : "";
  const dirs = rel.split("/").slice(0, -1);
  const coords = await Promise.all(
    (array.dimensionNames ?? []).map(async (name, k) => {
      if (!name || !("open" in root)) return null;
      for (let d = dirs.length; d >= 0; d--) {
        let a;
        try {
          a = await root.open([...dirs.slice(0, d), name].join("/"), { ...READ, signal });
        } catch (e) {
          if (e?.code === "Aborted") throw e;
          continue;
        }
        try {
          if (!("shape" in a) || a.shape.length !== 1 || a.shape[0] !== array.shape[k] || a.shape[0] > MAX_COORDS || !/int|float/.test(a.dtype)) continue;
          const r = await a.get([null], { signal });
          const values = Float64Array.from(r.data, Number);
          const at = a.attributes ?? {};
          const units = typeof at.units === "string" ? at.units : "";
          const time = cfTime(units, at.calendar);
          return { name, values, units, longName: typeof at.long_name === "string" ? at.long_name : "", label: time ?? formatCoord };
        } finally {
          a.close?.();
        }
      }
      return null;
    }),
  );
  root.close?.();
  return { coords: coords.some(Boolean) ? coords : null, hdf5Kind };
}

// --- multiscale images: OME-Zarr (0.4, 0.5) and Neuroglancer precomputed --------------------
// The library describes them (api.openMultiscale: axes, levels finest first with their scale
// and translation, omero); the viewer only maps that onto its own level and display shapes.

/** The format a multiscale is shown as: its own, or the TIFF file it was read from. */
function formatOf(ms, container) {
  if (ms.format === "precomputed") return "Neuroglancer precomputed";
  if (container?.kind === "tiff") return ms.omero ? "OME-TIFF" : "TIFF (with overviews)";
  return `OME-Zarr ${ms.version}`;
}

function fromMultiscale(ms, { sharded = false, container = null } = {}) {
  const axes = ms.axes.map((a) => ({ name: a.name, type: axisType(a.name, a.type ?? undefined), unit: a.unit ?? "" }));
  const levels = ms.levels.map((l) => levelOf(l.array, l.path, l.scale, l.translation, sharded && Boolean(l.array.scales?.[l.array.scaleIndex]?.sharded)));
  const precomputed = ms.format === "precomputed";
  const w = ms.omero?.channels?.[0]?.window;
  const array0 = ms.levels[0].array;
  // a COG's levels keep the TIFF's sample axis as "c": its photometric says RGB
  const channels = container?.kind === "tiff" && !ms.omero ? tiffChannels(array0, axes.findIndex((a) => a.type === "channel" || a.name === "c")) : omeChannels(ms, axes, levels[0].shape);
  return {
    url: ms.url,
    format: formatOf(ms, container),
    ...(precomputed ? { sharedStats: true } : {}),
    name: ms.name || ms.url.split("/").pop(),
    dtype: levels[0].array.dtype,
    axes,
    levels,
    display: precomputed ? { h: 0, v: 1 } : defaultDisplay(axes, levels[0].shape),
    labels: precomputed ? ms.levels[0].array.attributes?.type === "segmentation" : ms.imageLabel !== null || levels[0].array.dtype === "uint64",
    window: w && Number.isFinite(w.start) && Number.isFinite(w.end) && w.end > w.start ? { lo: w.start, hi: w.end } : null,
    channels,
    coords: null,
    close: () => ms.close(),
  };
}

// --- errors -------------------------------------------------------------------------------------

/** Tell a CORS refusal from an unreachable server: a no-cors request still reaches the former. */
async function corsBlocked(url) {
  try {
    await fetch(url, { mode: "no-cors", cache: "no-store" });
    return true;
  } catch {
    return false;
  }
}

/** A readable DatasetError for any failure of opening `url`. */
export async function explain(e, url) {
  if (e instanceof DatasetError) return e;
  const code = e?.code ?? "";
  const msg = e?.message ?? String(e);
  switch (code) {
    case "NotFound":
      return new DatasetError("Nothing found at this URL", msg, {
        code,
        hint: "Give the folder that holds zarr.json (Zarr v3), .zarray/.zgroup (Zarr v2) or info (Neuroglancer precomputed).",
      });
    case "Network": {
      const sameOrigin = new URL(url).origin === globalThis.location?.origin;
      if (!sameOrigin && (await corsBlocked(`${url}/zarr.json`))) {
        return new DatasetError("Blocked by CORS", `the server at ${new URL(url).origin} answers, but does not allow this page (${globalThis.location?.origin}) to read it`, {
          code: "CORS",
          hint: "The data server must send Access-Control-Allow-Origin, allow the Range header on preflight (OPTIONS) and expose Content-Range.",
        });
      }
      return new DatasetError("Server unreachable", msg, { code, hint: "Check the URL and that the server is running." });
    }
    case "UnsupportedCodec":
      return new DatasetError("Unsupported codec", msg, { code, hint: "This dataset uses a codec shardfetch does not decode yet." });
    case "UnsupportedDataType":
      return new DatasetError("Unsupported data type", msg, { code });
    case "UnsupportedFormat":
      return new DatasetError("Unsupported format", msg, { code });
    case "InvalidMetadata":
      return new DatasetError("Invalid metadata", msg, { code });
    case "HttpError":
      return new DatasetError(`HTTP error${e.status ? ` ${e.status}` : ""}`, msg, { code });
    case "Aborted":
      return new DatasetError("Cancelled", msg, { code });
    default:
      return new DatasetError(code ? `Error (${code})` : "Error", msg, { code, cause: e });
  }
}

// --- entry point ----------------------------------------------------------------------------------

/**
 * Open whatever dataset `input` points at, with the shardfetch module `api`.
 * Rejects with a DatasetError.
 */
export async function openDataset(api, input, options = {}) {
  const ds = await open(api, input, options);
  if (ds.levels[0].shape.length < 2) {
    ds.close();
    throw new DatasetError("Nothing to show in 2D", `${ds.url} has ${ds.levels[0].shape.length} dimension(s)`, {
      code: "NotAnImage",
      hint: "The viewer shows arrays with at least two dimensions.",
    });
  }
  return ds;
}

async function open(api, input, { signal } = {}) {
  let url;
  let hint;
  try {
    ({ url, hint } = parseInput(input));
  } catch {
    throw new DatasetError("Not a URL", String(input), { code: "BadUrl", hint: "Enter an http(s) URL of a dataset." });
  }
  // gs:// and s3:// are read through their public HTTPS endpoints (the library maps them).
  if (hint !== "other" && !/^(https?|gs|s3):$/.test(new URL(url.split("|")[0]).protocol)) {
    throw new DatasetError("Not an http(s), gs:// or s3:// URL", url, { code: "BadUrl" });
  }
  try {
    if (hint === "precomputed") {
      const node = await api.openArray(url, { ...READ, signal, format: "precomputed" });
      return fromMultiscale(await api.openMultiscale(node, { ...READ, signal }), { sharded: true });
    }
    // The library detects the format: Zarr v3, Zarr v2, Neuroglancer precomputed (its info).
    let node = await api.open(url, { ...READ, signal });
    if ("shape" in node) {
      if (Array.isArray(node.scales)) return fromMultiscale(await api.openMultiscale(node, { ...READ, signal }), { sharded: true });
      return await plainArray(api, node, signal);
    }
    // Several images (bioformats2raw's layout, an OME-TIFF of several series): the first.
    if (node.attributes?.["bioformats2raw.layout"] !== undefined || node.attributes?.ome?.["bioformats2raw.layout"] !== undefined) {
      node = await node.open("0");
    }
    if (node.attributes?.multiscales || node.attributes?.ome?.multiscales) {
      return fromMultiscale(await api.openMultiscale(node, { ...READ, signal }), { container: node.container });
    }
    throw new DatasetError("A group without multiscales", `${node.url} is a Zarr group with no OME-Zarr "multiscales" metadata`, {
      code: "NotAnArray",
      hint: "Open one of its arrays by adding its path to the URL (Zarr v3 groups cannot be listed over HTTP).",
    });
  } catch (e) {
    throw await explain(e, url);
  }
}
