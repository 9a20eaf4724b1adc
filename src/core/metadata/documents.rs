//! What an array is built from: its format and the metadata documents read when opening it.
//! [`describe`] turns them into one [`ArrayMetadata`] without the network, so a decoding
//! worker rebuilds exactly the array the opener built.
use super::array::{ArrayMetadata, Format, Storage};
use super::dtype::FillValue;
use super::precomputed::{ScaleRef, VolumeInfo};
use super::v3::Node;
use super::{draft, v2};
use crate::core::error::{Error, ErrorCode, Result};
use alloc::rc::Rc;
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
    /// Which scale of a multi-scale volume (Neuroglancer precomputed): an index or a key.
    pub scale: Option<String>,
}

/// The array the documents describe.
pub fn describe(docs: &Documents) -> Result<ArrayMetadata> {
    match docs.format {
        Format::Zarr3 => match Node::parse(&docs.doc)? {
            Node::Array(meta) => Ok(*meta),
            _ => Err(Error::new(ErrorCode::NotAnArray, "zarr.json describes a group, not an array")),
        },
        Format::Zarr2 => v2::parse_array(&docs.doc, v2::parse_attributes(docs.attrs.as_deref())?),
        Format::Zarr3Draft => draft::parse_array(&docs.doc, &docs.path),
        Format::Precomputed => describe_volume(&docs.doc, docs.scale.as_deref()),
    }
}

/// One scale of the volume whose `info` is `doc`, as an array `[x, y, z, channel]` (scale 0
/// when `scale` is `None`).
fn describe_volume(doc: &[u8], scale: Option<&str>) -> Result<ArrayMetadata> {
    let volume = VolumeInfo::parse(doc)?;
    let index = volume.find(scale.map_or(ScaleRef::Index(0), ScaleRef::from_name))?;
    let s = &volume.scales[index];
    let shape = alloc::vec![s.size[0], s.size[1], s.size[2], volume.num_channels];
    // The volume's own fields (type, data_type, num_channels, mesh, …); scales are listed apart.
    let attributes = match serde_json::from_slice::<Value>(doc) {
        Ok(Value::Object(mut o)) => {
            o.remove("scales");
            o
        }
        _ => Map::new(),
    };
    let names = ["x", "y", "z", "channel"].iter().map(|n| Some(String::from(*n))).collect();
    Ok(ArrayMetadata {
        format: Format::Precomputed,
        shape,
        data_type: volume.data_type,
        fill_value: FillValue::zero(volume.data_type),
        attributes,
        dimension_names: Some(names),
        fields: None,
        storage: Storage::Precomputed { volume: Rc::new(volume), scale: index },
    })
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
        let bad = || Error::new(ErrorCode::InvalidMetadata, "not an array's documents");
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
