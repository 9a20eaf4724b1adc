//! JSON helpers every metadata flavour uses: objects, shapes, `{name, configuration}` pairs,
//! attributes, fill values, memory order.
use super::dtype::{DataType, FillValue};
use crate::core::error::{invalid, Result};
use crate::core::json::{self, Keep, Map, Raw, Value};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// A codec (or grid, key encoding) as metadata names it: `{"name": …, "configuration": {…}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    pub name: String,
    pub configuration: Map,
}

impl Named {
    pub fn new(name: impl Into<String>, configuration: Map) -> Named {
        Named { name: name.into(), configuration }
    }

    /// Parse one entry of a Zarr v3 list: a name alone, or `{name, configuration}`.
    pub fn parse(v: &Value, what: &str) -> Result<Named> {
        let (name, conf) = named(v, what)?;
        Ok(Named::new(name, conf.cloned().unwrap_or_default()))
    }
}

/// A document that must be a JSON object.
pub fn parse_object(text: &[u8], what: &str) -> Result<Map> {
    match json::parse(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(invalid(format!("{what} must be a JSON object"))),
        Err(e) => Err(invalid(format!("{what} is not valid JSON: {e}"))),
    }
}

/// A node's document (a JSON object): its members parsed, except `attributes`, kept as
/// (validated) text for [`attributes_of`].
pub fn parse_node(text: &[u8], what: &str) -> Result<(Map, Option<Raw>)> {
    // Consolidated members are read apart (metadata::consolidated), not parsed with the node.
    let keep = |k: &str| match k {
        "attributes" => Keep::Raw,
        "consolidated_metadata" => Keep::Skip,
        _ => Keep::Parse,
    };
    match json::parse_object_with(text, keep) {
        Ok(Some(f)) => {
            let attributes = f.raw("attributes");
            Ok((f.object, attributes))
        }
        Ok(None) => Err(invalid(format!("{what} must be a JSON object"))),
        Err(e) => Err(invalid(format!("{what} is not valid JSON: {e}"))),
    }
}

/// A list of non-negative integers (positive unless `allow_zero`).
pub fn shape_of(v: Option<&Value>, what: &str, allow_zero: bool) -> Result<Vec<u64>> {
    let arr = v.and_then(Value::as_array).ok_or_else(|| invalid(format!("{what} must be a list of integers")))?;
    arr.iter()
        .map(|d| match d.as_u64() {
            Some(0) if !allow_zero => Err(invalid(format!("{what} entries must be positive"))),
            Some(n) => Ok(n),
            None => Err(invalid(format!("{what} entries must be non-negative integers"))),
        })
        .collect()
}

/// `{"name": ..., "configuration": {...}}` (or a bare name) → (name, configuration).
pub fn named<'a>(v: &'a Value, what: &str) -> Result<(&'a str, Option<&'a Map>)> {
    match v {
        Value::String(s) => Ok((s.as_str(), None)),
        Value::Object(o) => {
            let name =
                o.get("name").and_then(Value::as_str).ok_or_else(|| invalid(format!("{what} needs a \"name\"")))?;
            let conf = match o.get("configuration") {
                None | Some(Value::Null) => None,
                Some(Value::Object(c)) => Some(c),
                Some(_) => return Err(invalid(format!("{what} \"configuration\" must be an object"))),
            };
            Ok((name, conf))
        }
        _ => Err(invalid(format!("{what} must be an object"))),
    }
}

/// A node's `attributes` as [`parse_node`] kept them: an object's text (absent or null: `{}`).
pub fn attributes_of(raw: Option<Raw>) -> Result<Raw> {
    match raw {
        None => Ok(Raw::empty_object()),
        Some(r) if r.is_null() => Ok(Raw::empty_object()),
        Some(r) if r.is_object() => Ok(r),
        Some(_) => Err(invalid("attributes must be an object")),
    }
}

/// A Zarr v2 / draft fill value: absent or null means undefined, which readers take as zero.
pub fn fill_or_zero(dtype: DataType, v: Option<&Value>) -> Result<FillValue> {
    match v {
        None | Some(Value::Null) => Ok(FillValue::zero(dtype)),
        Some(f) => FillValue::parse(dtype, f),
    }
}

/// A Zarr v2 `order` / draft `chunk_memory_layout`: `"F"` stores the C-order transpose of the
/// chunk (axes reversed), which is a `transpose` codec.
pub fn memory_order(v: Option<&Value>, ndim: usize, what: &str) -> Result<Option<Named>> {
    match v.and_then(Value::as_str) {
        None | Some("C") => Ok(None),
        Some("F") => {
            let order: Vec<Value> = (0..ndim).rev().map(Value::from).collect();
            let mut conf = Map::new();
            conf.insert("order".into(), Value::Array(order));
            Ok(Some(Named::new("transpose", conf)))
        }
        Some(other) => Err(invalid(format!("{what} must be \"C\" or \"F\", found \"{other}\""))),
    }
}

/// The `bytes` codec with an endianness.
pub fn bytes_codec(big_endian: bool) -> Named {
    let mut conf = Map::new();
    conf.insert("endian".into(), Value::from(if big_endian { "big" } else { "little" }));
    Named::new("bytes", conf)
}

/// A numcodecs codec (Zarr v2 `compressor` / `filters` entry `{"id": …, …}`, or the draft's
/// `{"codec": "https://purl.org/zarr/spec/codec/zlib/1.0", "configuration": …}`) under the
/// name zarr-python gives it in Zarr v3: `numcodecs.<id>`.
pub fn numcodecs(v: &Value, what: &str) -> Result<Named> {
    let o = v.as_object().ok_or_else(|| invalid(format!("{what} must be an object or null")))?;
    if let Some(Value::String(id)) = o.get("id") {
        let mut conf = o.clone();
        conf.remove("id");
        return Ok(Named::new(format!("numcodecs.{id}"), conf));
    }
    if let Some(Value::String(url)) = o.get("codec") {
        let id = url.trim_end_matches('/').rsplit('/').nth(1).unwrap_or(url);
        let conf = o.get("configuration").and_then(Value::as_object).cloned().unwrap_or_default();
        return Ok(Named::new(format!("numcodecs.{id}"), conf));
    }
    Err(invalid(format!("{what} needs an \"id\"")))
}
