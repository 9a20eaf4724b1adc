//! Zarr v2: `.zarray` (+ `.zattrs`) read into the same [`ArrayMetadata`] as Zarr v3.
use super::codec::{BytesCodec, CodecChain};
use super::dtype::{DataType, FillValue};
use super::error::{err, Error, ErrorCode, Result};
use super::grid::Grid;
use super::metadata::{shape_of, ArrayMetadata, KeyEncoding};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::new(ErrorCode::InvalidMetadata, msg.into()))
}

/// A NumPy type string such as `<u2`, `>f8`, `|b1` → the data type and whether it is big endian.
pub fn parse_dtype(v: &Value) -> Result<(DataType, bool)> {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(_) => return err(ErrorCode::UnsupportedDataType, format!("unsupported structured dtype {v}")),
        _ => return invalid("dtype must be a string"),
    };
    let (order, kind) = match s.as_bytes().first() {
        Some(b'<' | b'|' | b'=') => (false, &s[1..]),
        Some(b'>') => (true, &s[1..]),
        _ => (false, s),
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
        _ => return err(ErrorCode::UnsupportedDataType, format!("unsupported data type {s:?}")),
    };
    Ok((t, order && t.swap_unit() > 1))
}

/// `.zarray` plus the parsed `.zattrs` (empty when absent).
pub fn parse_array(text: &[u8], attributes: Map<String, Value>) -> Result<ArrayMetadata> {
    let v: Value = serde_json::from_slice(text)
        .map_err(|e| Error::new(ErrorCode::InvalidMetadata, format!(".zarray is not valid JSON: {e}")))?;
    let o = match v.as_object() {
        Some(o) => o,
        None => return invalid(".zarray must be a JSON object"),
    };
    if o.get("zarr_format").and_then(Value::as_u64) != Some(2) {
        return invalid("zarr_format must be 2");
    }
    let shape = shape_of(o.get("shape"), "shape", true)?;
    let chunks = shape_of(o.get("chunks"), "chunks", false)?;
    if chunks.len() != shape.len() {
        return invalid("chunks and shape have different lengths");
    }
    let (data_type, big_endian) = parse_dtype(o.get("dtype").unwrap_or(&Value::Null))?;
    let fill_value = match o.get("fill_value") {
        // No fill value: what was never written is undefined; zero is what readers use.
        None | Some(Value::Null) => FillValue::zero(data_type),
        Some(f) => FillValue::parse(data_type, f)?,
    };
    let transposes = match o.get("order").and_then(Value::as_str) {
        None | Some("C") => Vec::new(),
        // Fortran order: the stored chunk is the C-order transpose, i.e. axes reversed.
        Some("F") => alloc::vec![(0..shape.len()).rev().collect()],
        Some(other) => return invalid(format!("order must be \"C\" or \"F\", found {other:?}")),
    };
    match o.get("filters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(f)) if f.is_empty() => {}
        Some(Value::Array(f)) => {
            let ids: Vec<&str> = f.iter().map(|x| x.get("id").and_then(Value::as_str).unwrap_or("?")).collect();
            return err(ErrorCode::UnsupportedCodec, format!("unsupported filters {ids:?}"));
        }
        Some(_) => return invalid("filters must be a list or null"),
    }
    let bytes_codecs = BytesCodec::numcodecs(o.get("compressor").unwrap_or(&Value::Null))?.into_iter().collect();
    let separator = match o.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(s) if s.as_str() == Some(".") => '.',
        Some(s) if s.as_str() == Some("/") => '/',
        Some(_) => return invalid("dimension_separator must be \".\" or \"/\""),
    };
    // xarray's convention for dimension names in Zarr v2.
    let dimension_names = match attributes.get("_ARRAY_DIMENSIONS") {
        Some(Value::Array(names)) if names.len() == shape.len() => {
            Some(names.iter().map(|n| n.as_str().map(String::from)).collect())
        }
        _ => None,
    };
    Ok(ArrayMetadata {
        grid: Grid::regular(&chunks, &shape),
        shape,
        data_type,
        key_encoding: KeyEncoding::V2 { separator },
        fill_value,
        codecs: CodecChain::Plain { transposes, big_endian, bytes_codecs },
        attributes,
        dimension_names,
        extra: Map::new(),
    })
}

/// `.zattrs` (or `{}` when absent).
pub fn parse_attributes(text: Option<&[u8]>) -> Result<Map<String, Value>> {
    match text {
        None => Ok(Map::new()),
        Some(t) => match serde_json::from_slice(t) {
            Ok(Value::Object(m)) => Ok(m),
            _ => invalid(".zattrs must be a JSON object"),
        },
    }
}

/// `.zgroup`: only its version is checked.
pub fn check_group(text: &[u8]) -> Result<()> {
    match serde_json::from_slice::<Value>(text) {
        Ok(v) if v.get("zarr_format").and_then(Value::as_u64) == Some(2) => Ok(()),
        _ => invalid(".zgroup must be a JSON object with zarr_format 2"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dtypes() {
        assert_eq!(parse_dtype(&json!("<u2")).unwrap(), (DataType::UInt16, false));
        assert_eq!(parse_dtype(&json!(">f8")).unwrap(), (DataType::Float64, true));
        assert_eq!(parse_dtype(&json!("|b1")).unwrap(), (DataType::Bool, false));
        assert_eq!(parse_dtype(&json!(">u1")).unwrap(), (DataType::UInt8, false));
        assert_eq!(parse_dtype(&json!("<M8[ns]")).unwrap_err().code, ErrorCode::UnsupportedDataType);
        assert_eq!(parse_dtype(&json!([["a", "<i4"]])).unwrap_err().code, ErrorCode::UnsupportedDataType);
    }

    #[test]
    fn zarray() {
        let z = br#"{"zarr_format":2,"shape":[5,6],"chunks":[2,3],"dtype":">i4","order":"F",
            "compressor":{"id":"zlib","level":1},"fill_value":"NaN","filters":null}"#;
        // NaN is not an int32.
        assert_eq!(parse_array(z, Map::new()).unwrap_err().code, ErrorCode::InvalidMetadata);
        let z = br#"{"zarr_format":2,"shape":[5,6],"chunks":[2,3],"dtype":">f4","order":"F",
            "compressor":{"id":"zlib","level":1},"fill_value":"NaN","filters":null,"dimension_separator":"/"}"#;
        let m = parse_array(z, Map::new()).unwrap();
        assert_eq!(m.key_encoding.key(&[1, 2]), "1/2");
        assert_eq!(
            m.codecs,
            CodecChain::Plain {
                transposes: alloc::vec![alloc::vec![1, 0]],
                big_endian: true,
                bytes_codecs: alloc::vec![BytesCodec::Zlib]
            }
        );
        let z = br#"{"zarr_format":2,"shape":[5],"chunks":[2],"dtype":"<u2","compressor":{"id":"bz2"},"fill_value":0}"#;
        assert_eq!(parse_array(z, Map::new()).unwrap_err().code, ErrorCode::UnsupportedCodec);
    }
}
