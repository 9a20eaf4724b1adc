//! Zarr v3 core data types and their fill values.
use crate::core::error::{err, Error, ErrorCode, Result};
use crate::core::json::{base64, Value};
use alloc::format;
use alloc::vec::Vec;
/// A float16's value (one conversion for the core and the raster module).
pub use shardfetch_kernels::half::to_f64 as f16_bits_to_f64;
use shardfetch_kernels::half::pow2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    /// (real, imaginary) float32 pairs.
    Complex64,
    /// (real, imaginary) float64 pairs.
    Complex128,
    /// Opaque elements of this many bytes (`raw_bytes`).
    RawBytes(u32),
    /// Records of this many bytes with named fields (`structured`; the fields are in the
    /// array's info).
    Structured(u32),
    /// Variable-length UTF-8 text (Zarr v3 `string`, v2 `|O` with `vlen-utf8` or `categorize`).
    String,
    /// Variable-length bytes (Zarr v3 `variable_length_bytes`/`bytes`, v2 `|O` with `vlen-bytes`).
    Bytes,
    /// Any JSON value per element (Zarr v2 `|O` with the `json2` object codec).
    Json,
    /// Text of up to this many code points, stored UTF-32 and NUL-padded (NumPy `<U n`, Zarr v3
    /// `fixed_length_utf32`).
    FixedUtf32(u32),
    /// Bytes of this length, NUL-padded (NumPy `|S n`, Zarr v3 `null_terminated_bytes`).
    FixedBytes(u32),
    /// Text of a number of bytes in a charset, padded, as [`StrType`] says (an HDF5
    /// fixed-length string, a NetCDF `char`).
    FixedString(StrType),
    /// NumPy `datetime64[…]` (Zarr v3 `numpy.datetime64`, v2 `<M8[…]`): int64 counts of the
    /// unit since the Unix epoch, `i64::MIN` for NaT.
    DateTime64(TimeUnit),
    /// NumPy `timedelta64[…]` (Zarr v3 `numpy.timedelta64`, v2 `<m8[…]`): int64 counts, NaT as above.
    TimeDelta64(TimeUnit),
}

/// NumPy's temporal unit names, `generic` last (a unit left unsaid).
const UNITS: [&str; 14] = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"];

/// A `datetime64`/`timedelta64` unit: one of NumPy's (low 4 bits), times a scale factor (the
/// rest: 1..2^28, where NumPy allows up to 2^31; packed so that `DataType` stays 8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeUnit(u32);

impl TimeUnit {
    /// `unit` as NumPy names it (`μs` taken for `us`) and its scale factor.
    pub fn new(unit: &str, scale: u64) -> Option<TimeUnit> {
        let unit = if unit == "μs" { "us" } else { unit };
        let at = UNITS.iter().position(|u| *u == unit)? as u32;
        let scale = u32::try_from(scale).ok().filter(|s| (1..1 << 28).contains(s))?;
        Some(TimeUnit(scale << 4 | at))
    }

    /// The unit's name (`"ns"`, `"D"`, `"generic"`).
    pub fn unit(self) -> &'static str {
        UNITS.get((self.0 & 15) as usize).copied().unwrap_or("generic")
    }

    /// The scale factor.
    pub fn scale(self) -> u32 {
        self.0 >> 4
    }

    /// NumPy's bracket text: `"10us"` from `[10us]`, `"ns"` from `[ns]`.
    pub fn parse_numpy(text: &str) -> Option<TimeUnit> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let scale = text.bytes().take(digits.min(9)).fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        TimeUnit::new(&text[digits..], if digits == 0 { 1 } else if digits > 9 { 0 } else { scale })
    }
}

/// A fixed-length string's length in bytes, charset and padding (HDF5's `cset` and `strpad`),
/// packed as the other types' one `u32`: the charset (1: UTF-8) in bit 0, the [`Pad`] in bits
/// 1-2, the length above (under 2^29 bytes). A second field would grow every match and
/// comparison of [`DataType`] in the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrType(u32);

/// Where a fixed-length string's text ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pad {
    /// At the first NUL (HDF5 `NULLTERM`).
    NullTerm,
    /// Before the trailing NULs (`NULLPAD`).
    NullPad,
    /// Before the trailing spaces (`SPACEPAD`).
    SpacePad,
}

impl StrType {
    /// `None` for a length of 0 or of 2^29 bytes and more.
    pub fn new(len: u32, utf8: bool, pad: Pad) -> Option<StrType> {
        (len > 0 && len < 1 << 29).then_some(StrType(len << 3 | u32::from(utf8) | (pad as u32) << 1))
    }

