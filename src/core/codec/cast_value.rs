//! zarr-extensions `cast_value` (zarrita.js reads it): elements stored as another numeric type
//! (`data_type`), cast back by value — first `scalar_map.decode`, then exact values, then
//! `rounding` (to integers) and `out_of_range` (`clamp`, `wrap`); anything else is an error.
//! Casts to floats round to nearest-even (every `rounding` agrees when the cast widens, which
//! is what decoding usually does).
use super::numeric::{is_float, numeric, try_map, Num};
use super::scale_offset::{int_fits, scalar};
use super::{Codec, Ctx, Decoded, Kind};
use crate::core::error::{checked_bytes, corrupt_chunk, err, invalid, ErrorCode, Error, Result};
use crate::core::json::Map;
use crate::core::metadata::DataType;
use alloc::format;
use alloc::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    NearestEven,
    TowardsZero,
    TowardsPositive,
    TowardsNegative,
    NearestAway,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutOfRange {
    Error,
    Clamp,
    Wrap,
}

pub struct CastValue {
    stored: DataType,
    rounding: Rounding,
    out_of_range: OutOfRange,
    /// `scalar_map.decode`: stored value → array value (first occurrence wins).
    map: Vec<(Num, Num)>,
}

// By name: a derived Debug formats its numbers, and the codec's vtable would keep a float printer
// (about 7 KB of the gzipped module) alive for it.
impl core::fmt::Debug for CastValue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("CastValue")
    }
}

fn same(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x == y,
        (a, b) => {
            let (x, y) = (a.as_f64(), b.as_f64());
            x == y || (x.is_nan() && y.is_nan())
        }
    }
}

impl CastValue {
    pub fn parse(conf: &Map, decoded: DataType) -> Result<CastValue> {
        let known = ["data_type", "rounding", "out_of_range", "scalar_map"];
        if let Some(k) = conf.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(invalid(format!("cast_value: unknown configuration key \"{k}\"")));
        }
        let stored = DataType::parse(conf.get("data_type").ok_or_else(|| invalid("cast_value needs a data_type"))?)?;
        for t in [stored, decoded] {
            if !numeric(t) || t == DataType::Bool {
                return err(ErrorCode::UnsupportedCodec, format!("cast_value does not apply to {} elements", t.name()));
            }
        }
        let rounding = match conf.get("rounding").map(|v| v.as_str()) {
            None | Some(Some("nearest-even")) => Rounding::NearestEven,
            Some(Some("towards-zero")) => Rounding::TowardsZero,
            Some(Some("towards-positive")) => Rounding::TowardsPositive,
            Some(Some("towards-negative")) => Rounding::TowardsNegative,
            Some(Some("nearest-away")) => Rounding::NearestAway,
            Some(_) => return Err(invalid(format!("cast_value rounding {}", conf["rounding"]))),
        };
        let out_of_range = match conf.get("out_of_range").map(|v| v.as_str()) {
            None => OutOfRange::Error,
            Some(Some("clamp")) => OutOfRange::Clamp,
            Some(Some("wrap")) if !is_float(decoded) => OutOfRange::Wrap,
            Some(_) => return Err(invalid(format!("cast_value out_of_range {}", conf["out_of_range"]))),
        };
        let mut map = Vec::new();
        if let Some(pairs) = conf.get("scalar_map").and_then(|m| m.get("decode")) {
            let pairs = pairs.as_array().ok_or_else(|| invalid("cast_value scalar_map.decode must be a list"))?;
            for p in pairs {
                match p.as_array().map(Vec::as_slice) {
                    Some([from, to]) => map.push((scalar(stored, from)?, scalar(decoded, to)?)),
                    _ => return Err(invalid("cast_value scalar_map entries are [input, output] pairs")),
                }
            }
        }
        Ok(CastValue { stored, rounding, out_of_range, map })
    }

    /// Stored value `v` as type `t`.
    fn cast(&self, v: Num, t: DataType) -> Result<Num> {
        if let Some((_, to)) = self.map.iter().find(|(from, _)| same(*from, v)) {
            return Ok(*to);
        }
        // (No value in the message: float formatting would cost the module ~7 KB.)
        let fail = |why: &str| -> Error { corrupt_chunk(format!("cast_value: a stored {} {why} {}", self.stored.name(), t.name())) };
        if is_float(t) {
            // Nearest-even (the `as` casts below); exact when widening.
            return Ok(Num::Float(v.as_f64()));
        }
        let i = match v {
            Num::Int(i) => i,
            Num::Float(x) if !x.is_finite() => return Err(fail("NaN or infinity has no value in")),
            Num::Float(x) => {
                let r = match self.rounding {
                    Rounding::NearestEven => x.round_ties_even(),
                    Rounding::TowardsZero => x.trunc(),
                    Rounding::TowardsPositive => x.ceil(),
                    Rounding::TowardsNegative => x.floor(),
                    Rounding::NearestAway => {
                        // (`f64::round` would bring libm's into the module.)
                        let t = x.trunc();
                        if (x - t).abs() >= 0.5 { t + x.signum() } else { t }
                    }
                };
                // Past 64 bits only by clamping (wrapping such a value is meaningless here);
                // 64-bit conversions only: 128-bit ones cost the module KBs of builtins.
                if !(-9.2e18..=1.8e19).contains(&r) {
                    if self.out_of_range != OutOfRange::Clamp {
                        return Err(fail("value is out of the range of"));
                    }
                    if r > 0.0 { i128::from(u64::MAX) } else { i128::from(i64::MIN) }
                } else if r >= 0.0 {
                    i128::from(r as u64)
                } else {
                    i128::from(r as i64)
                }
            }
        };
        if int_fits(t, i) {
            return Ok(Num::Int(i));
        }
        let bits = 8 * t.size() as u32;
        let signed = matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64);
        let (lo, hi) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        match self.out_of_range {
            OutOfRange::Error => Err(fail("value is out of the range of")),
            OutOfRange::Clamp => Ok(Num::Int(i.clamp(lo, hi))),
            OutOfRange::Wrap => {
                // Modulo 2^bits by masking the two's complement (no 128-bit division in wasm).
                let m = i128::from((i as u64) & (u64::MAX >> (64 - bits)));
                Ok(Num::Int(if signed && m > hi { m - (1i128 << bits) } else { m }))
            }
        }
    }
}

