//! What an array is built from: its format and the metadata documents read when opening it.
//! [`build`] turns them into the array's description and layout without the network, so a
//! decoding worker rebuilds exactly the layout the opener built.
use super::array::{ArrayInfo, Format, Layout, Located};
use super::codec::Decoded;
use super::draft;
use super::dtype::FillValue;
use super::error::{err, Error, ErrorCode, Result};
use super::grid::Grid;
use super::metadata::{ArrayMetadata, Node};
use super::precomputed::{Scale, ScaleRef};
use super::v2;
use super::zarr::ZarrLayout;
use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Documents {
    pub format: Format,
    /// The array's path inside its store (the draft layout keys chunks by it).
    pub path: String,
    /// The array's metadata document: `zarr.json`, `.zarray`, `<path>.array.json` or `info`.
    pub doc: Vec<u8>,
    /// A second document: Zarr v2's `.zattrs`.
    pub attrs: Option<Vec<u8>>,
    /// Which scale of a multi-scale volume (Neuroglancer precomputed).
    pub scale: Option<String>,
}

pub struct Built {
    pub info: ArrayInfo,
    /// The read-chunk grid.
    pub grid: Grid,
    pub layout: Box<dyn Layout>,
}

pub fn build(docs: &Documents) -> Result<Built> {
    match docs.format {
        Format::Zarr3 => match Node::parse(&docs.doc)? {
            Node::Array(meta) => zarr(docs.format, *meta),
            _ => err(ErrorCode::NotAnArray, "zarr.json describes a group, not an array"),
        },
        Format::Zarr2 => zarr(docs.format, v2::parse_array(&docs.doc, v2::parse_attributes(docs.attrs.as_deref())?)?),
        Format::Zarr3Draft => zarr(docs.format, draft::parse_array(&docs.doc, &docs.path)?),
        Format::Precomputed => precomputed(docs),
    }
}

impl Layout for Scale {
    fn locate(&self, coords: &[u64]) -> Result<Located> {
        let (key, levels) = Scale::locate(self, coords)?;
        Ok(Located { key, levels })
    }
    fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded> {
        Scale::decode(self, coords, bytes)
    }
    fn costly_decode(&self) -> bool {
        let gzip = self.sharding().is_some_and(|s| s.data_encoding == crate::core::precomputed::DataEncoding::Gzip);
        gzip || !matches!(self.encoding(), crate::core::precomputed::Encoding::Raw)
    }
}

/// One scale of a Neuroglancer precomputed volume, as an array `[x, y, z, channel]`.
fn precomputed(docs: &Documents) -> Result<Built> {
    let which = match docs.scale.as_deref() {
        None => ScaleRef::Index(0),
        Some(s) => match s.parse::<usize>() {
            Ok(i) => ScaleRef::Index(i),
            Err(_) => ScaleRef::Key(s),
        },
    };
    let scale = Scale::from_info(&docs.doc, which)?;
    let (shape, chunk) = (scale.shape().to_vec(), scale.chunk_shape().to_vec());
    let mut extra = Map::new();
    let scales: Vec<Value> = scale
        .scales()
        .iter()
        .map(|s| {
            json!({
                "key": s.key,
                "size": s.size,
                "chunkSize": s.chunk_size,
                "resolution": s.resolution,
                "voxelOffset": s.voxel_offset,
                "encoding": s.encoding.name(),
                "sharded": s.sharding.is_some(),
            })
        })
        .collect();
    extra.insert("scales".into(), Value::Array(scales));
    extra.insert("scale".into(), json!(scale.index()));
    extra.insert("type".into(), json!(scale.info().kind));
    let names = ["x", "y", "z", "channel"].iter().map(|n| Some(String::from(*n))).collect();
    let info = ArrayInfo {
        format: Format::Precomputed,
        dtype: scale.dtype(),
        fill_value: FillValue::zero(scale.dtype()),
        // Shards hold chunks chosen by hash, not a box of the volume: no shard shape.
        shard_shape: None,
        // The volume's own fields (type, data_type, num_channels, mesh, …); scales are in extra.
        attributes: match serde_json::from_slice::<Value>(&docs.doc) {
            Ok(Value::Object(mut o)) => {
                o.remove("scales");
                o
            }
            _ => Map::new(),
        },
        dimension_names: Some(names),
        extra,
        shape: shape.clone(),
    };
    Ok(Built { info, grid: Grid::regular(&chunk, &shape), layout: Box::new(scale) })
}

fn zarr(format: Format, meta: ArrayMetadata) -> Result<Built> {
    let layout = ZarrLayout::new(meta.grid, meta.key_encoding, meta.codecs, meta.data_type)?;
    let info = ArrayInfo {
        format,
        shape: meta.shape,
        dtype: meta.data_type,
        fill_value: meta.fill_value,
        shard_shape: layout.shard_shape(),
        attributes: meta.attributes,
        dimension_names: meta.dimension_names,
        extra: meta.extra,
    };
    Ok(Built { info, grid: layout.read_grid().clone(), layout: Box::new(layout) })
}

impl Documents {
    /// As JSON text (the documents are JSON, hence UTF-8).
    pub fn to_json(&self) -> String {
        let text = |d: &[u8]| String::from_utf8_lossy(d).into_owned();
        json!({
            "format": self.format.name(),
            "path": self.path,
            "doc": text(&self.doc),
            "attrs": self.attrs.as_deref().map(text),
            "scale": self.scale,
        })
        .to_string()
    }

    pub fn from_json(s: &str) -> Result<Documents> {
        let bad = || Error::new(ErrorCode::InvalidMetadata, "not an array spec");
        let v: Value = serde_json::from_str(s).map_err(|_| bad())?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(|t| t.as_bytes().to_vec());
        Ok(Documents {
            format: v.get("format").and_then(Value::as_str).and_then(Format::parse).ok_or_else(bad)?,
            path: v.get("path").and_then(Value::as_str).unwrap_or("").into(),
            doc: text("doc").ok_or_else(bad)?,
            attrs: text("attrs"),
            scale: v.get("scale").and_then(Value::as_str).map(String::from),
        })
    }
}
