// The element (y, x) of the synthetic arrays of synth.mjs (level k: value(y << k, x << k)); apart
// so that pages can import it.
export function value(y, x) {
  return (y * 3 + x * 5 + (y >> 10) * 17) & 255;
}
