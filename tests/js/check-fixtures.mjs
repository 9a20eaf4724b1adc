// Checks the shardfetch public API against the fixture manifests (tests/fixtures/manifests.json
// lists them; `loadManifests` merges them).
// Runs unchanged in Node and in browsers/workers: no imports, the caller passes the API module,
// the fixture data base URL and a loader for the expected arrays.
//
//   const r = await checkFixtures(api, "http://host/fixtures", manifest, (rel) => bytes);
//   // r = { passed, failed, failures: [string], count, results: [{name, ok, failures, checks}] }
//
// A "case" (array or group) passes when all its checks pass; `count` is the number of cases
// checked (callers compare it with the number they asked for).
// Options (5th argument): { cases: ["name", ...] } to run a subset (a name that is not in the
// manifest, or a group's `group:<path>` with { groups: false }, throws), { groups: false } to skip
// the group checks, { maxReports: 5 } failures reported per case, { open: {...} } extra
// openArray options (e.g. { workers: false }), { concurrency: 4 } cases checked at once.

const ELEMENT_SIZE = {
  bool: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  float16: 2,
  int32: 4,
  uint32: 4,
  float32: 4,
  int64: 8,
  uint64: 8,
  float64: 8,
  complex64: 8,
  complex128: 16,
  datetime64: 8,
  timedelta64: 8,
};

/** Text, bytes and JSON data types: one JS value per element; expected values in JSON. */
const VALUE_TYPES = new Set(["string", "bytes", "json", "fixed_length_utf32", "null_terminated_bytes", "fixed_length_string"]);

/** A JS element as the manifests' expected JSON holds it (bytes as base64). */
function asExpected(dtype, v) {
  if (v instanceof Uint8Array) {
    let s = "";
    for (const b of v) s += String.fromCharCode(b);
    return btoa(s);
  }
  return v;
}

/** The decoder outside the module (a module of its own, loaded on demand) case `c` needs, or null. */
export function neededDecoder(c) {
  for (const f of c.features) {
    const m = /^(?:encoding|compression)_(jpeg|png|jxl|webp|lerc|ccitt)$|(?:^|[._])(bz2|lzma|pcodec|compresso|parquet|hdf5|netcdf3)$/.exec(f);
    if (m) return m[1] ?? m[2];
  }
  // (A TIFF's images are described by the tiff module; its codecs' modules come first above.)
  return c.features.includes("tiff") ? "tiff" : null;
}

/** Every manifest `manifests.json` lists, merged: `loadJson(relativePath)` → parsed JSON. */
export async function loadManifests(loadJson) {
  const index = await loadJson("manifests.json");
  const merged = { cases: [], groups: [] };
  for (const name of index.manifests) {
    const m = await loadJson(name);
    merged.cases.push(...(m.cases ?? []));
    merged.groups.push(...(m.groups ?? []));
  }
  return merged;
}

/** Chunk start offsets per axis, from the writer's grid in the manifest. */
function startsOf(c) {
  if (c.chunkShape) return c.shape.map((n, k) => Array.from({ length: Math.max(1, Math.ceil(n / c.chunkShape[k])) }, (_, i) => i * c.chunkShape[k]));
  return c.chunkShapes.map((sizes) => {
    let at = 0;
    return sizes.map((s) => ((at += s), at - s));
  });
}

const prod = (a) => a.reduce((x, y) => x * y, 1);
const eqArr = (a, b) =>
  Array.isArray(a) === Array.isArray(b) && (a == null || (a.length === b.length && a.every((x, i) => x === b[i])));
const show = (v) => (typeof v === "bigint" ? `${v}n` : Object.is(v, -0) ? "-0" : JSON.stringify(v) ?? String(v));

function joinUrl(base, rel) {
  const b = base.replace(/\/+$/, "");
  const r = String(rel).replace(/^\/+/, "");
  // A pipeline's last stage (`outer.zip|zip:inner.zip|zip:`) takes the path as its argument.
  return r === "" ? b : /\|[a-z]+:$/.test(b) ? `${b}${r}` : `${b}/${r}`;
}

