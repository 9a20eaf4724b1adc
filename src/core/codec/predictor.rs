//! TIFF's predictors, as imagecodecs names them. `imagecodecs_delta` (Predictor 2, horizontal
//! differencing): along one axis of the tile, each sample the difference from the one before it
//! (integers wrap; with `"integers": true` floats as the integers of their bits, as libtiff
//! does), undone by a running sum per row. `imagecodecs_floatpred` (Predictor 3, floating
//! point): each row's values (samples × width) split into byte planes, most significant first,
//! each byte differenced from the one a pixel's samples before it (libtiff's `fpDiff` stride; 1
//! when planar), undone into little-endian floats; it reads the row's bytes and gives elements
//! (an array→bytes codec, in place of `bytes`).
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_in, invalid, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::DataType;
use crate::core::nd::c_strides;
use alloc::vec::Vec;

/// The axis a predictor runs along (negative: from the last).
fn axis(conf: &Map, ndim: usize, name: &str) -> Result<usize> {
    let a = conf.get("axis").and_then(Value::as_i64).unwrap_or(-1);
    let k = if a < 0 { ndim as i64 + a } else { a };
    usize::try_from(k).ok().filter(|&k| k < ndim).ok_or_else(|| invalid(alloc::format!("{name}: axis {a} of {ndim}")))
}

/// (rows, samples per row, samples per pixel) of `shape` when differencing along `axis`: the
/// axes after it are samples of one pixel.
fn rows(shape: &[u64], axis: usize) -> Result<(usize, usize, usize)> {
    let row = checked_bytes(&shape[axis..], 1)?;
    let all = checked_bytes(shape, 1)?;
    let pixel = row / shape.get(axis).map_or(1, |&n| n.max(1) as usize);
    Ok((all / row.max(1), row, pixel.max(1)))
}

#[derive(Debug)]
pub struct HorizontalDelta {
    axis: usize,
    /// Floats differenced as the integers of their bits (`"integers": true`, TIFF's Predictor 2).
    integers: bool,
}

impl HorizontalDelta {
    pub fn parse(conf: &Map, ndim: usize) -> Result<HorizontalDelta> {
        let integers = conf.get("integers").and_then(Value::as_bool).unwrap_or(false);
        Ok(HorizontalDelta { axis: axis(conf, ndim, "imagecodecs_delta")?, integers })
    }
}

impl Codec for HorizontalDelta {
    fn name(&self) -> &str {
        "imagecodecs_delta"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, mut data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        if data.strides != c_strides(ctx.shape) {
            return Err(corrupt_in("imagecodecs_delta", "elements not in C order"));
        }
        // Within a row, sample k follows sample k - `pixel` (the same channel of the pixel before).
        let (nrows, row, pixel) = rows(ctx.shape, self.axis)?;
        let size = ctx.dtype.size();
        if data.bytes.len() != nrows * row * size {
            return Err(corrupt_in("imagecodecs_delta", "a chunk of another size"));
        }
        macro_rules! sum {
            ($t:ty) => {{
                const N: usize = core::mem::size_of::<$t>();
                for r in data.bytes.chunks_exact_mut(row * N) {
                    for k in pixel..row {
                        let prev = <$t>::from_le_bytes(r[(k - pixel) * N..(k - pixel + 1) * N].try_into().unwrap_or_default());
                        let cur = <$t>::from_le_bytes(r[k * N..(k + 1) * N].try_into().unwrap_or_default());
                        r[k * N..(k + 1) * N].copy_from_slice(&cur.wrapping_add(prev).to_le_bytes());
                    }
                }
            }};
        }
        // TIFF's floats are differenced as integers (libtiff's horAcc16/32/64), unlike numcodecs'.
        if !self.integers && matches!(ctx.dtype, DataType::Float16 | DataType::Float32 | DataType::Float64) {
            return Err(corrupt_in("imagecodecs_delta", "differencing of floats as floats is not read"));
        }
        match (ctx.dtype, size) {
            (_, 1) => sum!(u8),
            (_, 2) => sum!(u16),
            (_, 4) => sum!(u32),
            (_, 8) => sum!(u64),
            _ => return Err(invalid(alloc::format!("imagecodecs_delta of {}", ctx.dtype.name()))),
        }
        Ok(data)
    }
}

#[derive(Debug)]
pub struct FloatPredictor {
    axis: usize,
}

impl FloatPredictor {
    pub fn parse(conf: &Map, ndim: usize) -> Result<FloatPredictor> {
        Ok(FloatPredictor { axis: axis(conf, ndim, "imagecodecs_floatpred")? })
    }
}