    /// The length, `"ascii"`/`"utf-8"` and `"nullterm"`/`"nullpad"`/`"spacepad"`.
    pub fn parse(len: u64, charset: &str, padding: &str) -> Option<StrType> {
        let utf8 = match charset {
            "ascii" => false,
            "utf-8" => true,
            _ => return None,
        };
        let pad = match padding {
            "nullterm" => Pad::NullTerm,
            "nullpad" => Pad::NullPad,
            "spacepad" => Pad::SpacePad,
            _ => return None,
        };
        StrType::new(u32::try_from(len).ok()?, utf8, pad)
    }

    /// Bytes per element.
    pub fn size(self) -> u32 {
        self.0 >> 3
    }

    pub fn utf8(self) -> bool {
        self.0 & 1 != 0
    }

    pub fn pad(self) -> Pad {
        match self.0 >> 1 & 3 {
            0 => Pad::NullTerm,
            2 => Pad::SpacePad,
            _ => Pad::NullPad,
        }
    }

    pub fn charset(self) -> &'static str {
        if self.utf8() { "utf-8" } else { "ascii" }
    }

    pub fn padding(self) -> &'static str {
        match self.pad() {
            Pad::NullTerm => "nullterm",
            Pad::NullPad => "nullpad",
            Pad::SpacePad => "spacepad",
        }
    }

    /// The element's bytes without their padding, as h5py reads them (HDF5's conversion to
    /// NumPy's NUL-padded `S`, whose trailing NULs NumPy drops).
    pub fn content(self, raw: &[u8]) -> &[u8] {
        let nul_padded = |b: &[u8]| b.iter().rposition(|&x| x != 0).map_or(0, |k| k + 1);
        let end = match self.pad() {
            Pad::NullTerm => raw.iter().position(|&x| x == 0).unwrap_or(raw.len()),
            Pad::NullPad => nul_padded(raw),
            Pad::SpacePad => {
                let spaces = raw.iter().rposition(|&x| x != b' ').map_or(0, |k| k + 1);
                raw.get(..spaces).map_or(0, nul_padded)
            }
        };
        raw.get(..end).unwrap_or(raw)
    }

    /// The element as text: UTF-8 with U+FFFD for what is malformed (as `TextDecoder` does),
    /// ASCII byte by byte as Latin-1 (lossless: a high byte is kept as U+0080..U+00FF).
    pub fn text(self, raw: &[u8]) -> alloc::string::String {
        let b = self.content(raw);
        if self.utf8() {
            return alloc::string::String::from_utf8_lossy(b).into_owned();
        }
        let mut s = alloc::string::String::with_capacity(b.len());
        for &x in b {
            s.push(char::from(x));
        }
        s
    }
}

/// How a variable-length element is held while decoded: 8 bytes per element — its offset and
/// length (u32, little-endian) in a separate heap of contents — so strides, transposes and box
/// copies treat it like any fixed-size element.
pub const HANDLE: usize = 8;

/// A variable-length element's handle.
pub fn handle(offset: usize, len: usize) -> [u8; HANDLE] {
    let mut h = [0u8; HANDLE];
    h[..4].copy_from_slice(&(offset as u32).to_le_bytes());
    h[4..].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

/// The contents a handle points at in `heap`, when it lies inside.
pub fn content<'a>(h: &[u8], heap: &'a [u8]) -> Option<&'a [u8]> {
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let (at, n) = (word(h.get(..4)?), word(h.get(4..8)?));
    heap.get(at..at.checked_add(n)?)
}

/// One field of a structured data type: name, type, byte offset in the record.
pub type Field = (alloc::string::String, DataType, u64);

impl DataType {
    pub fn parse(v: &Value) -> Result<DataType> {
        let name = match v {
            Value::String(s) => s.as_str(),
            Value::Object(_) => return Self::parse_object(v),
            _ => return err(ErrorCode::InvalidMetadata, "data_type must be a string"),
        };
        Ok(match name {
            "bool" => DataType::Bool,
            "int8" => DataType::Int8,
            "int16" => DataType::Int16,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "uint8" => DataType::UInt8,
            "uint16" => DataType::UInt16,
            "uint32" => DataType::UInt32,
            "uint64" => DataType::UInt64,
            "float16" => DataType::Float16,
            "float32" => DataType::Float32,
            "float64" => DataType::Float64,
            "complex64" => DataType::Complex64,
            "complex128" => DataType::Complex128,
            "string" => DataType::String,
            "variable_length_bytes" | "bytes" => DataType::Bytes,
            other => return err(ErrorCode::UnsupportedDataType, format!("unsupported data type \"{other}\"")),
        })
    }

