//! Decoded values → display pixels, for the map adapters (`shardfetch/openlayers`,
//! `shardfetch/maplibre`): bands composed as `ol/source/GeoTIFF` composes them, and square RGBA
//! tiles resampled and coloured for MapLibre. A module of its own, loaded by the adapters only
//! (a page that reads arrays without them does not fetch it).
//!
//! `decode(input, [op, p])`: the input starts with `p` little-endian f64 parameters, then the
//! values the reads returned (little-endian, as every read returns them); op 1 composes
//! ([`compose`]), op 2 paints ([`paint`]). Every index is checked before it is read, every size
//! before it is allocated.
#![forbid(unsafe_code)]
extern crate alloc;

use abi::{count, Failure};
use alloc::format;
use alloc::vec::Vec;

abi::export_decoder!(decode);

type Result<T> = core::result::Result<T, Failure>;

fn err<T>(message: impl Into<alloc::string::String>) -> Result<T> {
    Err(Failure::corrupt(message))
}

/// `n` zero bytes, or `TooLarge`.
fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Failure::too_large(format!("cannot allocate {n} bytes")))?;
    v.resize(n, 0);
    Ok(v)
}

/// The module's entry: `args[0]` the operation, `args[1]` how many f64 parameters lead the input.
pub fn decode(input: &[u8], args: &[f64]) -> Result<Vec<u8>> {
    let n = count(args, 1, "parameters")?;
    if n > input.len() as u64 {
        return err(format!("{n} parameters in {} bytes", input.len()));
    }
    let n = n as usize;
    let head = n
        .checked_mul(8)
        .filter(|&h| h <= input.len())
        .ok_or_else(|| Failure::corrupt(format!("{n} parameters in {} bytes", input.len())))?;
    let params: Vec<f64> = input[..head]
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        .collect();
    let payload = &input[head..];
    match count(args, 0, "operation")? {
        1 => compose(&params, payload),
        2 => paint(&params, payload),
        op => Err(Failure::unsupported(format!("operation {op}"))),
    }
}

/// A parameter as a count (a byte or element index, a size).
fn whole(p: &[f64], i: usize, what: &str) -> Result<u64> {
    count(p, i, what)
}

/// A parameter as a number.
fn num(p: &[f64], i: usize) -> Result<f64> {
    p.get(i).copied().ok_or_else(|| Failure::corrupt(format!("parameter {i} missing")))
}

/// The sample type of code `c` (the order of [`Sample::ALL`]).
fn sample(c: u64) -> Result<Sample> {
    Sample::ALL.get(c as usize).copied().ok_or_else(|| Failure::unsupported(format!("sample type {c}")))
}

/// `bytes[start..start + len]`, checked.
fn slice(bytes: &[u8], start: u64, len: u64) -> Result<&[u8]> {
    let end = start.checked_add(len).filter(|&e| e <= bytes.len() as u64);
    match end {
        Some(e) => Ok(&bytes[start as usize..e as usize]),
        None => err(format!("bytes {start}+{len} past the {} given", bytes.len())),
    }
}

/// Op 1: `[width, height, normalize, alpha, bands]`, then per band `[hasNodata, nodata, gain,
/// bias, given, sample, start, length, offset, rowStride, colStride, rows, cols, flip]`; a band
/// given reads its values from `payload[start..start + length]`.
pub fn compose(p: &[f64], payload: &[u8]) -> Result<Vec<u8>> {
    const PER: usize = 14;
    let (w, h) = (whole(p, 0, "width")?, whole(p, 1, "height")?);
    let (normalize, alpha) = (num(p, 2)? != 0.0, num(p, 3)? != 0.0);
    let nb = whole(p, 4, "bands")?.min(p.len() as u64) as usize;
    if p.len() != 5 + nb * PER || w > u32::MAX as u64 || h > u32::MAX as u64 {
        return err(format!("{} parameters for {nb} bands of {w}×{h}", p.len()));
    }
    let band = |k: usize| &p[5 + k * PER..5 + (k + 1) * PER];
    let styles = (0..nb)
        .map(|k| {
            let b = band(k);
            BandStyle { nodata: (b[0] != 0.0).then_some(b[1]), gain: b[2], bias: b[3] }
        })
        .collect();
    let mut c = Compose::new(w as u32, h as u32, styles, normalize, alpha)?;
    for k in 0..nb {
        let b = band(k);
        if b[4] == 0.0 {
            continue;
        }
        let values = Values {
            bytes: slice(payload, whole(b, 6, "start")?, whole(b, 7, "length")?)?,
            sample: sample(whole(b, 5, "sample")?)?,
        };
        let at = BandAt {
            offset: whole(b, 8, "offset")?,
            sy: whole(b, 9, "row stride")?,
            sx: whole(b, 10, "column stride")?,
            rows: whole(b, 11, "rows")?,
            cols: whole(b, 12, "columns")?,
            flip: b[13] != 0.0,
        };
        c.band(k, values, at)?;
    }
    c.finish()
}

