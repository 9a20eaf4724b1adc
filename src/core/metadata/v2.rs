//! Zarr v2: `.zarray` (+ `.zattrs`) read into the same [`ArrayMetadata`] as Zarr v3, its
//! order, filters and compressor spelled as v3 codecs.
use super::array::{ArrayMetadata, Format, Storage};
use super::dtype::DataType;
use super::grid::Grid;
use super::json::{bytes_codec, fill_or_zero, memory_order, numcodecs, parse_object, shape_of, Named};
use super::keys::KeyEncoding;
use crate::core::error::{err, invalid, Error, ErrorCode, Result};
use crate::core::json::{self, Keep, Raw, Value};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// A NumPy type string such as `<u2`, `>f8`, `|b1` → the data type and whether it is big endian.
pub fn parse_dtype(v: &Value) -> Result<(DataType, bool)> {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(_) => return err(ErrorCode::UnsupportedDataType, format!("unsupported structured dtype {v}")),
        _ => return Err(invalid("dtype must be a string")),
    };
    let (order, kind) = match s.as_bytes().first() {
        Some(b'<' | b'|' | b'=') => (false, &s[1..]),
        Some(b'>') => (true, &s[1..]),
        _ => (false, s),
    };
    // Sized kinds: `<U12` (UTF-32 text), `|S12` (bytes), `|V12` (raw), `|O` (objects).
    let sized = |k: &str| kind.strip_prefix(k).and_then(|n| n.parse::<u32>().ok()).filter(|&n| n > 0);
    if let Some(n) = sized("U") {
        return Ok((DataType::FixedUtf32(n), order));
    }
    if let Some(n) = sized("S") {
        return Ok((DataType::FixedBytes(n), false));
    }
    if let Some(n) = sized("V") {
        return Ok((DataType::RawBytes(n), false));
    }
    // `<M8[ns]`, `>m8[10s]`, `<M8` (generic).
    let time = |k: &str| {
        let rest = kind.strip_prefix(k)?;
        let unit = if rest.is_empty() { "generic" } else { rest.strip_prefix('[')?.strip_suffix(']')? };
        crate::core::metadata::dtype::TimeUnit::parse_numpy(unit)
    };
    let t = match kind {
        "b1" => DataType::Bool,
        "i1" => DataType::Int8,
        "i2" => DataType::Int16,
        "i4" => DataType::Int32,
        "i8" => DataType::Int64,
        "u1" => DataType::UInt8,
        "u2" => DataType::UInt16,
        "u4" => DataType::UInt32,
        "u8" => DataType::UInt64,
        "f2" => DataType::Float16,
        "f4" => DataType::Float32,
        "f8" => DataType::Float64,
        "c8" => DataType::Complex64,
        "c16" => DataType::Complex128,
        _ => match (time("M8"), time("m8")) {
            (Some(t), _) => DataType::DateTime64(t),
            (_, Some(t)) => DataType::TimeDelta64(t),
            _ => return err(ErrorCode::UnsupportedDataType, format!("unsupported data type \"{s}\"")),
        },
    };
    Ok((t, order && t.swap_unit() > 1))
}

