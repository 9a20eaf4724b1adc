//! `zarr.json` for arrays and groups (Zarr v3).
use super::codec::CodecChain;
use super::dtype::{DataType, FillValue};
use super::error::{err, Error, ErrorCode, Result};
use super::grid::{Axis, Grid};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum KeyEncoding {
    /// `c/1/2` (or `c.1.2`)
    Default { separator: char },
    /// `1.2` (or `1/2`); `0` for a 0-d array
    V2 { separator: char },
    /// The draft v3 layout: `data/root/<path>/c1/2` (or `c1.2`), relative to the store root.
    Draft { prefix: String, separator: char },
}

impl KeyEncoding {
    pub fn key(&self, coords: &[u64]) -> String {
        let (prefix, sep) = match self {
            KeyEncoding::Default { separator } => (Some("c"), *separator),
            KeyEncoding::V2 { separator } => (None, *separator),
            KeyEncoding::Draft { prefix, separator } => {
                let coords: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
                return format!("{prefix}c{}", coords.join(&separator.to_string()));
            }
        };
        let mut parts: Vec<String> = prefix.into_iter().map(String::from).collect();
        parts.extend(coords.iter().map(|c| c.to_string()));
        if parts.is_empty() {
            return "0".into();
        }
        parts.join(&sep.to_string())
    }
}

#[derive(Clone, Debug)]
pub struct ArrayMetadata {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    /// The grid of storage objects (shards when sharded).
    pub grid: Grid,
    pub key_encoding: KeyEncoding,
    pub fill_value: FillValue,
    pub codecs: CodecChain,
    pub attributes: Map<String, Value>,
    pub dimension_names: Option<Vec<Option<String>>>,
    /// Format-specific facts for the API (a structured type's fields).
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug)]
pub enum Node {
    Array(Box<ArrayMetadata>),
    Group {
        attributes: Map<String, Value>,
    },
    /// The entry point of a draft (pre-release) Zarr v3 store: the store root.
    DraftRoot,
}

fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::new(ErrorCode::InvalidMetadata, msg.into()))
}

pub(crate) fn shape_of(v: Option<&Value>, what: &str, allow_zero: bool) -> Result<Vec<u64>> {
    let arr = match v.and_then(Value::as_array) {
        Some(a) => a,
        None => return invalid(format!("{what} must be a list of integers")),
    };
    arr.iter()
        .map(|d| match d.as_u64() {
            Some(0) if !allow_zero => invalid(format!("{what} entries must be positive")),
            Some(n) => Ok(n),
            None => invalid(format!("{what} entries must be non-negative integers")),
        })
        .collect()
}

/// `{"name": ..., "configuration": {...}}` → (name, configuration)
pub(crate) fn named<'a>(v: &'a Value, what: &str) -> Result<(&'a str, Option<&'a Map<String, Value>>)> {
    match v {
        Value::String(s) => Ok((s.as_str(), None)),
        Value::Object(o) => {
            let name = match o.get("name").and_then(Value::as_str) {
                Some(n) => n,
                None => return invalid(format!("{what} needs a \"name\"")),
            };
            let conf = match o.get("configuration") {
                None | Some(Value::Null) => None,
                Some(Value::Object(c)) => Some(c),
                Some(_) => return invalid(format!("{what} \"configuration\" must be an object")),
            };
            Ok((name, conf))
        }
        _ => invalid(format!("{what} must be an object")),
    }
}

