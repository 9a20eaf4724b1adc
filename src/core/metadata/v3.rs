//! Zarr v3: `zarr.json` of arrays and groups.
use super::array::{ArrayMetadata, Format, Storage};
use super::draft::PROTOCOL;
use super::dtype::{DataType, FillValue};
use super::grid;
use super::json::{attributes_of, named, parse_node, shape_of, Named};
use super::keys::KeyEncoding;
use crate::core::error::{err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Raw, Value};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Clone, Debug)]
pub enum Node {
    Array(Box<ArrayMetadata>),
    Group {
        /// JSON text of an object.
        attributes: Raw,
    },
    /// The entry point of a draft (pre-release) Zarr v3 store: the store root.
    DraftRoot,
}

impl Node {
    pub fn parse(text: &[u8]) -> Result<Node> {
        let (o, attributes) = parse_node(text, "zarr.json")?;
        match o.get("zarr_format") {
            Some(f) if f.as_u64() == Some(3) => {}
            Some(Value::String(s)) if s.contains(PROTOCOL) => return Ok(Node::DraftRoot),
            other => return Err(invalid(format!("zarr_format must be 3, found {}", other.unwrap_or(&Value::Null)))),
        }
        let attributes = attributes_of(attributes)?;
        match o.get("node_type").and_then(Value::as_str) {
            Some("group") => Ok(Node::Group { attributes }),
            Some("array") => Ok(Node::Array(Box::new(parse_array(&o, attributes)?))),
            _ => Err(invalid("node_type must be \"array\" or \"group\"")),
        }
    }
}

fn parse_array(o: &Map, attributes: Raw) -> Result<ArrayMetadata> {
    let shape = shape_of(o.get("shape"), "shape", true)?;
    let dt = o.get("data_type").unwrap_or(&Value::Null);
    let data_type = DataType::parse(dt)?;
    let fields = match data_type {
        DataType::Structured(_) => Some(DataType::fields(dt)?),
        _ => None,
    };
    let grid = grid::parse(o.get("chunk_grid").unwrap_or(&Value::Null), &shape)?;
    let keys = match o.get("chunk_key_encoding") {
        None => KeyEncoding::Default { separator: '/' },
        Some(v) => key_encoding(v)?,
    };
    let fill_value = FillValue::parse(data_type, o.get("fill_value").unwrap_or(&Value::Null))?;
    let codecs = match o.get("codecs") {
        Some(Value::Array(list)) => list.iter().map(|c| Named::parse(c, "codec")).collect::<Result<Vec<_>>>()?,
        _ => return Err(invalid("codecs must be a list")),
    };
    if let Some(Value::Array(t)) = o.get("storage_transformers") {
        if !t.is_empty() {
            return err(ErrorCode::UnsupportedFormat, "storage_transformers are not supported");
        }
    }
    let dimension_names = match o.get("dimension_names") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => {
            if names.len() != shape.len() {
                return Err(invalid("dimension_names must have one entry per dimension"));
            }
            let names: Result<Vec<Option<String>>> = names
                .iter()
                .map(|n| match n {
                    Value::Null => Ok(None),
                    Value::String(s) => Ok(Some(s.clone())),
                    _ => Err(invalid("dimension_names entries must be strings or null")),
                })
                .collect();
            Some(names?)
        }
        Some(_) => return Err(invalid("dimension_names must be a list")),
    };
    Ok(ArrayMetadata {
        format: Format::Zarr3,
        shape,
        data_type,
        fill_value,
        attributes,
        dimension_names,
        fields,
        storage: Storage::Zarr { grid, keys, codecs },
    })
}

fn key_encoding(v: &Value) -> Result<KeyEncoding> {
    let (name, conf) = named(v, "chunk_key_encoding")?;
    let sep = match conf.and_then(|c| c.get("separator")).map(|s| s.as_str()) {
        None => None,
        Some(Some("/")) => Some('/'),
        Some(Some(".")) => Some('.'),
        Some(_) => return Err(invalid("chunk_key_encoding separator must be \"/\" or \".\"")),
    };
    match name {
        "default" => Ok(KeyEncoding::Default { separator: sep.unwrap_or('/') }),
        "v2" => Ok(KeyEncoding::V2 { separator: sep.unwrap_or('.') }),
        other => err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_key_encoding \"{other}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_culprit() {
        let j = br#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"complex256",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"fill_value":0,"codecs":[]}"#;
        let e = Node::parse(j).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDataType);
        assert!(e.message.contains("complex256"));
        assert_eq!(Node::parse(b"{").unwrap_err().code, ErrorCode::InvalidMetadata);
        assert_eq!(Node::parse(b"[]").unwrap_err().code, ErrorCode::InvalidMetadata);
    }
}