/// Op 2: `[size, sample, bandStride, rowStride, colStride, r0, r1, c0, c1, cx, cy, scale, lo,
/// span, hasNodata, nodata, hasMap, bands, band…]`; the payload a colour map's 768 bytes when
/// `hasMap`, then the values.
pub fn paint(p: &[f64], payload: &[u8]) -> Result<Vec<u8>> {
    if p.len() < 18 {
        return err(format!("{} parameters for a tile", p.len()));
    }
    let nb = whole(p, 17, "bands")?.min(p.len() as u64) as usize;
    if p.len() != 18 + nb {
        return err(format!("{} parameters for {nb} bands", p.len()));
    }
    let bands = (0..nb).map(|k| whole(p, 18 + k, "band")).collect::<Result<Vec<u64>>>()?;
    let size = whole(p, 0, "size")?;
    if size > 4096 {
        return Err(Failure::too_large(format!("a tile of {size}² pixels")));
    }
    let (lut, values) = if p[16] != 0.0 {
        if payload.len() < 768 {
            return err("no colour map");
        }
        payload.split_at(768)
    } else {
        (&payload[..0], payload)
    };
    let tile = Tile {
        size: size as u32,
        values: Values { bytes: values, sample: sample(whole(p, 1, "sample")?)? },
        bands: &bands,
        strides: [whole(p, 2, "band stride")?, whole(p, 3, "row stride")?, whole(p, 4, "column stride")?],
        rows: [whole(p, 5, "r0")?, whole(p, 6, "r1")?],
        cols: [whole(p, 7, "c0")?, whole(p, 8, "c1")?],
        corner: [p[9], p[10]],
        scale: p[11],
        lo: p[12],
        span: p[13],
        nodata: (p[14] != 0.0).then_some(p[15]),
    };
    tile.paint(if p[16] != 0.0 { Paint::Map(lut) } else { Paint::Rgb })
}

/// A numeric sample type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
}

impl Sample {
    /// In the order of their codes (`shardfetch`'s `raster.ts` spells the same list; a test in
    /// `tests/js/decoders.test.mjs` reads each type through both).
    pub const ALL: [Sample; 11] = [
        Sample::U8,
        Sample::I8,
        Sample::U16,
        Sample::I16,
        Sample::U32,
        Sample::I32,
        Sample::U64,
        Sample::I64,
        Sample::F16,
        Sample::F32,
        Sample::F64,
    ];

    fn size(self) -> usize {
        match self {
            Sample::U8 | Sample::I8 => 1,
            Sample::U16 | Sample::I16 | Sample::F16 => 2,
            Sample::U32 | Sample::I32 | Sample::F32 => 4,
            Sample::U64 | Sample::I64 | Sample::F64 => 8,
        }
    }
}

/// A read's values: its bytes and their type.
#[derive(Clone, Copy)]
pub struct Values<'a> {
    pub bytes: &'a [u8],
    pub sample: Sample,
}