/// `.zarray` plus `.zattrs` (none when absent).
pub fn parse_array(text: &[u8], zattrs: Option<&[u8]>) -> Result<ArrayMetadata> {
    let attributes = parse_attributes(zattrs)?;
    let o = parse_object(text, ".zarray")?;
    if o.get("zarr_format").and_then(Value::as_u64) != Some(2) {
        return Err(invalid("zarr_format must be 2"));
    }
    let shape = shape_of(o.get("shape"), "shape", true)?;
    let chunks = shape_of(o.get("chunks"), "chunks", false)?;
    if chunks.len() != shape.len() {
        return Err(invalid("chunks and shape have different lengths"));
    }
    let filters = match o.get("filters") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(f)) => f.iter().map(|x| numcodecs(x, "a filter")).collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(invalid("filters must be a list or null")),
    };
    let dtype = o.get("dtype").unwrap_or(&Value::Null);
    let (data_type, big_endian) =
        if dtype.as_str() == Some("|O") { (object_type(&filters)?, false) } else { parse_dtype(dtype)? };
    let fill_value = fill_or_zero(data_type, o.get("fill_value"))?;
    // Encoding order: the chunk in memory order, the filters, its bytes, the compressor. An
    // object array's first filter is its object codec: it makes the bytes.
    let mut codecs: Vec<_> = memory_order(o.get("order"), shape.len(), "order")?.into_iter().collect();
    let object_codec = data_type.is_variable() && filters.first().is_some_and(|f| f.name != "numcodecs.categorize");
    // Filters on values come before the bytes (array→array); filters on bytes (shuffle,
    // checksums) after them, in the order written — one of those before a value filter has no
    // place in a v3 chain, and no writer we know makes one.
    let on_bytes = |f: &Named| BYTE_FILTERS.contains(&f.name.as_str());
    if let Some(k) = filters.iter().position(on_bytes) {
        if filters[k..].iter().any(|f| !on_bytes(f)) {
            return Err(Error::new(
                ErrorCode::UnsupportedCodec,
                format!("unsupported filter order: \"{}\" before a filter on values", filters[k].name),
            ));
        }
    }
    let (values, bytes_filters): (Vec<&Named>, Vec<&Named>) = filters.iter().partition(|f| !on_bytes(f));
    for (k, f) in values.iter().enumerate() {
        if k == 0 && object_codec {
            codecs.push(Named::new(f.name.trim_start_matches("numcodecs."), f.configuration.clone()));
        } else {
            codecs.push((*f).clone());
        }
    }
    if !object_codec {
        // The stored elements are the last value filter's output (categorize's codes, delta's
        // or fixedscaleoffset's astype, …), in that type's byte order.
        let big = values
            .iter()
            .rev()
            .find_map(|f| {
                let c = &f.configuration;
                let t = c.get("astype").or_else(|| c.get("encode_dtype")).or_else(|| c.get("dtype"))?;
                parse_dtype(t).ok().map(|t| t.1)
            })
            .unwrap_or(big_endian);
        codecs.push(bytes_codec(big));
    }
    let has_byte_filters = !bytes_filters.is_empty();
    codecs.extend(bytes_filters.into_iter().cloned());
    match o.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => {
            let c = numcodecs(c, "compressor")?;
            // pcodec compresses the elements themselves: in v3 terms it is the array→bytes
            // codec, in the place of `bytes`.
            if c.name == "numcodecs.pcodec" && !object_codec && !has_byte_filters {
                codecs.pop();
            }
            codecs.push(c);
        }
    }
    let separator = match o.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(s) if s.as_str() == Some(".") => '.',
        Some(s) if s.as_str() == Some("/") => '/',
        Some(_) => return Err(invalid("dimension_separator must be \".\" or \"/\"")),
    };
    // xarray's convention for dimension names in Zarr v2: that member alone is parsed.
    let keep = |k: &str| if k == "_ARRAY_DIMENSIONS" { Keep::Parse } else { Keep::Skip };
    let dims = json::parse_object_with(attributes.as_str().as_bytes(), keep).ok().flatten();
    let dimension_names = match dims.as_ref().and_then(|f| f.object.get("_ARRAY_DIMENSIONS")) {
        Some(Value::Array(names)) if names.len() == shape.len() => {
            Some(names.iter().map(|n| n.as_str().map(String::from)).collect())
        }
        _ => None,
    };
    Ok(ArrayMetadata {
        format: Format::Zarr2,
        storage: Storage::Zarr { grid: Grid::regular(&chunks, &shape), keys: KeyEncoding::V2 { separator }, codecs },
        shape,
        data_type,
        fill_value,
        attributes,
        dimension_names,
        fields: None,
    })
}

/// numcodecs filters that work on the stored bytes rather than on values; compressors too, which
/// kerchunk lists as filters (an HDF5 dataset's pipeline: `[shuffle, zlib]`, no compressor).
const BYTE_FILTERS: [&str; 13] = [
    "numcodecs.zlib",
    "numcodecs.gzip",
    "numcodecs.zstd",
    "numcodecs.blosc",
    "numcodecs.lz4",
    "numcodecs.bz2",
    "numcodecs.lzma",
    "numcodecs.shuffle",
    "numcodecs.crc32",
    "numcodecs.adler32",
    "numcodecs.crc32c",
    "numcodecs.fletcher32",
    "numcodecs.jenkins_lookup3",
];

