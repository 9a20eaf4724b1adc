// Pixels: colormaps, contrast, label colours, and cutting a 2D plane out of a decoded chunk.
//
// Colour of a value v with contrast limits [lo, hi] and a 256-entry colormap:
//   t = clamp((v - lo) / (hi - lo), 0, 1), entry = round(t * 255)
// (the grey map's entry k is (k, k, k)). NaN and label 0 are transparent (the background shows).
// Pixels are packed as little-endian RGBA in a Uint32Array, the layout of ImageData.

const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Pack r, g, b, a (0..255) into one ImageData pixel. */
export function rgba(r, g, b, a = 255) {
  return LITTLE ? ((a << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | a) >>> 0;
}

/** Unpack a pixel into [r, g, b, a]. */
export function unpack(p) {
  return LITTLE
    ? [p & 255, (p >>> 8) & 255, (p >>> 16) & 255, p >>> 24]
    : [p >>> 24, (p >>> 16) & 255, (p >>> 8) & 255, p & 255];
}

// --- colormaps --------------------------------------------------------------------------------

function srgbGamma(c) {
  return c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;
}

/** OKLab (Ottosson 2020) → linear sRGB. */
function oklabToLinear(L, a, b) {
  const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
  const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
  const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
  return [
    4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
    -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
    -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s,
  ];
}

/** An sRGB colour of OKLCh lightness L and hue h (degrees), chroma reduced until in gamut. */
function oklch(L, C, h) {
  const rad = (h * Math.PI) / 180;
  let c = C;
  for (let i = 0; i < 40; i++) {
    const rgb = oklabToLinear(L, c * Math.cos(rad), c * Math.sin(rad));
    if (rgb.every((x) => x >= -1e-4 && x <= 1 + 1e-4)) {
      return rgb.map((x) => Math.round(255 * srgbGamma(Math.min(1, Math.max(0, x)))));
    }
    c *= 0.9;
  }
  const g = Math.round(255 * srgbGamma(L ** 3));
  return [g, g, g];
}

function table(f) {
  const lut = new Uint32Array(256);
  for (let k = 0; k < 256; k++) {
    const [r, g, b] = f(k / 255);
    lut[k] = rgba(r, g, b);
  }
  return lut;
}

/**
 * Colormaps by name. `oklab` is perceptual by construction: its OKLab lightness rises linearly
 * (0.27 → 0.93) while the hue turns blue-violet → teal → yellow, chroma clipped to the gamut.
 * `fire` does the same from black through red to pale yellow. `labels` is not a ramp: every
 * integer value gets a hashed colour (see labelColour).
 */
export const COLORMAPS = {
  grey: { label: "grey", lut: table((t) => [255 * t, 255 * t, 255 * t].map(Math.round)) },
  oklab: { label: "perceptual (OKLab)", lut: table((t) => oklch(0.27 + 0.66 * t, 0.09 + 0.08 * t, 285 - 180 * t)) },
  fire: { label: "fire", lut: table((t) => oklch(0.08 + 0.9 * t, 0.22 * Math.sin(Math.PI * Math.min(1, t * 1.15)), 25 + 75 * t)) },
  labels: { label: "labels (hashed)", lut: null },
};

// --- label colours ----------------------------------------------------------------------------

function hslToRgb(h, s, l) {
  const f = (n) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/**
 * Colour of an integer label given as its 64-bit two's complement words (lo, hi, unsigned 32-bit
 * each). 0 is transparent; any other value gets a bright colour from a 32-bit mix of both words,
 * so labels beyond 2^53 (uint64 ids) keep distinct colours.
 */
export function labelColour(lo, hi) {
  if (lo === 0 && hi === 0) return 0;
  let h = Math.imul(lo ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h ^ hi, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x27d4eb2f);
  h ^= h >>> 15;
  const [r, g, b] = hslToRgb((h & 0xffff) / 65536, 0.55 + ((h >>> 16) & 255) / 640, 0.45 + (h >>> 24) / 1275);
  return rgba(r, g, b);
}

// --- plane extraction -------------------------------------------------------------------------

function halfToFloat(bits) {
  const s = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/**
 * The 2D plane of a decoded chunk at the local indices `fixed` (one per axis; ignored for the
 * two displayed axes), rows along `vAxis`, columns along `hAxis`.
 * Returns { values, w, h, copied }: values is a view into the chunk when the plane is already
 * contiguous (copied = false). float16 raw bits become a Float32Array.
 */
export function extractPlane(chunk, hAxis, vAxis, fixed, dtype) {
  const { data, shape, stride } = chunk;
  const w = shape[hAxis];
  const h = shape[vAxis];
  let base = 0;
  for (let k = 0; k < shape.length; k++) if (k !== hAxis && k !== vAxis) base += fixed[k] * stride[k];
  const sh = stride[hAxis];
  const sv = stride[vAxis];
  const half = dtype === "float16" && data instanceof Uint16Array;
  if (!half && sh === 1 && sv === w) return { values: data.subarray(base, base + w * h), w, h, copied: false };
  const out = half ? new Float32Array(w * h) : new data.constructor(w * h);
  let o = 0;
  for (let y = 0; y < h; y++) {
    let i = base + y * sv;
    if (half) for (let x = 0; x < w; x++, i += sh) out[o++] = halfToFloat(data[i]);
    else if (sh === 1) {
      out.set(data.subarray(i, i + w), o);
      o += w;
    } else for (let x = 0; x < w; x++, i += sh) out[o++] = data[i];
  }
  return { values: out, w, h, copied: true };
}

// --- colouring --------------------------------------------------------------------------------

/** Value domain of small integer dtypes (coloured through a full lookup table). */
const SMALL = {
  bool: [0, 1],
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
};

export function isInteger(dtype) {
  return dtype === "bool" || /int/.test(dtype);
}

/**
 * Colour state: colormap, contrast limits and the lookup tables derived from them. `version`
 * changes whenever the colours change, so tiles know when to recolour.
 */
export class Colouring {
  constructor(dtype) {
    this.dtype = dtype;
    this.name = dtype === "uint64" ? "labels" : "grey";
    this.lo = 0;
    this.hi = SMALL[dtype] ? SMALL[dtype][1] : 1;
    this.version = 1;
    this.full = null; // full-domain LUT for SMALL dtypes, built lazily per version
    this.fullVersion = 0;
  }

  set({ name = this.name, lo = this.lo, hi = this.hi }) {
    if (!(name in COLORMAPS)) name = "grey";
    if (name === this.name && lo === this.lo && hi === this.hi) return false;
    Object.assign(this, { name, lo, hi });
    this.version++;
    return true;
  }

  /** Colour of one value (number or bigint), as a packed pixel. */
  pixel(v) {
    if (this.name === "labels") {
      const b = BigInt.asUintN(64, typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v))));
      return labelColour(Number(b & 0xffffffffn), Number(b >> 32n));
    }
    const x = Number(v);
    if (Number.isNaN(x)) return 0;
    const lut = COLORMAPS[this.name].lut;
    const d = this.hi - this.lo;
    let t = d > 0 ? (x - this.lo) / d : x >= this.hi ? 1 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return lut[Math.round(t * 255)];
  }

  #fullLut() {
    if (this.fullVersion !== this.version) {
      const [min, max] = SMALL[this.dtype];
      const lut = new Uint32Array(max - min + 1);
      for (let v = min; v <= max; v++) lut[v - min] = this.pixel(v);
      this.full = lut;
      this.fullVersion = this.version;
    }
    return this.full;
  }

  /** Colour `values` into `out` (a Uint32Array of the same length). */
  colour(values, out) {
    const n = out.length;
    if (SMALL[this.dtype] && !(values instanceof Float32Array)) {
      const lut = this.#fullLut();
      const off = -SMALL[this.dtype][0];
      for (let i = 0; i < n; i++) out[i] = lut[values[i] + off];
      return;
    }
    if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
      const words = new Uint32Array(values.buffer, values.byteOffset, n * 2);
      if (this.name === "labels") {
        for (let i = 0; i < n; i++) out[i] = labelColour(words[2 * i], words[2 * i + 1]);
      } else {
        for (let i = 0; i < n; i++) out[i] = this.pixel(values[i]);
      }
      return;
    }
    if (this.name === "labels") {
      // 32-bit (or smaller) integers and floats: the 64-bit two's complement of the integer part
      for (let i = 0; i < n; i++) {
        const v = Math.trunc(values[i]);
        out[i] = Number.isFinite(v) ? labelColour(v >>> 0, Math.floor(v / 4294967296) >>> 0) : 0;
      }
      return;
    }
    const lut = COLORMAPS[this.name].lut;
    const lo = this.lo;
    const d = this.hi - this.lo;
    const k = d > 0 ? 255 / d : 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v !== v) {
        out[i] = 0;
        continue;
      }
      let e = d > 0 ? Math.round((v - lo) * k) : v >= this.hi ? 255 : 0;
      e = e < 0 ? 0 : e > 255 ? 255 : e;
      out[i] = lut[e];
    }
  }
}

