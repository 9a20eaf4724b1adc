//! Element values for the numcodecs filters that convert between numeric types (`delta`,
//! `fixedscaleoffset`, `quantize`, `astype`): read one of any fixed numeric type, write it as
//! another with NumPy's `astype` rules (integers wrap; floats to integers truncate toward zero,
//! saturating; integers and doubles to narrower floats round to nearest).
use crate::core::error::{checked_bytes, corrupt_chunk, err, zeroed, ErrorCode, Result};
use crate::core::json::Map;
use crate::core::metadata::dtype::{f16_bits_to_f64, f64_to_f16_bits};
use crate::core::metadata::v2::parse_dtype;
use crate::core::metadata::DataType;
use alloc::format;
use alloc::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::Float(x) => x,
        }
    }
}

/// Whether the filters can read and write `t`.
pub fn numeric(t: DataType) -> bool {
    use DataType::*;
    matches!(t, Bool | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float16 | Float32 | Float64)
}

pub fn is_float(t: DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// A filter's numeric type option: a NumPy type (`"<i4"`, `"|u1"`, …; the byte order is the
/// stored data's), or a Zarr v3 name (`"int32"`: little-endian), as zarr-python's
/// `zarr.codecs.numcodecs` writes them. A wrong one is the codec's configuration's error.
pub fn type_option(conf: &Map, key: &str, codec: &str) -> Result<Option<(DataType, bool)>> {
    let Some(v) = conf.get(key) else { return Ok(None) };
    let (t, big) = match (parse_dtype(v), DataType::parse(v)) {
        (Ok(numpy), _) => numpy,
        (Err(_), Ok(v3)) => (v3, false),
        (Err(_), Err(_)) => {
            let what = format!("{codec}: its configuration's \"{key}\" is not a data type NumPy or Zarr v3 names: {v}");
            return err(ErrorCode::UnsupportedCodec, what);
        }
    };
    if !numeric(t) {
        return err(ErrorCode::UnsupportedCodec, format!("{codec}: its configuration's \"{key}\", {}, is not a numeric type", t.name()));
    }
    Ok(Some((t, big)))
}

/// Element `i` of little-endian `bytes` of type `t`.
pub fn read(t: DataType, bytes: &[u8], i: usize) -> Num {
    let size = t.size();
    let mut w = [0u8; 8];
    w[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
    let u = u64::from_le_bytes(w);
    use DataType::*;
    match t {
        Int8 => Num::Int(u as u8 as i8 as i128),
        Int16 => Num::Int(u as u16 as i16 as i128),
        Int32 => Num::Int(u as u32 as i32 as i128),
        Int64 => Num::Int(u as i64 as i128),
        Float16 => Num::Float(f16_bits_to_f64(u as u16)),
        Float32 => Num::Float(f32::from_bits(u as u32) as f64),
        Float64 => Num::Float(f64::from_bits(u)),
        _ => Num::Int(u as i128),
    }
}

/// `v` as type `t`, little-endian, into `out` at element `i`.
pub fn write(t: DataType, v: Num, out: &mut [u8], i: usize) {
    let size = t.size();
    use DataType::*;
    let bits: u64 = match (t, v) {
        (Float16, v) => f64_to_f16_bits(v.as_f64()) as u64,
        (Float32, v) => (v.as_f64() as f32).to_bits() as u64,
        (Float64, v) => v.as_f64().to_bits(),
        (Bool, v) => u64::from(v.as_f64() != 0.0),
        // Integers wrap to the width below.
        (_, Num::Int(n)) => n as u64,
        (_, Num::Float(x)) => {
            if matches!(t, UInt64) {
                x as u64
            } else {
                x as i64 as u64
            }
        }
    };
    out[i * size..(i + 1) * size].copy_from_slice(&bits.to_le_bytes()[..size]);
}

/// Every element of `data` (type `from`, `n` of them) converted by `f` into type `to`.
pub fn map(
    data: &[u8],
    from: DataType,
    to: DataType,
    n: usize,
    codec: &str,
    mut f: impl FnMut(Num) -> Num,
) -> Result<Vec<u8>> {
    try_map(data, from, to, n, codec, |v| Ok(f(v)))
}

/// As [`map`], with a conversion that can fail (a value the type cannot hold).
pub fn try_map(
    data: &[u8],
    from: DataType,
    to: DataType,
    n: usize,
    codec: &str,
    mut f: impl FnMut(Num) -> Result<Num>,
) -> Result<Vec<u8>> {
    if data.len() != n * from.size() {
        return Err(corrupt_chunk(format!("{codec}: {} bytes, expected {n} elements of {}", data.len(), from.name())));
    }
    let mut out = zeroed(checked_bytes(&[n as u64], to.size() as u64)?)?;
    for i in 0..n {
        write(to, f(read(from, data, i))?, &mut out, i);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_numpy_astype() {
        let mut out = [0u8; 8];
        write(DataType::Int8, Num::Int(300), &mut out, 0);
        assert_eq!(out[0] as i8, 44, "wraps");
        write(DataType::Int16, Num::Float(-2.9), &mut out, 0);
        assert_eq!(i16::from_le_bytes([out[0], out[1]]), -2, "truncates toward zero");
        write(DataType::Float16, Num::Float(0.1), &mut out, 0);
        assert_eq!(u16::from_le_bytes([out[0], out[1]]), 0x2e66);
        assert_eq!(read(DataType::Float16, &[0x66, 0x2e], 0), Num::Float(f16_bits_to_f64(0x2e66)));
        write(DataType::UInt64, Num::Int(-1), &mut out, 0);
        assert_eq!(u64::from_le_bytes(out), u64::MAX);
    }

    #[test]
    fn type_options_take_numpy_and_zarr_v3_names() {
        let conf = |v: &str| crate::core::json::json!({ "dtype": v }).as_object().unwrap().clone();
        assert_eq!(type_option(&conf("<i4"), "dtype", "delta").unwrap(), Some((DataType::Int32, false)));
        assert_eq!(type_option(&conf(">f8"), "dtype", "delta").unwrap(), Some((DataType::Float64, true)));
        assert_eq!(type_option(&conf("int32"), "dtype", "delta").unwrap(), Some((DataType::Int32, false)));
        assert_eq!(type_option(&conf("uint8"), "dtype", "delta").unwrap(), Some((DataType::UInt8, false)));
        // A wrong one names the codec and its field, not the array's data type.
        let e = type_option(&conf("int33"), "dtype", "delta").unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedCodec);
        assert!(e.message.contains("delta") && e.message.contains("\"dtype\"") && e.message.contains("int33"), "{e}");
        let e = type_option(&conf("string"), "dtype", "fixedscaleoffset").unwrap_err();
        assert!(e.message.contains("fixedscaleoffset") && e.message.contains("not a numeric type"), "{e}");
    }
}