impl Values<'_> {
    fn len(&self) -> u64 {
        (self.bytes.len() / self.sample.size()) as u64
    }

    /// Element `i` as a number (checked by the caller: `i < len()`).
    fn at(&self, i: u64) -> f64 {
        let n = self.sample.size();
        let o = i as usize * n;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&self.bytes[o..o + n]);
        match self.sample {
            Sample::U8 => b[0] as f64,
            Sample::I8 => b[0] as i8 as f64,
            Sample::U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            Sample::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            Sample::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Sample::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Sample::F16 => shardfetch_kernels::half::to_f64(u16::from_le_bytes([b[0], b[1]])),
            Sample::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Sample::U64 => u64::from_le_bytes(b) as f64,
            Sample::I64 => i64::from_le_bytes(b) as f64,
            Sample::F64 => f64::from_le_bytes(b),
        }
    }

    /// `Ok` when `offset + (rows-1)·sy + (cols-1)·sx` is an element of these values.
    fn covers(&self, offset: u64, rows: u64, cols: u64, sy: u64, sx: u64) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let last = (rows - 1)
            .checked_mul(sy)
            .and_then(|a| (cols - 1).checked_mul(sx).and_then(|b| a.checked_add(b)))
            .and_then(|a| a.checked_add(offset));
        match last {
            Some(l) if l < self.len() => Ok(()),
            _ => err(format!(
                "a {rows}×{cols} box at element {offset} (strides {sy}, {sx}) is past the {} values read",
                self.len()
            )),
        }
    }
}

/// Whether `v` is the nodata value `nd` (NaN matches NaN).
fn is_nodata(v: f64, nd: f64) -> bool {
    if nd.is_nan() {
        v.is_nan()
    } else {
        v == nd
    }
}

/// The bytes of `pixels × per` values of `size` bytes, if a tile that large is allowed.
fn tile_bytes(pixels: u64, per: u64, size: u64) -> Result<usize> {
    match pixels.checked_mul(per).and_then(|n| n.checked_mul(size)).filter(|&n| n <= u32::MAX as u64) {
        Some(n) => Ok(n as usize),
        None => Err(Failure::too_large(format!("a tile of {pixels} pixels × {per} bands is too large"))),
    }
}

/// A zeroed tile of `pixels × per` values of `size` bytes.
fn buffer(pixels: u64, per: u64, size: u64) -> Result<Vec<u8>> {
    zeroed(tile_bytes(pixels, per, size)?)
}

/// Where one band of a source lies in the values read for a tile: its first element, the
/// strides of a row and a column, how many rows and columns the image has there (the rest of
/// the tile is past it), and whether the rows are stored bottom up.
#[derive(Clone, Copy, Debug)]
pub struct BandAt {
    pub offset: u64,
    pub sy: u64,
    pub sx: u64,
    pub rows: u64,
    pub cols: u64,
    pub flip: bool,
}

/// How a band is drawn: its nodata (also the fill past the image; 0 without one), and the
/// gain and bias that map it to 0–255 when normalising.
#[derive(Clone, Copy, Debug)]
pub struct BandStyle {
    pub nodata: Option<f64>,
    pub gain: f64,
    pub bias: f64,
}

/// A tile of `ol/source/DataTile` composed from bands, as `ol/source/GeoTIFF` composes them:
/// pixel-interleaved, each band `gain·v + bias` clamped to 0–255 as bytes when normalising
/// (else the values as float32), and with `alpha` one more band: 0 where every band holding a
/// nodata is at it, else 255 (a band without nodata counts as data); bands of a transparent
/// pixel left 0.
pub struct Compose {
    width: u64,
    height: u64,
    normalize: bool,
    alpha: bool,
    styles: Vec<BandStyle>,
    /// Per band, the tile's values (row-major), once given.
    planes: Vec<Option<Vec<f64>>>,
}

impl Compose {
    pub fn new(width: u32, height: u32, styles: Vec<BandStyle>, normalize: bool, alpha: bool) -> Result<Compose> {
        let (width, height) = (width as u64, height as u64);
        // Checked once here: every later buffer is at most this size.
        tile_bytes(width * height, styles.len() as u64 + 1, 8)?;
        let planes = styles.iter().map(|_| None).collect();
        Ok(Compose { width, height, normalize, alpha, styles, planes })
    }