/**
 * Contrast limits from data: the lo/hi quantiles of the given planes' finite values (sampled to
 * at most ~256k values).
 */
export function autoLimits(planes, qlo = 0.005, qhi = 0.998) {
  let total = 0;
  for (const p of planes) total += p.values.length;
  if (total === 0) return null;
  const step = Math.max(1, Math.floor(total / 262144));
  const sample = new Float64Array(Math.ceil(total / step) + planes.length);
  let n = 0;
  for (const p of planes) {
    const vals = p.values;
    for (let i = 0; i < vals.length; i += step) {
      const x = Number(vals[i]);
      if (Number.isFinite(x)) sample[n++] = x;
    }
  }
  if (n === 0) return null;
  const s = sample.subarray(0, n).sort();
  let lo = s[Math.floor(qlo * (n - 1))];
  let hi = s[Math.ceil(qhi * (n - 1))];
  if (hi <= lo) {
    lo = s[0];
    hi = s[n - 1];
  }
  if (hi <= lo) hi = lo + 1;
  return { lo, hi, min: s[0], max: s[n - 1] };
}

// --- colour composites ------------------------------------------------------------------------

/** "FF00FF" (OME `omero.channels[].color`) → [r, g, b], or null. */
export function hexColour(s) {
  const m = /^#?([0-9a-f]{6})$/i.exec(String(s ?? "").trim());
  if (!m) return null;
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/**
 * Colours of several channels added up: channel c's entry e = round(t·255) (t as in a colormap,
 * from its own limits) adds e·colour/255 to the pixel, clamped at 255. An RGB image is three
 * channels coloured red, green, blue; YCbCr samples (`ycbcr`) are turned into RGB first (JPEG's
 * full-range equations), then limited per component. A channel of role "alpha" gives the pixel's
 * opacity (`premultiplied`: the colours were stored multiplied by it). A pixel whose channels are
 * all NaN is transparent.
 */
export class CompositeColouring {
  /** @param {{label: string, colour: number[] | null, role?: string, lo: number, hi: number, visible?: boolean}[]} channels */
  constructor(channels, { ycbcr = false, premultiplied = false } = {}) {
    this.channels = channels.map((c) => ({ visible: true, role: "colour", ...c }));
    this.ycbcr = ycbcr;
    this.premultiplied = premultiplied;
    this.version = 1;
  }

  /** Change channel `i` ({lo, hi, visible}); true when something changed. */
  set(i, { lo, hi, visible }) {
    const c = this.channels[i];
    if (!c) return false;
    const next = { lo: lo ?? c.lo, hi: hi ?? c.hi, visible: visible ?? c.visible };
    if (next.lo === c.lo && next.hi === c.hi && next.visible === c.visible) return false;
    Object.assign(c, next);
    this.version++;
    return true;
  }

  /** The same limits for every channel. */
  setAll({ lo, hi }) {
    let changed = false;
    for (let i = 0; i < this.channels.length; i++) changed = this.set(i, { lo, hi }) || changed;
    return changed;
  }

  /** Colour `planes` (one values array per channel, same length) into `out`. */
  colour(planes, out) {
    const n = out.length;
    const acc = new Float32Array(n * 3);
    const seen = new Uint8Array(n);
    let alpha = null;
    const entry = (c, v) => {
      const d = c.hi - c.lo;
      let e = d > 0 ? Math.round(((v - c.lo) * 255) / d) : v >= c.hi ? 255 : 0;
      return e < 0 ? 0 : e > 255 ? 255 : e;
    };
    // YCbCr → RGB (ITU-R BT.601 full range, as JPEG and libtiff's TIFFYCbCrToRGB defaults)
    let source = planes;
    if (this.ycbcr && planes.length >= 3) {
      const [Y, Cb, Cr] = planes;
      const rgb = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
      for (let i = 0; i < n; i++) {
        const y = Number(Y[i]), cb = Number(Cb[i]) - 128, cr = Number(Cr[i]) - 128;
        rgb[0][i] = y + 1.402 * cr;
        rgb[1][i] = y - 0.344136 * cb - 0.714136 * cr;
        rgb[2][i] = y + 1.772 * cb;
      }
      source = [...rgb, ...planes.slice(3)];
    }
    this.channels.forEach((c, k) => {
      const vals = source[k];
      if (!vals || !c.visible) return;
      if (c.role === "alpha") {
        alpha = new Uint8Array(n);
        for (let i = 0; i < n; i++) {
          const v = Number(vals[i]);
          alpha[i] = v === v ? entry(c, v) : 0;
        }
        return;
      }
      const [r, g, b] = c.colour ?? [255, 255, 255];
      for (let i = 0; i < n; i++) {
        const v = Number(vals[i]);
        if (v !== v) continue;
        const e = entry(c, v);
        acc[3 * i] += e * r;
        acc[3 * i + 1] += e * g;
        acc[3 * i + 2] += e * b;
        seen[i] = 1;
      }
    });
    for (let i = 0; i < n; i++) {
      if (!seen[i]) {
        out[i] = 0;
        continue;
      }
      const a = alpha ? alpha[i] : 255;
      const k = this.premultiplied && a > 0 && a < 255 ? 255 / a : 1;
      const ch = (x) => {
        const y = Math.round((x / 255) * k);
        return y > 255 ? 255 : y;
      };
      out[i] = rgba(ch(acc[3 * i]), ch(acc[3 * i + 1]), ch(acc[3 * i + 2]), a);
    }
  }
}
