//! TIFF's predictors, as imagecodecs names them. `imagecodecs_delta` (Predictor 2, horizontal
//! differencing): along one axis of the tile, each sample the difference from the one before it
//! (integers wrap), undone by a running sum per row. `imagecodecs_floatpred` (Predictor 3,
//! floating point): each row's samples split into byte planes, most significant first, the
//! planes differenced byte by byte, undone into little-endian floats; it reads the row's bytes
//! and gives elements (an array→bytes codec, in place of `bytes`).
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

/// (rows, samples per row, row stride) of `shape` when differencing along `axis`: the axes
/// after it are samples of one pixel.
fn rows(shape: &[u64], axis: usize) -> Result<(usize, usize)> {
    let row = checked_bytes(&shape[axis..], 1)?;
    let all = checked_bytes(shape, 1)?;
    Ok((all / row.max(1), row))
}

#[derive(Debug)]
pub struct HorizontalDelta {
    axis: usize,
}

impl HorizontalDelta {
    pub fn parse(conf: &Map, ndim: usize) -> Result<HorizontalDelta> {
        Ok(HorizontalDelta { axis: axis(conf, ndim, "imagecodecs_delta")? })
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
        let (nrows, row) = rows(ctx.shape, self.axis)?;
        // Within a row, sample k follows sample k - `pixel` (the same channel of the pixel before).
        let pixel = checked_bytes(&ctx.shape[self.axis + 1..], 1)?;
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
        match (ctx.dtype, size) {
            (DataType::Float16 | DataType::Float32 | DataType::Float64, _) => {
                return Err(corrupt_in("imagecodecs_delta", "horizontal differencing of floats (Predictor 2) is not read"))
            }
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
        let (nrows, row) = rows(ctx.shape, self.axis)?;
        let mut src = data.bytes;
        if src.len() != checked_bytes(ctx.shape, size as u64)? {
            return Err(corrupt_in("imagecodecs_floatpred", "a chunk of another size"));
        }
        let mut out: Vec<u8> = crate::core::error::zeroed(src.len())?;
        let width = row * size;
        for r in 0..nrows {
            let plane = &mut src[r * width..(r + 1) * width];
            for k in 1..width {
                plane[k] = plane[k].wrapping_add(plane[k - 1]);
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
        let d = HorizontalDelta { axis: 1 };
        let shape = [2, 3, 3];
        let enc = [10u8, 20, 30, 1, 1, 1, 2, 2, 2, 0, 0, 0, 255, 0, 1, 1, 0, 255];
        let got = d.decode(Decoded::elements(enc.to_vec(), c_strides(&shape)), &ctx(&shape, DataType::UInt8)).unwrap();
        assert_eq!(got.bytes, [10, 20, 30, 11, 21, 31, 13, 23, 33, 0, 0, 0, 255, 0, 1, 0, 0, 0]);
        let d = HorizontalDelta { axis: 1 };
        let shape = [1, 3];
        let enc: Vec<u8> = [1000u16, 65535, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = d.decode(Decoded::elements(enc, c_strides(&shape)), &ctx(&shape, DataType::UInt16)).unwrap();
        let vals: Vec<u16> = got.bytes.chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(vals, [1000, 999, 1001]);
    }

    #[test]
    fn float_predictor_round_trip() {
        let vals = [1.5f32, -2.25, 1e-3, 3.0e8, 0.0, 7.0];
        let (row, size) = (3, 4);
        // Encode as libtiff does: bytes big-endian into planes, then difference.
        let mut enc = Vec::new();
        for r in vals.chunks(row) {
            let mut planes = alloc::vec![0u8; row * size];
            for (s, v) in r.iter().enumerate() {
                for (b, byte) in v.to_be_bytes().iter().enumerate() {
                    planes[b * row + s] = *byte;
                }
            }
            for k in (1..planes.len()).rev() {
                planes[k] = planes[k].wrapping_sub(planes[k - 1]);
            }
            enc.extend(planes);
        }
        let shape = [2, 3];
        let got = FloatPredictor { axis: 1 }.decode(Decoded::bytes(enc), &ctx(&shape, DataType::Float32)).unwrap();
        let back: Vec<f32> = got.bytes.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(back, vals);
    }
}
