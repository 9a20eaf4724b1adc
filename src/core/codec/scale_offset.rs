//! zarr-extensions `scale_offset` (zarrita.js reads it): encoded `(x - offset) * scale`,
//! decoded `x / scale + offset` in the array's own arithmetic; a result the type cannot hold is
//! an error, never a wrapped value.
use super::numeric::{is_float, numeric, read, try_map, Num};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_chunk, err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Value};
use crate::core::metadata::dtype::FillValue;
use crate::core::metadata::DataType;
use alloc::format;

pub struct ScaleOffset {
    scale: Num,
    offset: Num,
}

// By name: a derived Debug formats its numbers, and the codec's vtable would keep a float printer
// (about 7 KB of the gzipped module) alive for it.
impl core::fmt::Debug for ScaleOffset {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ScaleOffset")
    }
}

/// A scalar of `dtype` in the Zarr v3 fill value encoding.
pub(crate) fn scalar(dtype: DataType, v: &Value) -> Result<Num> {
    let f = FillValue::parse(dtype, v)?;
    Ok(read(dtype, &f.bytes, 0))
}

impl ScaleOffset {
    pub fn parse(conf: &Map, dtype: DataType) -> Result<ScaleOffset> {
        if !numeric(dtype) || dtype == DataType::Bool {
            return err(ErrorCode::UnsupportedCodec, format!("scale_offset does not apply to {} elements", dtype.name()));
        }
        if let Some(k) = conf.keys().find(|k| *k != "scale" && *k != "offset") {
            return Err(invalid(format!("scale_offset: unknown configuration key \"{k}\"")));
        }
        let one = if is_float(dtype) { Num::Float(1.0) } else { Num::Int(1) };
        let zero = if is_float(dtype) { Num::Float(0.0) } else { Num::Int(0) };
        let scale = conf.get("scale").map(|v| scalar(dtype, v)).transpose()?.unwrap_or(one);
        let offset = conf.get("offset").map(|v| scalar(dtype, v)).transpose()?.unwrap_or(zero);
        if scale == Num::Int(0) {
            return Err(invalid("scale_offset: an integer scale of 0"));
        }
        Ok(ScaleOffset { scale, offset })
    }
}

/// Whether `v` is a value of the integer type `t`.
pub(crate) fn int_fits(t: DataType, v: i128) -> bool {
    use DataType::*;
    let (lo, hi): (i128, i128) = match t {
        Int8 => (i8::MIN.into(), i8::MAX.into()),
        Int16 => (i16::MIN.into(), i16::MAX.into()),
        Int32 => (i32::MIN.into(), i32::MAX.into()),
        Int64 => (i64::MIN.into(), i64::MAX.into()),
        UInt8 => (0, u8::MAX.into()),
        UInt16 => (0, u16::MAX.into()),
        UInt32 => (0, u32::MAX.into()),
        UInt64 => (0, u64::MAX.into()),
        Bool => (0, 1),
        _ => return true,
    };
    (lo..=hi).contains(&v)
}

impl Codec for ScaleOffset {
    fn name(&self) -> &str {
        "scale_offset"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn costly(&self) -> bool {
        false
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let t = ctx.dtype;
        let n = checked_bytes(ctx.shape, 1)?;
        let bytes = try_map(&data.bytes, t, t, n, "scale_offset", |x| {
            Ok(match (x, self.scale, self.offset) {
                (Num::Int(x), Num::Int(s), Num::Int(o)) => {
                    // In 64 bits, as the types are (128-bit division would cost the module KBs).
                    let y = if t == DataType::UInt64 {
                        ((x as u64) / (s as u64)).checked_add(o as u64).map(i128::from)
                    } else {
                        ((x as i64).wrapping_div(s as i64)).checked_add(o as i64).map(i128::from)
                    }
                    .filter(|y| int_fits(t, *y));
                    let e = || corrupt_chunk(format!("scale_offset: a decoded value is not a {}", t.name()));
                    Num::Int(y.ok_or_else(e)?)
                }
                (x, s, o) if t == DataType::Float32 => {
                    Num::Float(f64::from(x.as_f64() as f32 / s.as_f64() as f32 + o.as_f64() as f32))
                }
                (x, s, o) => Num::Float(x.as_f64() / s.as_f64() + o.as_f64()),
            })
        })?;
        Ok(Decoded { bytes, ..data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    fn run(dtype: DataType, conf: Value, stored: &[u8]) -> Result<alloc::vec::Vec<u8>> {
        let c = ScaleOffset::parse(conf.as_object().unwrap(), dtype)?;
        let n = (stored.len() / dtype.size()) as u64;
        let ctx = Ctx { shape: &[n], dtype, limit: 1 << 20, decoders: None };
        Ok(c.decode(Decoded::elements(stored.to_vec(), alloc::vec![1]), &ctx)?.bytes)
    }

    #[test]
    fn spec_examples() {
        // As the spec's float32 example (offset 5), with a scale exact in binary: (x - 5) * 0.5.
        let stored: alloc::vec::Vec<u8> = [0.0f32, 2.5, -1.25].iter().flat_map(|v| v.to_le_bytes()).collect();
        let got = run(DataType::Float32, json!({"offset": 5, "scale": 0.5}), &stored).unwrap();
        let vals: alloc::vec::Vec<f32> = got.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(vals, [5.0, 10.0, 2.5]);
        // Integers: (x - 10) * 2 stored; decoding divides and adds back.
        let got = run(DataType::Int16, json!({"offset": 10, "scale": 2}), &[4, 0, 0xfc, 0xff]).unwrap();
        assert_eq!(got, [12, 0, 8, 0]);
        // A result outside the type is an error, not a wrapped value.
        let e = run(DataType::UInt8, json!({"offset": 200}), &[100]).unwrap_err();
        assert_eq!(e.code, ErrorCode::CorruptChunk);
        // No configuration: identity.
        assert_eq!(run(DataType::UInt8, json!({}), &[7, 9]).unwrap(), [7, 9]);
        assert_eq!(run(DataType::UInt8, json!({"bogus": 1}), &[7]).unwrap_err().code, ErrorCode::InvalidMetadata);
    }
}