/// `regular`, or `rectilinear` (zarr-extensions `chunk_shapes`, or MDIO's `chunkShape`): per
/// axis a chunk size, or a list of sizes and `[size, repeat]` runs.
pub(crate) fn parse_grid(v: &Value, shape: &[u64]) -> Result<Grid> {
    let (name, conf) = named(v, "chunk_grid")?;
    let axes = match name {
        "regular" => {
            let chunk = shape_of(conf.and_then(|c| c.get("chunk_shape")), "chunk_shape", false)?;
            if chunk.len() != shape.len() {
                return invalid("chunk_shape and shape have different lengths");
            }
            return Ok(Grid::regular(&chunk, shape));
        }
        "rectilinear" => {
            let c =
                conf.ok_or_else(|| Error::new(ErrorCode::InvalidMetadata, "rectilinear grid needs a configuration"))?;
            match c.get("kind").and_then(Value::as_str) {
                None | Some("inline") => {}
                Some(k) => return err(ErrorCode::UnsupportedFormat, format!("unsupported rectilinear kind {k:?}")),
            }
            match c.get("chunk_shapes").or_else(|| c.get("chunkShape")).and_then(Value::as_array) {
                Some(a) => a,
                None => return invalid("rectilinear grid needs chunk_shapes"),
            }
        }
        other => return err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_grid {other:?}")),
    };
    if axes.len() != shape.len() {
        return invalid("rectilinear chunk_shapes and shape have different lengths");
    }
    let bad =
        || Error::new(ErrorCode::InvalidMetadata, "rectilinear chunk sizes must be positive integers or [size, count]");
    let mut out = Vec::new();
    for (spec, &extent) in axes.iter().zip(shape) {
        if let Some(chunk) = spec.as_u64() {
            if chunk == 0 {
                return Err(bad());
            }
            out.push(Axis::Regular { chunk, extent });
            continue;
        }
        let mut sizes = Vec::new();
        let mut covered = 0u64;
        for item in spec.as_array().ok_or_else(bad)? {
            let (size, count) = match item {
                Value::Array(p) if p.len() == 2 => (p[0].as_u64().ok_or_else(bad)?, p[1].as_u64().ok_or_else(bad)?),
                v => (v.as_u64().ok_or_else(bad)?, 1),
            };
            if size == 0 {
                return Err(bad());
            }
            // Runs past the extent add nothing but could be huge: stop expanding there.
            let needed = extent.saturating_sub(covered).div_ceil(size).max(1).min(count);
            if sizes.len() as u64 + needed > (1 << 24) {
                return err(ErrorCode::TooLarge, "too many chunks along one axis");
            }
            sizes.extend(core::iter::repeat_n(size, needed as usize));
            covered = covered.saturating_add(size.saturating_mul(count));
        }
        out.push(Axis::explicit(&sizes, extent)?);
    }
    Ok(Grid { axes: out })
}

impl Node {
    pub fn parse(text: &[u8]) -> Result<Node> {
        let v: Value = serde_json::from_slice(text)
            .map_err(|e| Error::new(ErrorCode::InvalidMetadata, format!("zarr.json is not valid JSON: {e}")))?;
        let o = match v.as_object() {
            Some(o) => o,
            None => return invalid("zarr.json must be a JSON object"),
        };
        match o.get("zarr_format") {
            Some(f) if f.as_u64() == Some(3) => {}
            Some(Value::String(s)) if s.contains(super::draft::PROTOCOL) => return Ok(Node::DraftRoot),
            other => return invalid(format!("zarr_format must be 3, found {}", other.unwrap_or(&Value::Null))),
        }
        let attributes = match o.get("attributes") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => return invalid("attributes must be an object"),
        };
        match o.get("node_type").and_then(Value::as_str) {
            Some("group") => Ok(Node::Group { attributes }),
            Some("array") => Ok(Node::Array(Box::new(ArrayMetadata::parse(o, attributes)?))),
            _ => invalid("node_type must be \"array\" or \"group\""),
        }
    }
}

