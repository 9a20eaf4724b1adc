//! The pre-release Zarr v3 layout with the sharding storage transformer (written by
//! zarr-python 2.14–2.18 in experimental v3 mode): `zarr.json` at the store root names the
//! protocol, arrays are described at `meta/root/<path>.array.json`, and chunks are stored in
//! shards keyed `data/root/<path>/c<i>/<j>` by shard coordinate, each ending with an index of
//! (offset, nbytes) pairs without a checksum.
use super::array::{ArrayMetadata, Format, Storage};
use super::dtype::DataType;
use super::grid::Grid;
use super::json::{attributes_of, bytes_codec, fill_or_zero, memory_order, numcodecs, parse_node, shape_of, Named};
use super::keys::KeyEncoding;
use super::v2::parse_dtype;
use crate::core::error::{err, invalid, ErrorCode, Result};
use crate::core::json::{Map, Raw, Value};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The `zarr_format` the draft's entry point names.
pub const PROTOCOL: &str = "protocol/core/3.0";

/// Where a node's metadata document lives, relative to the store root.
pub fn meta_key(path: &str, kind: &str) -> String {
    if path.is_empty() {
        format!("meta/root.{kind}.json")
    } else {
        format!("meta/root/{path}.{kind}.json")
    }
}

/// A group document: its attributes (JSON text of an object).
pub fn parse_group(text: &[u8]) -> Result<Raw> {
    attributes_of(parse_node(text, "group metadata")?.1)
}

/// An array document of the array at `path` (relative to the store root), its shards spelled
/// as a Zarr v3 `sharding_indexed` codec (index at the end, little-endian, no checksum).
pub fn parse_array(text: &[u8], path: &str) -> Result<ArrayMetadata> {
    let (o, attributes) = parse_node(text, "array metadata")?;
    let shape = shape_of(o.get("shape"), "shape", true)?;
    let (data_type, big_endian) = match o.get("data_type") {
        Some(Value::String(s)) if s == "bool" => (DataType::Bool, false),
        Some(v) => parse_dtype(v)?,
        None => return Err(invalid("data_type is missing")),
    };
    let grid = o.get("chunk_grid").and_then(Value::as_object);
    let grid = grid.ok_or_else(|| invalid("chunk_grid must be an object"))?;
    if grid.get("type").and_then(Value::as_str) != Some("regular") {
        return err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_grid {}", grid.get("type").unwrap_or(&Value::Null)));
    }
    let chunk_shape = shape_of(grid.get("chunk_shape"), "chunk_shape", false)?;
    if chunk_shape.len() != shape.len() {
        return Err(invalid("chunk_shape and shape have different lengths"));
    }
    let separator = match grid.get("separator").and_then(Value::as_str) {
        None | Some("/") => '/',
        Some(".") => '.',
        Some(other) => return Err(invalid(format!("separator must be \"/\" or \".\", found \"{other}\""))),
    };
    let fill_value = fill_or_zero(data_type, o.get("fill_value"))?;
    let mut codecs: Vec<Named> =
        memory_order(o.get("chunk_memory_layout"), shape.len(), "chunk_memory_layout")?.into_iter().collect();
    codecs.push(bytes_codec(big_endian));
    match o.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => codecs.push(numcodecs(c, "compressor")?),
    }
    let transformers = match o.get("storage_transformers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(t)) => t.clone(),
        Some(_) => return Err(invalid("storage_transformers must be a list")),
    };
    let mut grid_shape = chunk_shape.clone();
    match transformers.as_slice() {
        [] => {}
        [t] => {
            // zarr-python wrote ".../storage_transformers/sharding/1.0", the spec names
            // ".../extensions/storage_transformers/…": accept any sharding URL.
            let ext = t.get("extension").and_then(Value::as_str).unwrap_or("");
            let kind = t.get("type").and_then(Value::as_str);
            if !ext.contains("sharding") || kind.is_some_and(|k| k != "indexed") {
                return err(ErrorCode::UnsupportedFormat, format!("unsupported storage transformer \"{ext}\" \"{}\"", kind.unwrap_or("")));
            }
            let conf = t.get("configuration").and_then(Value::as_object);
            let per = shape_of(conf.and_then(|c| c.get("chunks_per_shard")), "chunks_per_shard", false)?;
            if per.len() != shape.len() {
                return Err(invalid("chunks_per_shard and shape have different lengths"));
            }
            grid_shape = chunk_shape.iter().zip(&per).map(|(c, n)| c.saturating_mul(*n)).collect();
            let named = |c: &Named| {
                let pairs = [("name", Value::from(c.name.as_str())), ("configuration", c.configuration.clone().into())];
                Value::Object(pairs.into_iter().collect())
            };
            let little = bytes_codec(false);
            let conf: Map = [
                ("chunk_shape", chunk_shape.iter().copied().map(Value::from).collect()),
                ("codecs", codecs.iter().map(named).collect()),
                ("index_codecs", Value::Array(alloc::vec![named(&little)])),
                ("index_location", Value::from("end")),
            ]
            .into_iter()
            .collect();
            codecs = alloc::vec![Named::new("sharding_indexed", conf)];
        }
        _ => return err(ErrorCode::UnsupportedFormat, "more than one storage transformer"),
    }
    let prefix = if path.is_empty() { String::from("data/root/") } else { format!("data/root/{path}/") };
    Ok(ArrayMetadata {
        format: Format::Zarr3Draft,
        storage: Storage::Zarr {
            grid: Grid::regular(&grid_shape, &shape),
            keys: KeyEncoding::Draft { prefix, separator },
            codecs,
        },
        shape,
        data_type,
        fill_value,
        attributes: attributes_of(attributes)?,
        dimension_names: None,
        fields: None,
    })
}