impl Codec for FloatPredictor {
    fn name(&self) -> &str {
        "imagecodecs_floatpred"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToBytes
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let size = ctx.dtype.size();
        if !matches!(ctx.dtype, DataType::Float16 | DataType::Float32 | DataType::Float64) {
            return Err(invalid(alloc::format!("imagecodecs_floatpred of {}", ctx.dtype.name())));
        }
        // Bytes are differenced from the one a pixel (its samples, the axes after x) before.
        let (nrows, row, pixel) = rows(ctx.shape, self.axis)?;
        let mut src = data.bytes;
        if src.len() != checked_bytes(ctx.shape, size as u64)? {
            return Err(corrupt_in("imagecodecs_floatpred", "a chunk of another size"));
        }
        let mut out: Vec<u8> = crate::core::error::zeroed(src.len())?;
        let width = row * size;
        for r in 0..nrows {
            let plane = &mut src[r * width..(r + 1) * width];
            for k in pixel..width {
                plane[k] = plane[k].wrapping_add(plane[k - pixel]);
            }
            let dst = &mut out[r * width..(r + 1) * width];
            // Plane b holds byte b of every sample, most significant first.
            for s in 0..row {
                for b in 0..size {
                    dst[s * size + (size - 1 - b)] = plane[b * row + s];
                }
            }
        }
        Ok(Decoded::elements(out, c_strides(ctx.shape)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(shape: &[u64], dtype: DataType) -> Ctx<'_> {
        Ctx { shape, dtype, limit: 1 << 20, decoders: None }
    }

    #[test]
    fn horizontal_differencing_per_channel() {
        // Two rows of three RGB pixels, u8: differences per channel along x.
        let d = HorizontalDelta { axis: 1, integers: false };
        let shape = [2, 3, 3];
        let enc = [10u8, 20, 30, 1, 1, 1, 2, 2, 2, 0, 0, 0, 255, 0, 1, 1, 0, 255];
        let got = d.decode(Decoded::elements(enc.to_vec(), c_strides(&shape)), &ctx(&shape, DataType::UInt8)).unwrap();
        assert_eq!(got.bytes, [10, 20, 30, 11, 21, 31, 13, 23, 33, 0, 0, 0, 255, 0, 1, 0, 0, 0]);
        let d = HorizontalDelta { axis: 1, integers: false };
        let shape = [1, 3];
        let enc: Vec<u8> = [1000u16, 65535, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = d.decode(Decoded::elements(enc, c_strides(&shape)), &ctx(&shape, DataType::UInt16)).unwrap();
        let vals: Vec<u16> = got.bytes.chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(vals, [1000, 999, 1001]);
    }

    /// libtiff's fpDiff of one row of `vals` (big-endian bytes of `size`), `stride` samples a pixel.
    fn fp_diff(vals: &[Vec<u8>], size: usize, stride: usize) -> Vec<u8> {
        let n = vals.len();
        let mut planes = alloc::vec![0u8; n * size];
        for (s, v) in vals.iter().enumerate() {
            for (b, byte) in v.iter().enumerate() {
                planes[b * n + s] = *byte;
            }
        }
        for k in (stride..planes.len()).rev() {
            planes[k] = planes[k].wrapping_sub(planes[k - stride]);
        }
        planes
    }

    #[test]
    fn float_predictor_round_trip() {
        // Every float size, one sample and three chunky ([y, x, s], axis 1) and planar ([1, y, x]).
        let vals = [1.5f64, -2.25, 1e-3, 3.0e8, 0.0, 7.0, -0.5, 65504.0, 2.0, 1.0, -3.0, 0.25];
        for (dtype, size) in [(DataType::Float16, 2), (DataType::Float32, 4), (DataType::Float64, 8)] {
            let be = |v: f64| -> Vec<u8> {
                match size {
                    2 => half_bits(v).to_be_bytes().to_vec(),
                    4 => (v as f32).to_be_bytes().to_vec(),
                    _ => v.to_be_bytes().to_vec(),
                }
            };
            for (shape, axis, stride) in [(&[2u64, 6][..], 1, 1), (&[2, 2, 3][..], 1, 3), (&[1, 2, 6][..], 2, 1)] {
                let row = vals.len() / 2;
                let enc: Vec<u8> = vals.chunks(row).flat_map(|r| fp_diff(&r.iter().map(|&v| be(v)).collect::<Vec<_>>(), size, stride)).collect();
                let got = FloatPredictor { axis }.decode(Decoded::bytes(enc), &ctx(shape, dtype)).unwrap();
                let want: Vec<u8> = vals.iter().flat_map(|&v| be(v).into_iter().rev()).collect();
                assert_eq!(got.bytes, want, "{dtype:?} {shape:?}");
            }
        }
        // Differenced from the byte before (stride 1) it would not give these values back.
        let enc = fp_diff(&[1.5f32, 2.5, -4.0].iter().map(|v| v.to_be_bytes().to_vec()).collect::<Vec<_>>(), 4, 1);
        let got = FloatPredictor { axis: 1 }.decode(Decoded::bytes(enc), &ctx(&[1, 1, 3], DataType::Float32)).unwrap();
        assert_ne!(got.bytes[4..8], 2.5f32.to_le_bytes());
    }

    /// The float16 bits of `v` (exact for the values above).
    fn half_bits(v: f64) -> u16 {
        if v == 0.0 {
            return 0;
        }
        let (sign, a) = (if v < 0.0 { 0x8000 } else { 0 }, v.abs());
        let e = a.log2().floor() as i32;
        let m = ((a / 2f64.powi(e) - 1.0) * 1024.0).round() as u16;
        sign | (((e + 15) as u16) << 10) | m
    }

    #[test]
    fn horizontal_differencing_of_float16_bits() {
        // Predictor 2 on float16 differences the 16-bit integers of their bits, per channel.
        let bits = [half_bits(1.5), half_bits(-2.0), half_bits(0.25), half_bits(3.0)];
        let enc: Vec<u8> = [bits[0], bits[1], bits[2].wrapping_sub(bits[0]), bits[3].wrapping_sub(bits[1])]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let shape = [1, 2, 2];
        let d = HorizontalDelta { axis: 1, integers: true };
        let got = d.decode(Decoded::elements(enc.clone(), c_strides(&shape)), &ctx(&shape, DataType::Float16)).unwrap();
        let want: Vec<u8> = bits.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(got.bytes, want);
        let d = HorizontalDelta { axis: 1, integers: false };
        let e = d.decode(Decoded::elements(enc, c_strides(&shape)), &ctx(&shape, DataType::Float16)).unwrap_err();
        assert!(e.message.contains("floats as floats"), "{}", e.message);
    }
}