impl ArrayMetadata {
    fn parse(o: &Map<String, Value>, attributes: Map<String, Value>) -> Result<ArrayMetadata> {
        let shape = shape_of(o.get("shape"), "shape", true)?;
        let dt = o.get("data_type").unwrap_or(&Value::Null);
        let data_type = DataType::parse(dt)?;
        let mut extra = Map::new();
        if let DataType::Structured(_) = data_type {
            let fields = DataType::fields(dt)?;
            let table = fields.into_iter().map(|(n, t, at)| serde_json::json!([n, t.name(), at])).collect();
            extra.insert("fields".into(), Value::Array(table));
        }

        let grid = parse_grid(o.get("chunk_grid").unwrap_or(&Value::Null), &shape)?;

        let key_encoding = match o.get("chunk_key_encoding") {
            None => KeyEncoding::Default { separator: '/' },
            Some(v) => {
                let (name, conf) = named(v, "chunk_key_encoding")?;
                let sep = conf.and_then(|c| c.get("separator"));
                let sep = match sep.map(|s| s.as_str()) {
                    None => None,
                    Some(Some("/")) => Some('/'),
                    Some(Some(".")) => Some('.'),
                    Some(_) => return invalid("chunk_key_encoding separator must be \"/\" or \".\""),
                };
                match name {
                    "default" => KeyEncoding::Default { separator: sep.unwrap_or('/') },
                    "v2" => KeyEncoding::V2 { separator: sep.unwrap_or('.') },
                    other => {
                        return err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_key_encoding {other:?}"))
                    }
                }
            }
        };

        let fill_value = FillValue::parse(data_type, o.get("fill_value").unwrap_or(&Value::Null))?;
        // Codecs are checked against the first chunk; shards of other shapes re-derive their index.
        let first = grid.full(&alloc::vec![0; shape.len()]);
        let codecs = CodecChain::parse(o.get("codecs").unwrap_or(&Value::Null), &first)?;

        if let Some(Value::Array(t)) = o.get("storage_transformers") {
            if !t.is_empty() {
                return err(ErrorCode::UnsupportedFormat, "storage_transformers are not supported");
            }
        }

        let dimension_names = match o.get("dimension_names") {
            None | Some(Value::Null) => None,
            Some(Value::Array(names)) => {
                if names.len() != shape.len() {
                    return invalid("dimension_names must have one entry per dimension");
                }
                let names: Result<Vec<Option<String>>> = names
                    .iter()
                    .map(|n| match n {
                        Value::Null => Ok(None),
                        Value::String(s) => Ok(Some(s.clone())),
                        _ => invalid("dimension_names entries must be strings or null"),
                    })
                    .collect();
                Some(names?)
            }
            Some(_) => return invalid("dimension_names must be a list"),
        };

        Ok(ArrayMetadata {
            shape,
            data_type,
            grid,
            key_encoding,
            fill_value,
            codecs,
            attributes,
            dimension_names,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(KeyEncoding::Default { separator: '/' }.key(&[1, 2]), "c/1/2");
        assert_eq!(KeyEncoding::Default { separator: '.' }.key(&[1, 2]), "c.1.2");
        assert_eq!(KeyEncoding::Default { separator: '/' }.key(&[]), "c");
        assert_eq!(KeyEncoding::V2 { separator: '.' }.key(&[1, 2]), "1.2");
        assert_eq!(KeyEncoding::V2 { separator: '/' }.key(&[1, 2]), "1/2");
        assert_eq!(KeyEncoding::V2 { separator: '.' }.key(&[]), "0");
        let draft = KeyEncoding::Draft { prefix: "data/root/a/b/".into(), separator: '.' };
        assert_eq!(draft.key(&[1, 2]), "data/root/a/b/c1.2");
    }

    #[test]
    fn errors_name_the_culprit() {
        let j = br#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
            "chunk_key_encoding":{"name":"default"},"fill_value":0,
            "codecs":[{"name":"bytes"},{"name":"lzma"}]}"#;
        let e = Node::parse(j).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedCodec);
        assert!(e.message.contains("lzma"), "{}", e.message);
        let j = br#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"complex256",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"fill_value":0,"codecs":[]}"#;
        let e = Node::parse(j).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDataType);
        assert!(e.message.contains("complex256"));
        assert_eq!(Node::parse(b"{").unwrap_err().code, ErrorCode::InvalidMetadata);
        assert_eq!(Node::parse(b"[]").unwrap_err().code, ErrorCode::InvalidMetadata);
    }
}