/** Canonical JSON (sorted keys) for deep comparison of attributes. */
function canon(v) {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(",")}}`;
  }
  if (typeof v === "bigint") return v.toString();
  return JSON.stringify(v);
}

function hexToFloat(hex, dtype) {
  const bits = BigInt(hex);
  const dv = new DataView(new ArrayBuffer(8));
  if (dtype === "float64") {
    dv.setBigUint64(0, bits, true);
    return dv.getFloat64(0, true);
  }
  if (dtype === "float32") {
    dv.setUint32(0, Number(bits), true);
    return dv.getFloat32(0, true);
  }
  // float16
  const h = Number(bits);
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** Returns null when `actual` matches the manifest's fill value string, else a message. */
export function checkFill(dtype, expected, actual) {
  const bad = `fillValue ${show(actual)} (${typeof actual}) != ${expected}`;
  if (VALUE_TYPES.has(dtype)) {
    // The writer's JSON token; null and 0 mean empty (Zarr v2 object arrays).
    const token = JSON.parse(expected);
    const got = asExpected(dtype, actual);
    if (dtype === "json") return canon(got) === canon(token) ? null : bad;
    if (token === null || token === 0) return got === "" ? null : bad;
    return got === token ? null : bad;
  }
  switch (dtype) {
    case "raw_bytes":
    case "structured": {
      const want = Uint8Array.from(atob(expected), (ch) => ch.charCodeAt(0));
      return actual instanceof Uint8Array && actual.length === want.length && actual.every((b, i) => b === want[i]) ? null : bad;
    }
    case "complex64":
    case "complex128": {
      const want = JSON.parse(expected);
      const part = dtype === "complex64" ? "float32" : "float64";
      if (!Array.isArray(actual) || actual.length !== 2) return bad;
      const e = [0, 1].map((i) => checkFill(part, typeof want[i] === "string" ? want[i] : String(want[i]), actual[i]));
      return e[0] ?? e[1];
    }
    case "bool":
      return actual === (expected === "true") ? null : bad;
    case "datetime64":
    case "timedelta64":
      // NaT: -2^63, written as that number or as "NaT".
      return typeof actual === "bigint" && actual === (expected === '"NaT"' ? -(2n ** 63n) : BigInt(expected)) ? null : bad;
    case "int64":
    case "uint64": {
      if (typeof actual === "bigint") return actual === BigInt(expected) ? null : bad;
      if (typeof actual === "number" && Number.isSafeInteger(actual)) return BigInt(actual) === BigInt(expected) ? null : bad;
      return bad;
    }
    case "int8":
    case "int16":
    case "int32":
    case "uint8":
    case "uint16":
    case "uint32":
      return typeof actual === "number" && actual === Number(expected) ? null : bad;
    default: {
      // floats
      if (typeof actual !== "number") return bad;
      let want;
      if (/^0x[0-9a-f]+$/i.test(expected)) want = hexToFloat(expected, dtype);
      else if (expected === "NaN") want = NaN;
      else if (expected === "Infinity" || expected === "inf") want = Infinity;
      else if (expected === "-Infinity" || expected === "-inf") want = -Infinity;
      else want = Number(expected);
      if (Number.isNaN(want)) return Number.isNaN(actual) ? null : bad;
      if (Object.is(actual, want) || Object.is(actual, Math.fround(want))) return null;
      if (dtype === "float16" && want !== 0 && Math.abs(actual - want) <= Math.abs(want) * 1e-3) return null;
      return bad;
    }
  }
}

function bytesOf(data) {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function hexBytes(u8, off, n) {
  let s = "";
  for (let i = 0; i < n; i++) s += (off + i < u8.length ? u8[off + i] : 0).toString(16).padStart(2, "0");
  return s;
}

/** Like `compareRegion`, for value arrays: `data` holds one JS value per element. */
function compareValues(res, expected, arrShape, axes, fixed, maxReports, dtype) {
  const errs = [];
  const { data, shape, stride } = res;
  if (!Array.isArray(data)) return [`data is not an array of values: ${Object.prototype.toString.call(data)}`];
  const ndim = arrShape.length;
  const astride = new Array(ndim);
  let s = 1;
  for (let k = ndim - 1; k >= 0; k--) {
    astride[k] = s;
    s *= arrShape[k];
  }
  let base = 0;
  for (const [axis, idx] of fixed) base += idx * astride[axis];
  for (const [axis, start] of axes) base += start * astride[axis];
  const n = prod(shape);
  const idx = new Array(shape.length).fill(0);
  let mismatches = 0;
  for (let i = 0; i < n; i++) {
    let g = 0;
    let e = base;
    for (let k = 0; k < shape.length; k++) {
      g += idx[k] * stride[k];
      e += idx[k] * astride[axes[k][0]];
    }
    const got = asExpected(dtype, data[g]);
    if (canon(got) !== canon(expected[e])) {
      mismatches++;
      if (errs.length < maxReports) errs.push(`element [${idx}] got ${canon(got)} expected ${canon(expected[e])}`);
    }
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  if (mismatches > errs.length) errs.push(`... ${mismatches} mismatching elements in total`);
  return errs;
}

/**
 * Compare a result (data/shape/stride) with the expected full array.
 * `axes[k]` maps result axis k to [arrayAxis, start]; `fixed` holds the array index for dropped
 * axes (array axis → index). Returns a list of mismatch messages (at most maxReports).
 */
function compareRegion(res, expected, arrShape, esize, axes, fixed, maxReports, tolerance = 0) {
  const errs = [];
  const { data } = res;
  let { shape, stride } = res;
  if (res.unit > 1) {
    // Multi-value elements (complex pairs, raw/structured bytes) are a trailing axis: compare whole elements.
    if (shape.at(-1) !== res.unit || stride.at(-1) !== 1) return [`result without a trailing axis of ${res.unit}: [${shape}] [${stride}]`];
    shape = shape.slice(0, -1);
    stride = stride.slice(0, -1).map((s) => s / res.unit);
  }
  const got = bytesOf(data);
  const ndim = arrShape.length;
  // C-order strides of the full array (elements)
  const astride = new Array(ndim);
  let s = 1;
  for (let k = ndim - 1; k >= 0; k--) {
    astride[k] = s;
    s *= arrShape[k];
  }
  let base = 0;
  for (const [axis, idx] of fixed) base += idx * astride[axis];
  for (const [axis, start] of axes) base += start * astride[axis];
  const n = prod(shape);
  if (n === 0) return errs;
  const rank = shape.length;
  // bounds check of the strides
  let maxIdx = 0;
  for (let k = 0; k < rank; k++) maxIdx += (shape[k] - 1) * stride[k];
  if (maxIdx * esize + esize > got.length) {
    errs.push(`data too short: ${got.length} bytes for shape [${shape}] stride [${stride}] (needs ${(maxIdx + 1) * esize})`);
    return errs;
  }
  const idx = new Array(rank).fill(0);
  let mismatches = 0;
  for (let i = 0; i < n; i++) {
    let g = 0;
    let e = base;
    for (let k = 0; k < rank; k++) {
      g += idx[k] * stride[k];
      e += idx[k] * astride[axes[k][0]];
    }
    const go = g * esize;
    const eo = e * esize;
    let same = true;
    for (let b = 0; b < esize; b++) {
      if (got[go + b] !== expected[eo + b] && !(tolerance > 0 && Math.abs(got[go + b] - expected[eo + b]) <= tolerance)) {
        same = false;
        break;
      }
    }
    if (!same) {
      mismatches++;
      if (errs.length < maxReports) {
        errs.push(`element [${idx}] got 0x${hexBytes(got, go, esize)} expected 0x${hexBytes(expected, eo, esize)}`);
      }
    }
    // increment multi-index (C order)
    for (let k = rank - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  if (mismatches > errs.length) errs.push(`... ${mismatches} mismatching elements in total`);
  return errs;
}

function errText(e) {
  if (e && typeof e === "object") return `${e.code ?? e.name ?? "Error"}: ${e.message}`;
  return String(e);
}

/** Selections to test for an array: [label, selection]. */
export function selectionsFor(c) {
  const shape = c.shape;
  const ndim = shape.length;
  const out = [["whole", shape.map(() => null)]];
  if (ndim === 0 || shape.some((n) => n === 0)) return out;
  const starts = startsOf(c);
  const first = starts.map((s, k) => s[1] ?? shape[k]);
  // A window crossing shard boundaries (or chunk boundaries when not sharded).
  const win = shape.map((n, k) => {
    const chunk = first[k];
    const unit = c.shardShape ? c.shardShape[k] : chunk;
    const half = Math.max(1, Math.ceil(chunk / 2));
    if (unit < n) return [Math.max(0, unit - half - 1), Math.min(n, unit + half + 1)];
    if (chunk < n) return [Math.max(0, chunk - half), Math.min(n, chunk + half + 1)];
    return [Math.min(1, n - 1), Math.max(Math.min(1, n - 1) + 1, n - 1)];
  });
  out.push(["window", win]);
  // A window reaching the array's far edge.
  out.push(["edge-window", shape.map((n, k) => [Math.max(0, n - first[k] - 1), n])]);
  // An integer on the first axis (axis dropped).
  const i0 = Math.min(shape[0] - 1, Math.floor(shape[0] / 2) + 1);
  out.push([`int-axis0=${i0}`, [i0, ...shape.slice(1).map(() => null)]]);
  if (ndim >= 2) {
    // integer on the last axis and a range elsewhere
    const last = shape[ndim - 1] - 1;
    out.push([`range+int-last=${last}`, [...win.slice(0, ndim - 1), last]]);
  }
  return out;
}

/**
 * A fixed-length string case read with option `strings: "bytes"`: the whole array and its first
 * chunk against the bytes its writer read back (`expectedBytes`, base64), the fill value as
 * bytes.
 */
async function checkAsBytes(api, root, c, loadExpected, openOptions, maxReports) {
  const errs = [];
  const expected = JSON.parse(new TextDecoder().decode(await loadExpected(c.expectedBytes))).values;
  const arr = await api.openArray(root, { ...openOptions, ...(c.open ?? {}), strings: "bytes" });
  try {
    if (!(arr.fillValue instanceof Uint8Array)) errs.push(`fillValue ${show(arr.fillValue)} is not bytes`);
    const whole = await arr.get(c.shape.map(() => null));
    if (!whole.data.every((v) => v instanceof Uint8Array)) errs.push("get: an element is not a Uint8Array");
    errs.push(...compareValues(whole, expected, c.shape, c.shape.map((_, k) => [k, 0]), [], maxReports, c.dtype));
    const first = await arr.getChunk(c.shape.map(() => 0));
    errs.push(...compareValues(first, expected, c.shape, c.shape.map((_, k) => [k, 0]), [], maxReports, c.dtype).map((m) => `getChunk: ${m}`));
  } finally {
    arr.close?.();
  }
  return errs;
}

/** Chunks decoded by decoding workers across all checked arrays. */
let workerJobs = 0;

async function checkArrayCase(api, baseUrl, c, loadExpected, maxReports, openOptions = {}, chunksInFlight = 1) {
  const failures = [];
  let checks = 0;
  const fail = (msg) => failures.push(`${c.name}: ${msg}`);
  const root = joinUrl(baseUrl, c.path);
  const url = joinUrl(root, c.open?.path ?? "");
  const values = VALUE_TYPES.has(c.dtype);
  const esize = values ? 1 : ELEMENT_SIZE[c.dtype] ?? c.itemSize;
  // Values per element the API returns as a trailing axis.
  const unit = values ? 1 : c.dtype.startsWith("complex") ? 2 : c.itemSize ?? 1;
  const compare = (res, expected, axes, fixed) =>
    values
      ? compareValues(res, expected, c.shape, axes, fixed, maxReports, c.dtype)
      : compareRegion(res, expected, c.shape, esize, axes, fixed, maxReports, c.tolerance);
  if (!esize) {
    fail(`unknown dtype ${c.dtype} in manifest`);
    return { failures, checks };
  }
  let arr;
  try {
    arr = await api.openArray(root, { ...openOptions, ...(c.open ?? {}) });
  } catch (e) {
    fail(`openArray(${root}, ${JSON.stringify(c.open ?? {})}) failed: ${errText(e)}`);
    return { failures, checks };
  }
  try {
    // --- metadata ---
    checks++;
    if (!eqArr(Array.from(arr.shape), c.shape)) fail(`shape [${arr.shape}] != [${c.shape}]`);
    if (arr.dtype !== c.dtype) fail(`dtype ${arr.dtype} != ${c.dtype}`);
    const cs = arr.chunkShape == null ? null : Array.from(arr.chunkShape);
    if (!eqArr(cs, c.chunkShape ?? null)) fail(`chunkShape ${show(cs)} != ${show(c.chunkShape)}`);
    if (c.chunkShapes && JSON.stringify(arr.chunkShapes) !== JSON.stringify(c.chunkShapes)) {
      fail(`chunkShapes ${JSON.stringify(arr.chunkShapes)} != ${JSON.stringify(c.chunkShapes)}`);
    }
    const ss = arr.shardShape == null ? null : Array.from(arr.shardShape);
    if (!eqArr(ss, c.shardShape ?? null)) fail(`shardShape ${show(ss)} != ${show(c.shardShape ?? null)}`);
    if (JSON.stringify(arr.timeUnit ?? null) !== JSON.stringify(c.timeUnit ?? null)) {
      fail(`timeUnit ${JSON.stringify(arr.timeUnit)} != ${JSON.stringify(c.timeUnit ?? null)}`);
    }
    const fillErr = checkFill(c.dtype, c.fillValue, arr.fillValue);
    if (fillErr) fail(fillErr);
    if (JSON.stringify(arr.stringType ?? null) !== JSON.stringify(c.stringType ?? null)) {
      fail(`stringType ${JSON.stringify(arr.stringType)} != ${JSON.stringify(c.stringType ?? null)}`);
    }
    if (c.expectedBytes) {
      checks++;
      for (const m of await checkAsBytes(api, root, c, loadExpected, openOptions, maxReports)) fail(`strings "bytes": ${m}`);
    }
    if (typeof arr.url !== "string" || arr.url.replace(/\/+$/, "") !== url) fail(`url ${arr.url} != ${url}`);

    let expected;
    try {
      expected = await loadExpected(c.expected);
    } catch (e) {
      fail(`cannot load expected ${c.expected}: ${errText(e)}`);
      return { failures, checks };
    }
    if (values) expected = JSON.parse(new TextDecoder().decode(expected)).values;
    if (expected.length !== prod(c.shape) * esize) {
      fail(`expected file has ${expected.length} bytes, wants ${prod(c.shape) * esize}`);
      return { failures, checks };
    }

    // --- every chunk of the (innermost) chunk grid ---
    const starts = startsOf(c);
    const grid = c.shape.some((n) => n === 0) ? c.shape.map(() => 0) : starts.map((s) => s.length);
    const nChunks = prod(grid);
    // Every chunk, `chunksInFlight` at once (their requests may then merge, as a viewer's
    // would); failures reported in grid order.
    const chunkFailures = new Array(nChunks);
    const checkChunk = async (i) => {
      const coords = [];
      for (let k = grid.length - 1, rest = i; k >= 0; k--) {
        coords[k] = rest % grid[k];
        rest = Math.floor(rest / grid[k]);
      }
      const where = `getChunk([${coords}])`;
      const out = [];
      try {
        const res = { ...(await arr.getChunk(coords.slice())), unit };
        const wantShape = coords.map((ci, k) => Math.min((starts[k][ci + 1] ?? c.shape[k]) - starts[k][ci], c.shape[k] - starts[k][ci]));
        if (unit > 1) wantShape.push(unit);
        if (!eqArr(Array.from(res.shape), wantShape)) {
          out.push(`${where}: shape [${res.shape}] != [${wantShape}]`);
        } else if (!Array.isArray(res.stride) || res.stride.length !== wantShape.length) {
          out.push(`${where}: bad stride ${show(res.stride)}`);
        } else {
          const axes = coords.map((ci, k) => [k, starts[k][ci]]);
          for (const m of compare(res, expected, axes, [])) out.push(`${where}: ${m}`);
        }
      } catch (e) {
        out.push(`${where} failed: ${errText(e)}`);
      }
      chunkFailures[i] = out;
    };
    let nextChunk = 0;
    const chunkLane = async () => {
      while (nextChunk < nChunks) await checkChunk(nextChunk++);
    };
    await Promise.all(Array.from({ length: Math.min(chunksInFlight, Math.max(1, nChunks)) }, chunkLane));
    checks += nChunks;
    for (const out of chunkFailures) for (const m of out ?? []) fail(m);

    // --- selections ---
    for (const [label, sel] of selectionsFor(c)) {
      checks++;
      const where = `get(${label} ${JSON.stringify(sel)})`;
      try {
        const res = { ...(await arr.get(sel)), unit };
        const axes = [];
        const fixed = [];
        const wantShape = [];
        sel.forEach((s, k) => {
          if (s === null) {
            axes.push([k, 0]);
            wantShape.push(c.shape[k]);
          } else if (typeof s === "number") {
            fixed.push([k, s]);
          } else {
            axes.push([k, s[0]]);
            wantShape.push(s[1] - s[0]);
          }
        });
        if (unit > 1) wantShape.push(unit);
        if (!eqArr(Array.from(res.shape), wantShape)) fail(`${where}: shape [${res.shape}] != [${wantShape}]`);
        else {
          for (const m of compare(res, expected, axes, fixed)) fail(`${where}: ${m}`);
        }
      } catch (e) {
        fail(`${where} failed: ${errText(e)}`);
      }
    }
  } finally {
    try {
      workerJobs += arr.stats?.().workerJobs ?? 0;
      arr.close?.();
    } catch {
      /* ignore */
    }
  }
  return { failures, checks };
}

async function checkGroupCase(api, baseUrl, g, openOptions = {}) {
  const failures = [];
  let checks = 0;
  const name = `group ${g.path}`;
  const fail = (msg) => failures.push(`${name}: ${msg}`);
  const root = joinUrl(baseUrl, g.path);
  const url = joinUrl(root, g.open?.path ?? "");
  let group;
  checks++;
  try {
    group = await api.open(root, { ...openOptions, ...(g.open ?? {}) });
  } catch (e) {
    fail(`open(${url}) failed: ${errText(e)}`);
    return { failures, checks };
  }
  const isGroup = api.Group ? group instanceof api.Group : !("shape" in group);
  if (!isGroup) {
    fail(`open(${url}) did not give a Group`);
    return { failures, checks };
  }
  if (canon(group.attributes) !== canon(g.attributes ?? {})) {
    fail(`attributes ${canon(group.attributes)} != ${canon(g.attributes ?? {})}`);
  }
  checks++;
  try {
    await api.openArray(root, { ...openOptions, ...(g.open ?? {}) });
    fail(`openArray on a group did not reject`);
  } catch (e) {
    if (e?.code !== "NotAnArray") fail(`openArray on a group: code ${e?.code} (${errText(e)}), expected NotAnArray`);
  }
  for (const [child, kind] of Object.entries(g.children ?? {})) {
    checks++;
    if (kind === "implicit_group") {
      // No document (draft v3): listed by its writer, but not openable, as in zarr-python.
      try {
        await group.open(child);
        fail(`implicit group ${child} opened`);
      } catch (e) {
        if (e?.code !== "NotFound") fail(`implicit group ${child}: code ${e?.code}, expected NotFound`);
      }
      continue;
    }
    try {
      const node = await group.open(child);
      const isArr = api.ShardedArray ? node instanceof api.ShardedArray : "shape" in node;
      if (kind === "array" && !isArr) fail(`child ${child} should be an array`);
      if (kind === "group" && isArr) fail(`child ${child} should be a group`);
      const want = joinUrl(url, child);
      if (node.url.replace(/\/+$/, "") !== want) fail(`child ${child} url ${node.url} != ${want}`);
      if (kind === "array") {
        const a = await group.openArray(child);
        if (!eqArr(Array.from(a.shape), Array.from(node.shape))) fail(`child ${child}: openArray shape differs`);
        a.close?.();
        node.close?.();
      } else {
        try {
          await group.openArray(child);
          fail(`group.openArray(${child}) on a group did not reject`);
        } catch (e) {
          if (e?.code !== "NotAnArray") fail(`group.openArray(${child}): code ${e?.code}, expected NotAnArray`);
        }
      }
    } catch (e) {
      fail(`child ${child} (${kind}) failed: ${errText(e)}`);
    }
  }
  // open with the `path` option gives the same node
  checks++;
  try {
    const [child] = Object.keys(g.children ?? {});
    // Not for the draft layout, whose URL must be the store root.
    if (child !== undefined && !g.open && group.format !== "zarr3-draft") {
      const base = joinUrl(baseUrl, "");
      const node = await api.open(base + "/", { ...openOptions, path: `/${g.path}/${child}/` });
      if (node.url.replace(/\/+$/, "") !== joinUrl(url, child)) fail(`open(base, {path}) url ${node.url}`);
      node.close?.();
    }
  } catch (e) {
    fail(`open(base, {path}) failed: ${errText(e)}`);
  }
  return { failures, checks };
}

export async function checkFixtures(api, baseUrl, manifest, expectedLoader, options = {}) {
  const maxReports = options.maxReports ?? 5;
  const only = options.cases ? new Set(options.cases) : null;
  if (only) {
    // A name that matches nothing would check nothing and pass: an error in the caller.
    const known = new Set((manifest.cases ?? []).map((c) => c.name));
    if (options.groups !== false) for (const g of manifest.groups ?? []) known.add(`group:${g.path}`);
    const unknown = [...only].filter((n) => !known.has(n));
    if (unknown.length) throw new Error(`checkFixtures: no case named ${unknown.map((n) => JSON.stringify(n)).join(", ")} in the manifest`);
  }
  // Cases are independent: a few at a time (their reads overlap each other's waits), results
  // in manifest order.
  const cases = (manifest.cases ?? []).filter((c) => !only || only.has(c.name));
  const caseResults = new Array(cases.length);
  let next = 0;
  const lane = async () => {
    while (next < cases.length) {
      const k = next++;
      const c = cases[k];
      let r;
      const t0 = performance.now();
      try {
        r = await checkArrayCase(api, baseUrl, c, expectedLoader, maxReports, options.open ?? {}, options.chunksInFlight ?? 1);
      } catch (e) {
        r = { failures: [`${c.name}: unexpected exception ${errText(e)}`], checks: 0 };
      }
      caseResults[k] = { name: c.name, ok: r.failures.length === 0, failures: r.failures, checks: r.checks, ms: Math.round(performance.now() - t0) };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, lane));
  const results = [...caseResults];
  if (options.groups !== false) {
    for (const g of manifest.groups ?? []) {
      const name = `group:${g.path}`;
      if (only && !only.has(name)) continue;
      let r;
      try {
        r = await checkGroupCase(api, baseUrl, g, options.open ?? {});
      } catch (e) {
        r = { failures: [`${name}: unexpected exception ${errText(e)}`], checks: 0 };
      }
      results.push({ name, ok: r.failures.length === 0, failures: r.failures, checks: r.checks });
    }
  }
  const failures = results.flatMap((r) => r.failures);
  const passed = results.filter((r) => r.ok).length;
  return { passed, failed: results.length - passed, failures, count: results.length, results, workerJobs };
}