    /// A data type given as an object: `{"name": …, "configuration": {…}}`.
    fn parse_object(v: &Value) -> Result<DataType> {
        let n = v.get("name").and_then(Value::as_str).unwrap_or("<unnamed>");
        let conf = v.get("configuration");
        match n {
            "fixed_length_utf32" | "null_terminated_bytes" => {
                let len = conf.and_then(|c| c.get("length_bytes")).and_then(Value::as_u64);
                match (n, len.and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0)) {
                    ("fixed_length_utf32", Some(b)) if b % 4 == 0 => Ok(DataType::FixedUtf32(b / 4)),
                    ("null_terminated_bytes", Some(b)) => Ok(DataType::FixedBytes(b)),
                    _ => err(ErrorCode::InvalidMetadata, format!("{n} needs a positive length_bytes")),
                }
            }
            "fixed_length_string" => {
                let c = |k: &str| conf.and_then(|c| c.get(k)).and_then(Value::as_str).unwrap_or("");
                let len = conf.and_then(|c| c.get("length_bytes")).and_then(Value::as_u64).unwrap_or(0);
                match StrType::parse(len, c("charset"), c("padding")) {
                    Some(t) => Ok(DataType::FixedString(t)),
                    None => err(ErrorCode::InvalidMetadata, "fixed_length_string needs length_bytes (1 to 2^29-1), charset and padding"),
                }
            }
            "raw_bytes" => {
                let len = conf.and_then(|c| c.get("length_bytes")).and_then(Value::as_u64);
                match len.and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0) {
                    Some(n) => Ok(DataType::RawBytes(n)),
                    None => err(ErrorCode::InvalidMetadata, "raw_bytes needs a positive length_bytes"),
                }
            }
            "structured" => {
                let fields = Self::fields(v)?;
                let size = fields.iter().map(|f| f.2 + f.1.size() as u64).max().unwrap_or(0);
                match u32::try_from(size).ok().filter(|&n| n > 0) {
                    Some(n) => Ok(DataType::Structured(n)),
                    None => err(ErrorCode::InvalidMetadata, "structured data type has no fields"),
                }
            }
            "numpy.datetime64" | "numpy.timedelta64" => {
                let unit = conf.and_then(|c| c.get("unit")).and_then(Value::as_str).unwrap_or("");
                let scale = conf.and_then(|c| c.get("scale_factor")).and_then(Value::as_u64).unwrap_or(0);
                match TimeUnit::new(unit, scale) {
                    Some(t) if n == "numpy.datetime64" => Ok(DataType::DateTime64(t)),
                    Some(t) => Ok(DataType::TimeDelta64(t)),
                    None => err(ErrorCode::InvalidMetadata, format!("{n} needs a NumPy unit and a scale_factor in 1..2^28")),
                }
            }
            _ => err(ErrorCode::UnsupportedDataType, format!("unsupported data type \"{n}\"")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::RawBytes(_) => "raw_bytes",
            DataType::Structured(_) => "structured",
            DataType::String => "string",
            DataType::Bytes => "bytes",
            DataType::Json => "json",
            DataType::FixedUtf32(_) => "fixed_length_utf32",
            DataType::FixedBytes(_) => "null_terminated_bytes",
            DataType::FixedString(..) => "fixed_length_string",
            DataType::DateTime64(_) => "datetime64",
            DataType::TimeDelta64(_) => "timedelta64",
        }
    }

    /// The unit of a `datetime64` or `timedelta64`.
    pub fn time_unit(self) -> Option<TimeUnit> {
        match self {
            DataType::DateTime64(t) | DataType::TimeDelta64(t) => Some(t),
            _ => None,
        }
    }

    pub fn size(self) -> usize {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::DateTime64(_) | DataType::TimeDelta64(_) => 8,
            DataType::Complex128 => 16,
            DataType::RawBytes(n) | DataType::Structured(n) | DataType::FixedBytes(n) => n as usize,
            DataType::FixedString(t) => t.size() as usize,
            DataType::FixedUtf32(n) => 4 * n as usize,
            DataType::String | DataType::Bytes | DataType::Json => HANDLE,
        }
    }

    /// Whether elements have variable length (decoded as handles into a heap, see [`HANDLE`]).
    pub fn is_variable(self) -> bool {
        matches!(self, DataType::String | DataType::Bytes | DataType::Json)
    }

    /// The fields of a `structured` data type, packed in order (as zarr-python writes them):
    /// `{"name": "structured", "configuration": {"fields": [["name", "int32"], …]}}`.
    pub fn fields(v: &Value) -> Result<Vec<Field>> {
        let list = v.get("configuration").and_then(|c| c.get("fields")).and_then(Value::as_array);
        let list = list.ok_or_else(|| Error::new(ErrorCode::InvalidMetadata, "structured data type needs fields"))?;
        let mut at = 0u64;
        let mut out = Vec::new();
        for f in list {
            let (name, t) = match f.as_array().map(Vec::as_slice) {
                Some([Value::String(n), t]) => (n.clone(), DataType::parse(t)?),
                _ => return err(ErrorCode::InvalidMetadata, "structured fields are [name, data type] pairs"),
            };
            if matches!(t, DataType::Structured(_)) {
                return err(ErrorCode::UnsupportedDataType, "nested structured data types are not supported");
            }
            out.push((name, t, at));
            at = at.saturating_add(t.size() as u64);
        }
        Ok(out)
    }

    /// The unit whose bytes a big-endian encoding reverses: the element, or each part of a
    /// complex number.
    pub fn swap_unit(self) -> usize {
        match self {
            DataType::Complex64 => 4,
            DataType::Complex128 => 8,
            DataType::RawBytes(_) | DataType::Structured(_) | DataType::FixedBytes(_) => 1,
            DataType::FixedString(..) => 1,
            DataType::String | DataType::Bytes | DataType::Json => 1,
            DataType::FixedUtf32(_) => 4,
            other => other.size(),
        }
    }
}

