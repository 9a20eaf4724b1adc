//! The pre-release Zarr v3 layout with the sharding storage transformer (written by
//! zarr-python 2.14–2.18 in experimental v3 mode): `zarr.json` at the store root names the
//! protocol, arrays are described at `meta/root/<path>.array.json`, and chunks are stored in
//! shards keyed `data/root/<path>/c<i>/<j>` by shard coordinate, each ending with an index of
//! (offset, nbytes) pairs without a checksum.
use super::codec::{BytesCodec, CodecChain, Sharding};
use super::dtype::{DataType, FillValue};
use super::error::{err, Error, ErrorCode, Result};
use super::grid::Grid;
use super::metadata::{shape_of, ArrayMetadata, KeyEncoding};
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

/// The `zarr_format` the draft's entry point names.
pub const PROTOCOL: &str = "protocol/core/3.0";

fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::new(ErrorCode::InvalidMetadata, msg.into()))
}

/// Where a node's metadata document lives, relative to the store root.
pub fn meta_key(path: &str, kind: &str) -> String {
    if path.is_empty() {
        format!("meta/root.{kind}.json")
    } else {
        format!("meta/root/{path}.{kind}.json")
    }
}

fn parse_json(text: &[u8], what: &str) -> Result<Map<String, Value>> {
    match serde_json::from_slice(text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => invalid(format!("{what} must be a JSON object")),
        Err(e) => invalid(format!("{what} is not valid JSON: {e}")),
    }
}

/// A group document: its attributes.
pub fn parse_group(text: &[u8]) -> Result<Map<String, Value>> {
    match parse_json(text, "group metadata")?.remove("attributes") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(a)) => Ok(a),
        Some(_) => invalid("attributes must be an object"),
    }
}

/// An array document of the array at `path` (relative to the store root).
pub fn parse_array(text: &[u8], path: &str) -> Result<ArrayMetadata> {
    let o = parse_json(text, "array metadata")?;
    let shape = shape_of(o.get("shape"), "shape", true)?;
    let (data_type, big_endian) = match o.get("data_type") {
        Some(Value::String(s)) if s == "bool" => (DataType::Bool, false),
        Some(v) => super::v2::parse_dtype(v)?,
        None => return invalid("data_type is missing"),
    };
    let grid = o.get("chunk_grid").and_then(Value::as_object);
    let grid = grid.ok_or_else(|| Error::new(ErrorCode::InvalidMetadata, "chunk_grid must be an object"))?;
    if grid.get("type").and_then(Value::as_str) != Some("regular") {
        return err(ErrorCode::UnsupportedFormat, format!("unsupported chunk_grid {:?}", grid.get("type")));
    }
    let chunk_shape = shape_of(grid.get("chunk_shape"), "chunk_shape", false)?;
    if chunk_shape.len() != shape.len() {
        return invalid("chunk_shape and shape have different lengths");
    }
    let separator = match grid.get("separator").and_then(Value::as_str) {
        None | Some("/") => '/',
        Some(".") => '.',
        Some(other) => return invalid(format!("separator must be \"/\" or \".\", found {other:?}")),
    };
    let transposes = match o.get("chunk_memory_layout").and_then(Value::as_str) {
        None | Some("C") => Vec::new(),
        Some("F") => alloc::vec![(0..shape.len()).rev().collect()],
        Some(other) => return invalid(format!("chunk_memory_layout must be \"C\" or \"F\", found {other:?}")),
    };
    let fill_value = match o.get("fill_value") {
        None | Some(Value::Null) => FillValue::zero(data_type),
        Some(f) => FillValue::parse(data_type, f)?,
    };
    let bytes_codecs = BytesCodec::numcodecs(o.get("compressor").unwrap_or(&Value::Null))?.into_iter().collect();
    let mut codecs = CodecChain::Plain { transposes, big_endian, bytes_codecs };

    let transformers = match o.get("storage_transformers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(t)) => t.clone(),
        Some(_) => return invalid("storage_transformers must be a list"),
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
                return err(ErrorCode::UnsupportedFormat, format!("unsupported storage transformer {ext:?} {kind:?}"));
            }
            let conf = t.get("configuration").and_then(Value::as_object);
            let per = shape_of(conf.and_then(|c| c.get("chunks_per_shard")), "chunks_per_shard", false)?;
            if per.len() != shape.len() {
                return invalid("chunks_per_shard and shape have different lengths");
            }
            let sharding = Sharding::draft(chunk_shape.clone(), &per, codecs)?;
            grid_shape = chunk_shape.iter().zip(&per).map(|(c, n)| c * n).collect();
            codecs = CodecChain::Sharded(Box::new(sharding));
        }
        _ => return err(ErrorCode::UnsupportedFormat, "more than one storage transformer"),
    }
    let attributes = match o.get("attributes") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(_) => return invalid("attributes must be an object"),
    };
    let prefix = if path.is_empty() { String::from("data/root/") } else { format!("data/root/{path}/") };
    Ok(ArrayMetadata {
        grid: Grid::regular(&grid_shape, &shape),
        shape,
        data_type,
        key_encoding: KeyEncoding::Draft { prefix, separator },
        fill_value,
        codecs,
        attributes,
        dimension_names: None,
        extra: Map::new(),
    })
}
