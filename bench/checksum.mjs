// Checksums of decoded output, the same definition as bench/generate.py (which computes the
// writer's with numpy): used by the benchmark page and by bench/node-workers.mjs.

const MOD = 65521;

/** Raw-bit words of a typed array (uint8/uint16 zero-extended, float32 bits). */
function wordsOf(data) {
  if (data instanceof Float32Array) return new Uint32Array(data.buffer, data.byteOffset, data.length);
  return data;
}

/** [h, s] of the C-ordered box `shape` of `data` laid out with element strides `stride`. */
export function checksum(data, shape, stride) {
  const w = wordsOf(data);
  const n = shape.reduce((a, b) => a * b, 1);
  const c = cStrides(shape);
  let h = 0;
  let s = 0;
  if (shape.every((d, k) => d === 1 || stride[k] === c[k])) {
    let k = 1;
    for (let i = 0; i < n; i++) {
      const x = w[i];
      h = (h + Math.imul(x, k)) >>> 0;
      s = (s + x) >>> 0;
      if (++k > MOD) k = 1;
    }
    return [h, s];
  }
  // Strided (e.g. a transposed chunk): walk it in C order.
  const idx = new Array(shape.length).fill(0);
  let k = 1;
  for (let i = 0; i < n; i++) {
    let at = 0;
    for (let d = 0; d < shape.length; d++) at += idx[d] * stride[d];
    const x = w[at];
    h = (h + Math.imul(x, k)) >>> 0;
    s = (s + x) >>> 0;
    if (++k > MOD) k = 1;
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return [h, s];
}

function cStrides(shape) {
  const s = shape.map(() => 1);
  for (let k = shape.length - 2; k >= 0; k--) s[k] = s[k + 1] * shape[k + 1];
  return s;
}