/// A fill value as the API reports it (exact for 64-bit integers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Complex(f64, f64),
    /// A raw or structured element: see [`FillValue::bytes`]; a bytes element: its contents
    /// ([`FillValue::heap`] when variable, else `bytes` without the NUL padding).
    Bytes,
    /// Text: the UTF-8 in [`FillValue::heap`] (variable length), the UTF-32 in `bytes`, or a
    /// fixed-length string's bytes in its charset.
    Text,
    /// A JSON value: its text in [`FillValue::heap`].
    Json,
}

/// A parsed fill value: the element's little-endian bytes plus its reported value.
#[derive(Clone, Debug, PartialEq)]
pub struct FillValue {
    /// One element (for variable-length types: the handle of the fill at offset 0 of `heap`).
    pub bytes: Vec<u8>,
    pub value: Scalar,
    /// Variable-length types: the fill's contents (the heap its handle points into).
    pub heap: Vec<u8>,
}

impl FillValue {
    pub fn parse(dtype: DataType, v: &Value) -> Result<FillValue> {
        let bad = || Error::new(ErrorCode::InvalidMetadata, format!("invalid fill_value {v} for {}", dtype.name()));
        let int = |lo: i128, hi: i128| -> Result<i128> {
            let x = match v {
                Value::Number(n) => n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)),
                _ => None,
            };
            // Integral floats such as 0.0 are accepted too.
            let x = x.or_else(|| match v {
                Value::Number(n) => n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i128),
                _ => None,
            });
            x.filter(|x| (lo..=hi).contains(x)).ok_or_else(bad)
        };
        Ok(match dtype {
            DataType::Bool => {
                let b = match v {
                    Value::Bool(b) => *b,
                    Value::Number(n) if n.as_u64() == Some(0) => false,
                    Value::Number(n) if n.as_u64() == Some(1) => true,
                    _ => return Err(bad()),
                };
                FillValue::of(alloc::vec![b as u8], Scalar::Bool(b))
            }
            DataType::Int8 => Self::int(int(i8::MIN.into(), i8::MAX.into())? as i64, 1),
            DataType::Int16 => Self::int(int(i16::MIN.into(), i16::MAX.into())? as i64, 2),
            DataType::Int32 => Self::int(int(i32::MIN.into(), i32::MAX.into())? as i64, 4),
            DataType::Int64 => Self::int(int(i64::MIN.into(), i64::MAX.into())? as i64, 8),
            // NaT is i64::MIN, written as such or as "NaT".
            DataType::DateTime64(_) | DataType::TimeDelta64(_) => match v {
                Value::String(s) if s == "NaT" => Self::int(i64::MIN, 8),
                _ => Self::int(int(i64::MIN.into(), i64::MAX.into())? as i64, 8),
            },
            DataType::UInt8 => Self::uint(int(0, u8::MAX.into())? as u64, 1),
            DataType::UInt16 => Self::uint(int(0, u16::MAX.into())? as u64, 2),
            DataType::UInt32 => Self::uint(int(0, u32::MAX.into())? as u64, 4),
            DataType::UInt64 => Self::uint(int(0, u64::MAX.into())? as u64, 8),
            DataType::Float16 => {
                let bits = match hex_bits(v, 2) {
                    Some(b) => b as u16,
                    None => f64_to_f16_bits(float_value(v).ok_or_else(bad)?),
                };
                FillValue::of(bits.to_le_bytes().to_vec(), Scalar::Float(f16_bits_to_f64(bits)))
            }
            DataType::Float32 => {
                let bits = match (hex_bits(v, 4), v) {
                    (Some(b), _) => b as u32,
                    // Rounded once, from the text (`0.1` is the f32 nearest 0.1).
                    (None, Value::Number(n)) => n.as_f32().ok_or_else(bad)?.to_bits(),
                    (None, _) => (float_value(v).ok_or_else(bad)? as f32).to_bits(),
                };
                FillValue::of(bits.to_le_bytes().to_vec(), Scalar::Float(f32::from_bits(bits) as f64))
            }
            DataType::Float64 => Self::float64(v).ok_or_else(bad)?,
            DataType::RawBytes(_)
            | DataType::Structured(_)
            | DataType::String
            | DataType::Bytes
            | DataType::Json
            | DataType::FixedUtf32(_)
            | DataType::FixedBytes(_)
            | DataType::FixedString(..) => Self::parse_bytes(dtype, v)?,
            DataType::Complex64 | DataType::Complex128 => {
                let part = if dtype == DataType::Complex64 { DataType::Float32 } else { DataType::Float64 };
                let (re, im) = match v {
                    Value::Array(p) if p.len() == 2 => (&p[0], &p[1]),
                    _ => return Err(bad()),
                };
                let (re, im) = (Self::parse(part, re)?, Self::parse(part, im)?);
                let (Scalar::Float(a), Scalar::Float(b)) = (re.value, im.value) else { return Err(bad()) };
                FillValue::of([re.bytes, im.bytes].concat(), Scalar::Complex(a, b))
            }
        })
    }

    /// The fill of a type of bytes or text.
    fn parse_bytes(dtype: DataType, v: &Value) -> Result<FillValue> {
        let bad = || Error::new(ErrorCode::InvalidMetadata, format!("invalid fill_value {v} for {}", dtype.name()));
        Ok(match dtype {
        DataType::RawBytes(n) | DataType::Structured(n) => {
            let bytes = match v {
                Value::String(s) => base64(s).ok_or_else(bad)?,
                Value::Number(z) if z.as_u64() == Some(0) => alloc::vec![0; n as usize],
                Value::Array(a) => a
                    .iter()
                    .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect::<Option<_>>()
                    .ok_or_else(bad)?,
                _ => return Err(bad()),
            };
            if bytes.len() != n as usize {
                return Err(bad());
            }
            FillValue::of(bytes, Scalar::Bytes)
        }
        DataType::String => match v {
            Value::String(t) => FillValue::variable(t.as_bytes().to_vec(), Scalar::Text),
            // Zarr v2 object arrays: null (or the old default 0) reads as empty text.
            Value::Null => FillValue::variable(Vec::new(), Scalar::Text),
            Value::Number(z) if z.as_u64() == Some(0) => FillValue::variable(Vec::new(), Scalar::Text),
            _ => return Err(bad()),
        },
        DataType::Bytes => match v {
            Value::String(t) => FillValue::variable(base64(t).ok_or_else(bad)?, Scalar::Bytes),
            Value::Null => FillValue::variable(Vec::new(), Scalar::Bytes),
            Value::Number(z) if z.as_u64() == Some(0) => FillValue::variable(Vec::new(), Scalar::Bytes),
            _ => return Err(bad()),
        },
        DataType::Json => FillValue::variable(alloc::string::ToString::to_string(v).into_bytes(), Scalar::Json),
        DataType::FixedUtf32(n) => {
            let text = match v {
                Value::String(t) => t.as_str(),
                Value::Null => "",
                Value::Number(z) if z.as_u64() == Some(0) => "",
                _ => return Err(bad()),
            };
            let mut bytes = alloc::vec![0u8; 4 * n as usize];
            for (k, c) in text.chars().enumerate() {
                bytes.get_mut(4 * k..4 * k + 4).ok_or_else(bad)?.copy_from_slice(&(c as u32).to_le_bytes());
            }
            FillValue::of(bytes, Scalar::Text)
        }
        DataType::FixedBytes(_) | DataType::FixedString(_) => {
            let n = dtype.size();
            let mut bytes = match v {
                Value::String(t) => base64(t).ok_or_else(bad)?,
                Value::Null => Vec::new(),
                Value::Number(z) if z.as_u64() == Some(0) => Vec::new(),
                _ => return Err(bad()),
            };
            if bytes.len() > n {
                return Err(bad());
            }
            bytes.resize(n, 0);
            FillValue::of(bytes, fixed_scalar(dtype))
        }
            _ => return Err(bad()),
        })
    }

    fn float64(v: &Value) -> Option<FillValue> {
        let bits = match hex_bits(v, 8) {
            Some(b) => b,
            None => float_value(v)?.to_bits(),
        };
        Some(FillValue::of(bits.to_le_bytes().to_vec(), Scalar::Float(f64::from_bits(bits))))
    }

    /// All-zero bytes (formats without a fill value read absent chunks as 0).
    pub fn zero(dtype: DataType) -> FillValue {
        let value = match dtype {
            DataType::Bool => Scalar::Bool(false),
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => Scalar::Int(0),
            DataType::DateTime64(_) | DataType::TimeDelta64(_) => Scalar::Int(0),
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => Scalar::UInt(0),
            DataType::Float16 | DataType::Float32 | DataType::Float64 => Scalar::Float(0.0),
            DataType::Complex64 | DataType::Complex128 => Scalar::Complex(0.0, 0.0),
            DataType::RawBytes(_) | DataType::Structured(_) | DataType::Bytes | DataType::FixedBytes(_) => {
                Scalar::Bytes
            }
            DataType::String | DataType::FixedUtf32(_) | DataType::FixedString(..) => Scalar::Text,
            DataType::Json => Scalar::Json,
        };
        if dtype == DataType::Json {
            return FillValue::variable(b"null".to_vec(), value);
        }
        if dtype.is_variable() {
            return FillValue::variable(Vec::new(), value);
        }
        FillValue::of(alloc::vec![0; dtype.size()], value)
    }

    fn of(bytes: Vec<u8>, value: Scalar) -> FillValue {
        FillValue { bytes, value, heap: Vec::new() }
    }

    /// A variable-length fill: its handle, and its contents as the heap.
    fn variable(contents: Vec<u8>, value: Scalar) -> FillValue {
        FillValue { bytes: handle(0, contents.len()).to_vec(), value, heap: contents }
    }

    fn int(x: i64, size: usize) -> FillValue {
        FillValue::of(x.to_le_bytes()[..size].to_vec(), Scalar::Int(x))
    }
    fn uint(x: u64, size: usize) -> FillValue {
        FillValue::of(x.to_le_bytes()[..size].to_vec(), Scalar::UInt(x))
    }

    /// `n` elements of the fill value, or `TooLarge` when they cannot be had.
    pub fn try_repeat(&self, n: usize) -> Result<Vec<u8>> {
        let len = n.checked_mul(self.bytes.len()).ok_or_else(|| Error::new(ErrorCode::TooLarge, "size overflows"))?;
        let mut out = crate::core::error::zeroed(len)?;
        if self.bytes.iter().any(|&b| b != 0) && len > 0 {
            let k = self.bytes.len();
            out[..k].copy_from_slice(&self.bytes);
            let mut have = k;
            while have < len {
                let m = have.min(len - have);
                out.copy_within(0..m, have);
                have += m;
            }
        }
        Ok(out)
    }
}

