//! What an array is built from: its format and the metadata documents read when opening it.
//! [`describe`] turns them into one [`ArrayMetadata`] without the network, so a decoding
//! worker rebuilds exactly the array the opener built.
use super::array::{ArrayMetadata, Format, Storage};
use super::dtype::FillValue;
use super::precomputed::{ScaleRef, VolumeInfo};
use super::v3::Node;
use super::{draft, v2};
use crate::core::error::{invalid, Error, ErrorCode, Result};
use crate::core::json::{self, write_str, Keep, Raw, Value};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

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
        Format::Zarr2 => v2::parse_array(&docs.doc, docs.attrs.as_deref()),
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
    let keep = |k: &str| if k == "scales" { Keep::Skip } else { Keep::Raw };
    let mut text = String::from("{");
    if let Ok(Some(f)) = json::parse_object_with(doc, keep) {
        for (k, (key, value)) in f.raw_members().enumerate() {
            if k > 0 {
                text.push(',');
            }
            write_str(&mut text, key);
            text.push(':');
            text.push_str(value);
        }
    }
    text.push('}');
    let attributes = Raw::new(&text).map_err(|e| invalid(format!("info is not valid JSON: {e}")))?;
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
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// [`Documents::to_json`] appended to `out`.
    pub fn write(&self, out: &mut String) {
        let mut first = true;
        let mut put = |out: &mut String, k: &str, v: Option<&str>| {
            if !core::mem::take(&mut first) {
                out.push(',');
            }
            write_str(out, k);
            out.push(':');
            match v {
                Some(v) => write_str(out, v),
                None => out.push_str("null"),
            }
        };
        fn text(d: &[u8]) -> alloc::borrow::Cow<'_, str> {
            String::from_utf8_lossy(d)
        }
        out.push('{');
        put(out, "format", Some(self.format.name()));
        put(out, "path", Some(&self.path));
        put(out, "doc", Some(&text(&self.doc)));
        put(out, "attrs", self.attrs.as_deref().map(text).as_deref());
        put(out, "scale", self.scale.as_deref());
        out.push('}');
    }

    /// The documents without their attributes, which decoding does not need (a worker then
    /// neither receives nor scans them): Zarr v2's `.zattrs` dropped, the `attributes` of a
    /// Zarr v3 or draft array document replaced by `{}`.
    pub fn for_decoding(&self) -> Documents {
        let mut d = Documents { attrs: None, ..self.clone() };
        if matches!(self.format, Format::Zarr3 | Format::Zarr3Draft) {
            let keep = |k: &str| if k == "attributes" { Keep::Raw } else { Keep::Skip };
            let span = json::parse_object_with(&self.doc, keep).ok().flatten().and_then(|f| f.span("attributes"));
            if let Some(r) = span.filter(|r| r.end - r.start > 2) {
                let (head, tail) = (self.doc.get(..r.start), self.doc.get(r.end..));
                if let (Some(head), Some(tail)) = (head, tail) {
                    d.doc = [head, b"{}", tail].concat();
                }
            }
        }
        d
    }

    pub fn from_json(s: &str) -> Result<Documents> {
        Documents::from_value(json::parse(s.as_bytes()).unwrap_or_default())
    }

    /// What [`Documents::write`] wrote, parsed.
    pub fn from_value(v: Value) -> Result<Documents> {
        let bad = || Error::new(ErrorCode::InvalidMetadata, "not an array's documents");
        let Value::Object(mut o) = v else { return Err(bad()) };
        let mut text = |k: &str| match o.remove(k) {
            Some(Value::String(t)) => Some(t),
            _ => None,
        };
        Ok(Documents {
            format: text("format").as_deref().and_then(Format::parse).ok_or_else(bad)?,
            path: text("path").unwrap_or_default(),
            doc: text("doc").ok_or_else(bad)?.into_bytes(),
            attrs: text("attrs").map(String::into_bytes),
            scale: text("scale"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARRAY: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}, "fill_value": 7,
        "codecs": [{"name": "bytes"}], "attributes": {"big": [1, 2, 3], "s": "\"}\""}, "dimension_names": ["x"]}"#;

    #[test]
    fn decoding_needs_no_attributes() {
        let docs = Documents { format: Format::Zarr3, path: "a".into(), doc: ARRAY.into(), attrs: None, scale: None };
        let full = describe(&docs).unwrap();
        assert_eq!(full.attributes.as_str(), r#"{"big": [1, 2, 3], "s": "\"}\""}"#);
        let lean = docs.for_decoding();
        assert!(lean.doc.len() < docs.doc.len());
        let m = describe(&lean).unwrap();
        assert_eq!(m.attributes.as_str(), "{}");
        assert_eq!((m.shape, m.fill_value, m.dimension_names), (full.shape, full.fill_value, full.dimension_names));
        // Through text and back, as the binding hands them over.
        assert_eq!(Documents::from_json(&docs.to_json()).unwrap(), docs);
        let v2 = Documents { format: Format::Zarr2, attrs: Some(b"{\"a\": 1}".to_vec()), ..docs.clone() };
        assert_eq!(Documents::from_json(&v2.to_json()).unwrap(), v2);
        assert_eq!(v2.for_decoding().attrs, None);
        // Without its document, or not JSON: not an array's documents.
        for text in ["{\"format\": \"zarr3\"}", "["] {
            let e = Documents::from_json(text).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                (ErrorCode::InvalidMetadata, "not an array's documents"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_volume_reports_its_own_fields() {
        let info = br#"{"@type": "neuroglancer_multiscale_volume", "type": "image", "data_type": "uint8",
            "num_channels": 1, "scales": [{"key": "s0", "size": [4, 4, 4], "chunk_sizes": [[4, 4, 4]],
            "resolution": [1, 1, 1.5], "encoding": "raw"}], "mesh": "m\u00e9sh"}"#;
        let docs =
            Documents { format: Format::Precomputed, path: "".into(), doc: info.to_vec(), attrs: None, scale: None };
        let a = describe(&docs).unwrap().attributes.parse().unwrap();
        let keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["@type", "type", "data_type", "num_channels", "mesh"]);
        assert_eq!(a["mesh"], "mésh");
    }
}