    /// Band `k`'s values: `at` in `values`, the tile's pixels past the image its fill.
    pub fn band(&mut self, k: usize, values: Values<'_>, at: BandAt) -> Result<()> {
        let Some(style) = self.styles.get(k).copied() else {
            return err(format!("band {k} of {}", self.styles.len()));
        };
        let (rows, cols) = (at.rows.min(self.height), at.cols.min(self.width));
        values.covers(at.offset, rows, cols, at.sy, at.sx)?;
        let fill = style.nodata.unwrap_or(0.0);
        let pixels = (self.width * self.height) as usize;
        let mut plane = Vec::new();
        if plane.try_reserve_exact(pixels).is_err() {
            return Err(Failure::too_large(format!("cannot allocate a tile of {pixels} values")));
        }
        plane.resize(pixels, fill);
        for i in 0..rows {
            let from = at.offset + (if at.flip { rows - 1 - i } else { i }) * at.sy;
            let row = &mut plane[(i * self.width) as usize..][..cols as usize];
            for (j, p) in row.iter_mut().enumerate() {
                *p = values.at(from + j as u64 * at.sx);
            }
        }
        self.planes[k] = Some(plane);
        Ok(())
    }

    /// The tile: bytes when normalising, else float32 values (little-endian), alpha last.
    pub fn finish(self) -> Result<Vec<u8>> {
        let pixels = self.width * self.height;
        let per = self.styles.len() as u64 + self.alpha as u64;
        let size = if self.normalize { 1 } else { 4 };
        let mut out = buffer(pixels, per, size)?;
        let planes: Vec<&[f64]> = self.planes.iter().map(|p| p.as_deref().unwrap_or(&[])).collect();
        let mut d = 0usize;
        let put = |out: &mut Vec<u8>, d: usize, value: f64| {
            if self.normalize {
                // NaN to 0, as a Uint8Array stores it.
                out[d] = (value.clamp(0.0, 255.0)) as u8;
            } else {
                out[d * 4..d * 4 + 4].copy_from_slice(&(value as f32).to_le_bytes());
            }
        };
        for px in 0..pixels as usize {
            let mut transparent = self.alpha;
            for (k, b) in self.styles.iter().enumerate() {
                let v = planes[k].get(px).copied().unwrap_or(b.nodata.unwrap_or(0.0));
                let value = if self.normalize { b.gain * v + b.bias } else { v };
                let data = match b.nodata {
                    Some(nd) => !is_nodata(v, nd),
                    None => true,
                };
                if !self.alpha || data {
                    transparent = false;
                    put(&mut out, d, value);
                }
                d += 1;
            }
            if self.alpha {
                if !transparent {
                    put(&mut out, d, 255.0);
                }
                d += 1;
            }
        }
        Ok(out)
    }
}

/// How a MapLibre tile colours its pixels: `(v - lo) / span` over 0–255, then three or four
/// bands as RGB(A), or one through a 256-entry colour map (RGB triples).
pub enum Paint<'a> {
    Rgb,
    Map(&'a [u8]),
}

/// A square tile of `size` pixels of a raster read as `values` (strides `sb` between bands,
/// `sy`, `sx`), its box at rows `r0..r1`, columns `c0..c1` of the level: tile pixel (i, j)
/// shows the level's pixel (⌊cx + (i + ½)·s⌋, ⌊cy + (j + ½)·s⌋) — nearest sampling, `s`
/// level pixels per tile pixel — transparent outside the box, where every band is NaN or
/// `nodata`. RGBA bytes, as a `Uint8ClampedArray` rounds them.
pub struct Tile<'a> {
    pub size: u32,
    pub values: Values<'a>,
    pub bands: &'a [u64],
    pub strides: [u64; 3],
    pub rows: [u64; 2],
    pub cols: [u64; 2],
    pub corner: [f64; 2],
    pub scale: f64,
    pub lo: f64,
    pub span: f64,
    pub nodata: Option<f64>,
}