/// The reported value of a fixed-length bytes or string fill.
fn fixed_scalar(dtype: DataType) -> Scalar {
    if matches!(dtype, DataType::FixedString(..)) { Scalar::Text } else { Scalar::Bytes }
}

fn float_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// `"0x7fc00000"`: the raw bit pattern, which must have exactly the element's width.
fn hex_bits(v: &Value, size: usize) -> Option<u64> {
    let s = v.as_str()?.strip_prefix("0x")?;
    if s.len() != size * 2 {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Round-to-nearest-even conversion, as numpy does.
pub fn f64_to_f16_bits(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < pow2(-25) || a == 0.0 {
        // Below half the smallest subnormal (ties at exactly 2^-25 round to even = 0).
        return sign;
    }
    let exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
    if exp < -14 {
        // Subnormal: value = m * 2^-24 with m in 1..1023.
        let m = a / pow2(-24);
        return sign | round_even(m) as u16;
    }
    let mant = a / pow2(exp) - 1.0; // in [0, 1)
    let m = round_even(mant * 1024.0);
    let (e, m) = if m >= 1024 { (exp + 1, 0) } else { (exp, m) };
    if e > 15 {
        return sign | 0x7c00;
    }
    sign | (((e + 15) as u16) << 10) | m as u16
}

fn round_even(x: f64) -> u64 {
    let f = x as u64; // floor for positive x
    let r = x - f as f64;
    if r > 0.5 || (r == 0.5 && f % 2 == 1) {
        f + 1
    } else {
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    /// An `InvalidMetadata` naming the fill value and the type (`"{value} for {type}"`).
    fn invalid_fill(r: Result<FillValue>, what: &str) {
        let e = r.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMetadata, "{e}");
        assert!(e.message.contains(&alloc::format!("invalid fill_value {what}")), "{what}: {e}");
    }

    #[test]
    fn int64_fill_is_exact() {
        let f = FillValue::parse(DataType::Int64, &json!(-9007199254740993i64)).unwrap();
        assert_eq!(f.value, Scalar::Int(-9007199254740993));
        assert_eq!(f.bytes, (-9007199254740993i64).to_le_bytes());
        let f =
            FillValue::parse(DataType::UInt64, &crate::core::json::parse(b"18446744073709551615").unwrap()).unwrap();
        assert_eq!(f.value, Scalar::UInt(u64::MAX));
        let f = FillValue::parse(DataType::Int64, &crate::core::json::parse(b"9007199254740993").unwrap()).unwrap();
        assert_eq!((f.value, f.bytes), (Scalar::Int(9007199254740993), 9007199254740993i64.to_le_bytes().to_vec()));
        // Above 2^53: a float in between would have made it 9007199254740992.
        let f = FillValue::parse(DataType::UInt64, &crate::core::json::parse(b"9007199254740993").unwrap()).unwrap();
        assert_eq!(f.value, Scalar::UInt(9007199254740993));
    }

    #[test]
    fn float_fills() {
        let f = FillValue::parse(DataType::Float32, &json!("NaN")).unwrap();
        assert!(matches!(f.value, Scalar::Float(x) if x.is_nan()));
        let f = FillValue::parse(DataType::Float32, &json!("0x7fc00001")).unwrap();
        assert_eq!(f.bytes, 0x7fc00001u32.to_le_bytes());
        let f = FillValue::parse(DataType::Float64, &json!("-Infinity")).unwrap();
        assert_eq!(f.value, Scalar::Float(f64::NEG_INFINITY));
        let f = FillValue::parse(DataType::Float32, &json!(0.1)).unwrap();
        assert_eq!(f.bytes, 0.1f32.to_le_bytes());
        // Nearest f32 of this decimal is 1 + 2^-23; through f64 it would tie and round to 1.
        let t = b"1.00000005960464482326530313422679527425765991210938";
        let f = FillValue::parse(DataType::Float32, &crate::core::json::parse(t).unwrap()).unwrap();
        assert_eq!(f.bytes, (1.0 + f32::EPSILON).to_le_bytes());
        invalid_fill(
            FillValue::parse(DataType::Float64, &crate::core::json::parse(b"1e400").unwrap()),
            "1e400 for float64",
        );
        let f = FillValue::parse(DataType::Float16, &json!(1.5)).unwrap();
        assert_eq!(f.bytes, 0x3e00u16.to_le_bytes());
        invalid_fill(FillValue::parse(DataType::UInt8, &json!(256)), "256 for uint8");
        invalid_fill(FillValue::parse(DataType::Int8, &json!("x")), "\"x\" for int8");
        assert_eq!(FillValue::parse(DataType::Bool, &json!(true)).unwrap().bytes, [1]);
    }

    #[test]
    fn raw_and_structured() {
        let t = DataType::parse(
            &json!({"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}),
        )
        .unwrap();
        assert_eq!(t, DataType::Structured(12));
        let f = FillValue::parse(t, &json!("AAAAAAAAAAAAAAAA")).unwrap();
        assert_eq!(f.bytes, [0; 12]);
        invalid_fill(FillValue::parse(t, &json!("AAAA")), "\"AAAA\" for structured");
        let r = DataType::parse(&json!({"name": "raw_bytes", "configuration": {"length_bytes": 3}})).unwrap();
        assert_eq!(FillValue::parse(r, &json!("AQID")).unwrap().bytes, [1, 2, 3]);
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert!(base64("a*b").is_none());
    }

    #[test]
    fn time_types_and_their_fills() {
        let t = |v: Value| DataType::parse(&v);
        let dt = t(json!({"name": "numpy.datetime64", "configuration": {"unit": "μs", "scale_factor": 10}})).unwrap();
        let u = dt.time_unit().unwrap();
        assert_eq!((dt.name(), u.unit(), u.scale(), dt.size()), ("datetime64", "us", 10, 8));
        let td = t(json!({"name": "numpy.timedelta64", "configuration": {"unit": "generic", "scale_factor": 1}})).unwrap();
        assert_eq!((td.name(), td.time_unit().unwrap().unit()), ("timedelta64", "generic"));
        let bads = [
            json!({"name": "numpy.datetime64", "configuration": {"unit": "fortnight", "scale_factor": 1}}),
            json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}}),
            json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1u64 << 40}}),
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "s"}}),
        ];
        for bad in bads {
            assert_eq!(t(bad.clone()).unwrap_err().code, ErrorCode::InvalidMetadata, "{bad}");
        }
        let nat = FillValue::parse(dt, &json!("NaT")).unwrap();
        assert_eq!((nat.value, &nat.bytes[..]), (Scalar::Int(i64::MIN), &i64::MIN.to_le_bytes()[..]));
        assert_eq!(FillValue::parse(dt, &json!(i64::MIN)).unwrap(), nat);
        assert_eq!(FillValue::parse(td, &json!(-7)).unwrap().value, Scalar::Int(-7));
        invalid_fill(FillValue::parse(td, &json!("nat")), "\"nat\" for timedelta64");
        invalid_fill(FillValue::parse(td, &json!(1.5)), "1.5 for timedelta64");
        assert_eq!(TimeUnit::parse_numpy("10us"), TimeUnit::new("us", 10));
        assert_eq!(TimeUnit::parse_numpy("ns"), TimeUnit::new("ns", 1));
        assert_eq!(TimeUnit::parse_numpy("99999999999999999999s"), None);
        assert_eq!(TimeUnit::parse_numpy("0s"), None);
    }

    #[test]
    fn fixed_length_strings_end_where_their_padding_says() {
        let t = |c, p| StrType::parse(8, c, p).unwrap();
        let (term, pad, space) = (t("ascii", "nullterm"), t("ascii", "nullpad"), t("ascii", "spacepad"));
        assert_eq!(term.content(b"be\0ta\0"), b"be");
        assert_eq!(term.content(b"gamma!"), b"gamma!");
        assert_eq!(pad.content(b"a\0b\0\0"), b"a\0b");
        assert_eq!(pad.content(b"\0\0"), b"");
        assert_eq!(space.content(b"x y   "), b"x y");
        // (HDF5 drops the spaces, NumPy then the NULs they left at the end.)
        assert_eq!(space.content(b"t\tz\0  "), b"t\tz");
        assert_eq!(space.content(b"  lead"), b"  lead");
        assert_eq!(space.content(b""), b"");
        assert_eq!((term.charset(), term.padding(), space.padding()), ("ascii", "nullterm", "spacepad"));
        assert_eq!(StrType::parse(8, "latin-1", "nullpad"), None);
        assert_eq!(StrType::parse(8, "utf-8", "nul"), None);
        assert_eq!(StrType::parse(0, "utf-8", "nullpad"), None);
        assert_eq!(StrType::parse(1 << 29, "utf-8", "nullpad"), None);
        assert_eq!(StrType::parse((1 << 29) - 1, "utf-8", "nullpad").map(StrType::size), Some((1 << 29) - 1));
    }

    #[test]
    fn fixed_length_strings_as_text() {
        let utf8 = StrType::parse(8, "utf-8", "nullpad").unwrap();
        let ascii = StrType::parse(8, "ascii", "nullpad").unwrap();
        assert_eq!(utf8.text("h\u{e9}llo\0".as_bytes()), "h\u{e9}llo");
        // Malformed UTF-8: U+FFFD per maximal subpart, as TextDecoder and Python's "replace" do.
        assert_eq!(utf8.text(b"\xf0\x80\x80\x80"), "\u{fffd}\u{fffd}\u{fffd}\u{fffd}");
        assert_eq!(utf8.text(b"\xe2\x82"), "\u{fffd}");
        assert_eq!(utf8.text(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(utf8.text(b"\xc3("), "\u{fffd}(");
        // ASCII byte by byte: a high byte is kept as Latin-1.
        assert_eq!(ascii.text(b"caf\xe9\0"), "caf\u{e9}");
        assert_eq!(ascii.text(b"\xff\x80"), "\u{ff}\u{80}");
    }

    #[test]
    fn fixed_length_string_type_and_fill() {
        let v = json!({"name": "fixed_length_string", "configuration": {"length_bytes": 6, "charset": "utf-8", "padding": "spacepad"}});
        let t = DataType::parse(&v).unwrap();
        assert_eq!(t, DataType::FixedString(StrType::new(6, true, Pad::SpacePad).unwrap()));
        // Every charset and padding survives its packing into one byte.
        for b in 0..6 {
            let st = StrType(7 << 3 | b);
            assert_eq!(StrType::parse(7, st.charset(), st.padding()), Some(st), "{b}");
        }
        assert_eq!((t.name(), t.size(), t.swap_unit(), t.is_variable()), ("fixed_length_string", 6, 1, false));
        let f = FillValue::parse(t, &json!("ZsOvbGw=")).unwrap();
        assert_eq!(f.bytes, b"f\xc3\xafll\0");
        invalid_fill(FillValue::parse(t, &json!("ZsOvbGwxMjM=")), "\"ZsOvbGwxMjM=\" for fixed_length_string");
        for bad in [
            json!({"name": "fixed_length_string", "configuration": {"length_bytes": 6, "charset": "utf-16", "padding": "nullpad"}}),
            json!({"name": "fixed_length_string", "configuration": {"length_bytes": 0, "charset": "ascii", "padding": "nullpad"}}),
            json!({"name": "fixed_length_string", "configuration": {"length_bytes": 6, "charset": "ascii"}}),
        ] {
            let e = DataType::parse(&bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMetadata, "{bad}");
            assert!(e.message.contains("fixed_length_string needs length_bytes (1 to 2^29-1), charset and padding"), "{e}");
        }
    }

    #[test]
    fn f16_round_trip() {
        for h in 0u16..=0xffff {
            let x = f16_bits_to_f64(h);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f64_to_f16_bits(x), h, "{h:#x} {x}");
        }
        assert_eq!(f64_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f64_to_f16_bits(1e10), 0x7c00);
    }
}