/// The element type of an object (`|O`) array, from its object codec (the first filter).
fn object_type(filters: &[Named]) -> Result<DataType> {
    let first = filters.first().map(|f| f.name.trim_start_matches("numcodecs."));
    match first {
        Some("vlen-utf8") | Some("categorize") => Ok(DataType::String),
        Some("vlen-bytes") => Ok(DataType::Bytes),
        Some("json2") => Ok(DataType::Json),
        Some(other) => err(
            ErrorCode::UnsupportedDataType,
            format!("unsupported object array (dtype \"|O\") encoded with \"{other}\" (vlen-utf8, vlen-bytes, json2 and categorize are read)"),
        ),
        None => err(ErrorCode::InvalidMetadata, "an object array (dtype \"|O\") needs an object codec as its first filter"),
    }
}

/// `.zattrs` as JSON text of an object, not parsed (`{}` when absent).
pub fn parse_attributes(text: Option<&[u8]>) -> Result<Raw> {
    let Some(t) = text else { return Ok(Raw::empty_object()) };
    match core::str::from_utf8(t).ok().and_then(|t| Raw::new(t).ok()) {
        Some(r) if r.is_object() => Ok(r),
        _ => Err(invalid(".zattrs must be a JSON object")),
    }
}

/// `.zgroup`: only its version is checked.
pub fn check_group(text: &[u8]) -> Result<()> {
    match json::parse(text) {
        Ok(v) if v.get("zarr_format").and_then(Value::as_u64) == Some(2) => Ok(()),
        _ => Err(invalid(".zgroup must be a JSON object with zarr_format 2")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    #[test]
    fn numpy_time_type_strings() {
        let p = |s: &str| parse_dtype(&json!(s));
        let (t, big) = p(">m8[10s]").unwrap();
        assert_eq!((t.name(), t.time_unit().unwrap().unit(), t.time_unit().unwrap().scale(), big), ("timedelta64", "s", 10, true));
        let (t, big) = p("<M8[ns]").unwrap();
        assert_eq!((t.name(), t.time_unit().unwrap().unit(), big), ("datetime64", "ns", false));
        assert_eq!(p("<M8").unwrap().0.time_unit().unwrap().unit(), "generic");
        for bad in ["<M8[", "<M8[ns", "<M8[xs]", "<M8[0s]", "<m16[s]", "<M4[s]"] {
            assert_eq!(p(bad).unwrap_err().code, ErrorCode::UnsupportedDataType, "{bad}");
        }
    }

    #[test]
    fn dtypes() {
        assert_eq!(parse_dtype(&json!("<u2")).unwrap(), (DataType::UInt16, false));
        assert_eq!(parse_dtype(&json!(">f8")).unwrap(), (DataType::Float64, true));
        assert_eq!(parse_dtype(&json!("|b1")).unwrap(), (DataType::Bool, false));
        assert_eq!(parse_dtype(&json!(">u1")).unwrap(), (DataType::UInt8, false));
        assert_eq!(parse_dtype(&json!("<q8")).unwrap_err().code, ErrorCode::UnsupportedDataType);
        assert_eq!(parse_dtype(&json!([["a", "<i4"]])).unwrap_err().code, ErrorCode::UnsupportedDataType);
    }

    #[test]
    fn zarray_as_v3_codecs() {
        let z = br#"{"zarr_format":2,"shape":[5,6],"chunks":[2,3],"dtype":">i4","order":"F",
            "compressor":{"id":"zlib","level":1},"fill_value":"NaN","filters":null}"#;
        // NaN is not an int32.
        assert_eq!(parse_array(z, None).unwrap_err().code, ErrorCode::InvalidMetadata);
        let z = br#"{"zarr_format":2,"shape":[5,6],"chunks":[2,3],"dtype":">f4","order":"F",
            "compressor":{"id":"zlib","level":1},"fill_value":"NaN","filters":[{"id":"delta","dtype":">f4"}],
            "dimension_separator":"/"}"#;
        let m = parse_array(z, None).unwrap();
        let Storage::Zarr { keys, codecs, .. } = &m.storage else { panic!() };
        assert_eq!(keys.key(&[1, 2]), "1/2");
        let names: Vec<&str> = codecs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["transpose", "numcodecs.delta", "bytes", "numcodecs.zlib"]);
        assert_eq!(codecs[0].configuration["order"], json!([1, 0]));
        assert_eq!(codecs[2], bytes_codec(true));
        assert_eq!(codecs[3], Named::new("numcodecs.zlib", json!({"level": 1}).as_object().unwrap().clone()));
    }
}