impl Tile<'_> {
    pub fn paint(&self, paint: Paint<'_>) -> Result<Vec<u8>> {
        let n = self.size as u64;
        let mut out = buffer(n * n, 4, 1)?;
        let [sb, sy, sx] = self.strides;
        let ([r0, r1], [c0, c1]) = (self.rows, self.cols);
        if r0 >= r1 || c0 >= c1 {
            return Ok(out);
        }
        if let Paint::Map(lut) = paint {
            if lut.len() != 256 * 3 {
                return err(format!("a colour map of {} bytes, not 768", lut.len()));
            }
        }
        let want = match paint {
            Paint::Rgb => 3..=4,
            Paint::Map(_) => 1..=1,
        };
        if !want.contains(&self.bands.len()) {
            return err(format!("{} bands to draw", self.bands.len()));
        }
        let top = self.bands.iter().max().copied().unwrap_or(0);
        let first = top.checked_mul(sb).ok_or_else(|| Failure::corrupt("band stride overflows"))?;
        self.values.covers(first, r1 - r0, c1 - c0, sy, sx)?;
        let at = |c: f64, i: u64| (c + (i as f64 + 0.5) * self.scale).floor();
        let clamp8 = |x: f64| if x.is_nan() { 0 } else { x.clamp(0.0, 255.0).round_ties_even() as u8 };
        let mut v = [0f64; 4];
        for j in 0..n {
            let row = at(self.corner[1], j);
            if !(row >= r0 as f64 && row < r1 as f64) {
                continue;
            }
            for i in 0..n {
                let col = at(self.corner[0], i);
                if !(col >= c0 as f64 && col < c1 as f64) {
                    continue;
                }
                let p = (row as u64 - r0) * sy + (col as u64 - c0) * sx;
                for (k, b) in self.bands.iter().enumerate() {
                    v[k] = self.values.at(b * sb + p);
                }
                let v = &v[..self.bands.len()];
                if v.iter().all(|&x| x.is_nan() || self.nodata == Some(x)) {
                    continue;
                }
                let o = ((j * n + i) * 4) as usize;
                let scaled = |x: f64| (x - self.lo) / self.span;
                match paint {
                    Paint::Rgb => {
                        for k in 0..3 {
                            out[o + k] = clamp8(scaled(v[k]) * 255.0);
                        }
                        out[o + 3] = if v.len() > 3 { clamp8(scaled(v[3]) * 255.0) } else { 255 };
                    }
                    Paint::Map(lut) => {
                        let t = scaled(v[0]).clamp(0.0, 1.0);
                        // Math.round: halves up; NaN (a NaN bound) to entry 0.
                        let e = if t.is_nan() { 0 } else { 3 * ((t * 255.0 + 0.5).floor() as usize) };
                        out[o..o + 3].copy_from_slice(&lut[e..e + 3]);
                        out[o + 3] = 255;
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16s(v: &[u16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn compose_normalises_flips_and_fills_past_the_image() {
        // A 2×3 image of one band in a 4×4 tile, stored bottom up; nodata 7.
        let bytes = u16s(&[1, 2, 3, 4, 7, 600]);
        let values = Values { bytes: &bytes, sample: Sample::U16 };
        let style = BandStyle { nodata: Some(7.0), gain: 0.5, bias: 1.0 };
        let mut c = Compose::new(4, 4, alloc::vec![style], true, true).unwrap();
        c.band(0, values, BandAt { offset: 0, sy: 3, sx: 1, rows: 2, cols: 3, flip: true }).unwrap();
        let t = c.finish().unwrap();
        // Row 0 of the tile is the stored row 1: 4 → 3, 7 → nodata, 600 → 301 clamped to 255.
        assert_eq!(&t[0..6], &[3, 255, 0, 0, 255, 255]);
        // Row 1 is the stored row 0: 1 → 1.5 stored as 1; 2 → 2; 3 → 2.5 stored as 2.
        assert_eq!(&t[8..14], &[1, 255, 2, 255, 2, 255]);
        // Past the image: the fill is the nodata, so transparent.
        assert_eq!(&t[6..8], &[0, 0]);
        assert!(t[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn compose_floats_and_nan_nodata() {
        let bytes: Vec<u8> = [1.5f32, f32::NAN].iter().flat_map(|x| x.to_le_bytes()).collect();
        let values = Values { bytes: &bytes, sample: Sample::F32 };
        let style = BandStyle { nodata: Some(f64::NAN), gain: 1.0, bias: 0.0 };
        let mut c = Compose::new(2, 1, alloc::vec![style], false, true).unwrap();
        c.band(0, values, BandAt { offset: 0, sy: 2, sx: 1, rows: 1, cols: 2, flip: false }).unwrap();
        let t = c.finish().unwrap();
        let f: Vec<f32> = t.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        assert_eq!(f, [1.5, 255.0, 0.0, 0.0]);
    }

    #[test]
    fn a_box_past_the_values_is_an_error_not_a_panic() {
        let bytes = u16s(&[1, 2, 3]);
        let values = Values { bytes: &bytes, sample: Sample::U16 };
        let style = BandStyle { nodata: None, gain: 1.0, bias: 0.0 };
        let mut c = Compose::new(2, 2, alloc::vec![style], true, false).unwrap();
        let e = c.band(0, values, BandAt { offset: 0, sy: 2, sx: 1, rows: 2, cols: 2, flip: false }).unwrap_err();
        assert_eq!(e.code, abi::CORRUPT);
        assert_eq!(
            Compose::new(u32::MAX, u32::MAX, alloc::vec![style], true, false).err().map(|e| e.code),
            Some(abi::TOO_LARGE)
        );
        let t = Tile {
            size: 2,
            values,
            bands: &[0],
            strides: [0, 2, 1],
            rows: [0, 2],
            cols: [0, 2],
            corner: [0.0, 0.0],
            scale: 1.0,
            lo: 0.0,
            span: 1.0,
            nodata: None,
        };
        assert_eq!(t.paint(Paint::Map(&[0; 768])).unwrap_err().code, abi::CORRUPT);
    }

    #[test]
    fn tiles_sample_nearest_and_round_like_a_clamped_array() {
        // A 2×2 level of RGB u8 (band-major), drawn 4×4 at 2 tile pixels per level pixel.
        let bytes = [0u8, 10, 20, 30, 255, 128, 64, 32, 1, 2, 3, 4];
        let values = Values { bytes: &bytes, sample: Sample::U8 };
        let t = Tile {
            size: 4,
            values,
            bands: &[0, 1, 2],
            strides: [4, 2, 1],
            rows: [0, 2],
            cols: [0, 2],
            corner: [0.0, 0.0],
            scale: 0.5,
            lo: 0.0,
            span: 2.0,
            nodata: None,
        };
        let out = t.paint(Paint::Rgb).unwrap();
        // Pixel (0, 0): level (0, 0) = (0, 255, 1) / 2 · 255 → (0, 32512.5 → 255, 127.5 → 128).
        assert_eq!(&out[0..4], &[0, 255, 128, 255]);
        // Pixel (3, 3): level (1, 1) = (30, 32, 4) → (255, 255, 255).
        assert_eq!(&out[60..64], &[255, 255, 255, 255]);
        // Colour map: (v - 0) / 255 over a ramp whose entry e is (e, 255 - e, 0).
        let lut: Vec<u8> = (0..=255u8).flat_map(|e| [e, 255 - e, 0]).collect();
        let t = Tile { span: 255.0, bands: &[1], nodata: Some(64.0), ..t };
        let out = t.paint(Paint::Map(&lut)).unwrap();
        // Band 1 at level (0, 0) is 255: entry 255; at (1, 0) 64, its nodata: transparent.
        assert_eq!(&out[0..4], &[255, 0, 0, 255]);
        assert_eq!(&out[32..36], &[0, 0, 0, 0]);
        // At (0, 1) 128: 128 / 255 · 255 = 128 (Math.round's halves up elsewhere).
        assert_eq!(&out[8..12], &[128, 127, 0, 255]);
    }
}

#[cfg(test)]
mod entry {
    use super::*;

    /// The input `raster.ts` sends: parameters, then the payload.
    fn input(params: &[f64], payload: &[u8]) -> Vec<u8> {
        params.iter().flat_map(|p| p.to_le_bytes()).chain(payload.iter().copied()).collect()
    }

    #[test]
    fn compose_through_the_entry() {
        // Two bands of one u8 read (band-major, 1×2 each), the second without values (its fill 9).
        let params = [
            2.0, 1.0, 1.0, 0.0, 2.0, 0.0, 0.0, 2.0, 1.0, 1.0, 0.0, 0.0, 4.0, 2.0, 2.0, 1.0, 1.0, 2.0, 0.0, 1.0, 9.0,
            1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ];
        let inp = input(&params, &[10, 20, 30, 40]);
        // Band 0 at element 2 of the read: 30, 40 → ×2 + 1.
        assert_eq!(decode(&inp, &[1.0, params.len() as f64]).unwrap(), [61, 9, 81, 9]);
        assert_eq!(decode(&inp, &[1.0, 4.0]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&inp, &[1.0, 1e6]).unwrap_err().code, abi::CORRUPT);
        assert_eq!(decode(&inp, &[3.0, params.len() as f64]).unwrap_err().code, abi::UNSUPPORTED);
    }

    #[test]
    fn paint_through_the_entry() {
        // A 1×1 level of uint16 7, drawn 2×2 at 1 level pixel per tile pixel: one pixel lit.
        let lut: Vec<u8> = (0..=255u8).flat_map(|e| [e, e, e]).collect();
        let params = [2.0, 2.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 14.0, 0.0, 0.0, 1.0, 1.0, 0.0];
        let mut payload = lut.clone();
        payload.extend_from_slice(&7u16.to_le_bytes());
        let out = decode(&input(&params, &payload), &[2.0, params.len() as f64]).unwrap();
        // 7 / 14 · 255 = 127.5 → entry 128.
        assert_eq!(out, [128, 128, 128, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    /// Whatever the parameters and bytes, an answer or a failure: never a panic (a trap would
    /// stop the module's instance).
    #[test]
    fn any_input_is_an_answer_or_a_failure() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let pick = |r: u64| -> f64 {
            match r % 12 {
                0 => 0.0,
                1 => 1.0,
                2 => 2.0,
                3 => (r >> 8) as f64 % 300.0,
                4 => f64::NAN,
                5 => -1.0,
                6 => 1e18,
                7 => 0.5,
                8 => 14.0,
                9 => 768.0,
                10 => f64::INFINITY,
                _ => (r >> 8) as f64 % 9.0,
            }
        };
        let mut ok = [0u32; 2];
        for round in 0..20_000 {
            let op = 1 + round % 2;
            let n = if op == 1 { 5 + 14 * (next() % 3) } else { 18 + [1, 3, 4, 0, 2][(next() % 5) as usize] };
            let mut params: Vec<f64> = (0..n).map(|_| pick(next())).collect();
            if op == 1 {
                params[4] = ((n - 5) / 14) as f64;
                params[0] = (next() % 20) as f64;
                params[1] = (next() % 20) as f64;
            } else {
                params[17] = (n - 18) as f64;
                params[0] = (next() % 40) as f64;
                params[16] = (n == 19) as u8 as f64;
                for k in (2..9).chain(18..n as usize) {
                    if next() % 4 != 0 {
                        params[k] = (next() % 6) as f64;
                    }
                }
            }
            let payload: Vec<u8> = (0..next() % 2000).map(|_| next() as u8).collect();
            if decode(&input(&params, &payload), &[op as f64, params.len() as f64]).is_ok() {
                ok[op as usize - 1] += 1;
            }
        }
        // Some of each operation get through: the paths past the checks are exercised.
        assert!(ok.iter().all(|&k| k > 100), "{ok:?} answers");
    }
}