impl Codec for CastValue {
    fn name(&self) -> &str {
        "cast_value"
    }
    fn kind(&self) -> Kind {
        Kind::ArrayToArray
    }
    fn costly(&self) -> bool {
        false
    }
    fn encoded_dtype(&self, _decoded: DataType) -> DataType {
        self.stored
    }
    fn decode(&self, data: Decoded, ctx: &Ctx) -> Result<Decoded> {
        let n = checked_bytes(ctx.shape, 1)?;
        let bytes = try_map(&data.bytes, self.stored, ctx.dtype, n, "cast_value", |v| self.cast(v, ctx.dtype))?;
        Ok(Decoded { bytes, ..data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::{json, Value};

    fn run(decoded: DataType, conf: Value, stored: &[u8]) -> Result<Vec<u8>> {
        let c = CastValue::parse(conf.as_object().unwrap(), decoded)?;
        let n = (stored.len() / c.stored.size()) as u64;
        let ctx = Ctx { shape: &[n], dtype: decoded, limit: 1 << 20, decoders: None };
        Ok(c.decode(Decoded::elements(stored.to_vec(), alloc::vec![1]), &ctx)?.bytes)
    }

    fn f64s(b: &[u8]) -> Vec<f64> {
        b.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn spec_examples() {
        // The spec's "float64 to uint8 with NaN preservation": 0 decodes to NaN.
        let conf = json!({"data_type": "uint8", "rounding": "nearest-even",
                          "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}});
        let got = f64s(&run(DataType::Float64, conf, &[0, 1, 255]).unwrap());
        assert!(got[0].is_nan());
        assert_eq!(&got[1..], [1.0, 255.0]);
        // uint16 stored as uint8: exact values.
        assert_eq!(run(DataType::UInt16, json!({"data_type": "uint8"}), &[7, 255]).unwrap(), [7, 0, 255, 0]);
        // Stored floats to integers, each rounding (zarrita.js's vectors for float64 → int32).
        let stored: Vec<u8> = [2.5f64, 3.5, -2.5, -0.7].iter().flat_map(|v| v.to_le_bytes()).collect();
        let ints = |r: &str| -> Vec<i32> {
            let b = run(DataType::Int32, json!({"data_type": "float64", "rounding": r}), &stored).unwrap();
            b.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
        };
        assert_eq!(ints("nearest-even"), [2, 4, -2, -1]);
        assert_eq!(ints("towards-zero"), [2, 3, -2, 0]);
        assert_eq!(ints("towards-positive"), [3, 4, -2, 0]);
        assert_eq!(ints("towards-negative"), [2, 3, -3, -1]);
        assert_eq!(ints("nearest-away"), [3, 4, -3, -1]);
        // The spec's int8 example for 128: error, clamp, wrap.
        let v = 128i16.to_le_bytes();
        assert_eq!(run(DataType::Int8, json!({"data_type": "int16"}), &v).unwrap_err().code, ErrorCode::CorruptChunk);
        assert_eq!(run(DataType::Int8, json!({"data_type": "int16", "out_of_range": "clamp"}), &v).unwrap(), [127]);
        assert_eq!(run(DataType::Int8, json!({"data_type": "int16", "out_of_range": "wrap"}), &v).unwrap(), [0x80]);
        // int16 wraps: 32768 → -32768, 32769 → -32767, -32769 → 32767 (stored as int32).
        let s: Vec<u8> = [32768i32, 32769, -32769].iter().flat_map(|v| v.to_le_bytes()).collect();
        let b = run(DataType::Int16, json!({"data_type": "int32", "out_of_range": "wrap"}), &s).unwrap();
        let w: Vec<i16> = b.chunks(2).map(|c| i16::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(w, [-32768, -32767, 32767]);
        // NaN into an integer without a scalar_map: an error.
        let nan = f64::NAN.to_le_bytes();
        assert_eq!(run(DataType::Int32, json!({"data_type": "float64"}), &nan).unwrap_err().code, ErrorCode::CorruptChunk);
    }
}
