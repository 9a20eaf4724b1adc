//! Consolidated metadata: the documents of a group's members held in one document —
//! zarr-python 3's `consolidated_metadata` in a group's `zarr.json` (`kind: "inline"`), and
//! Zarr v2's `.zmetadata` (`zarr_consolidated_format: 1`, as zarr-python 2 and xarray write it).
//! Members' documents are kept as their JSON text, not parsed here.
use crate::core::error::{invalid, Result};
use crate::core::json::{self, Keep, Value};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// One member's document: its key relative to the group (`a/zarr.json`, `a/.zarray`) and text.
pub type Member = (String, String);

fn members(text: &str, what: &str) -> Result<Vec<Member>> {
    let f = json::parse_object_with(text.as_bytes(), |_| Keep::Raw)
        .map_err(|e| invalid(format!("{what} is not valid JSON: {e}")))?
        .ok_or_else(|| invalid(format!("{what} must be an object")))?;
    Ok(f.raw_members().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

/// The members a Zarr v3 group's `zarr.json` holds in `consolidated_metadata` (keys
/// `<path>/zarr.json`); `None` when it holds none, or of a kind this reader does not know (it
/// need not: `must_understand` is false).
pub fn v3(zarr_json: &[u8]) -> Result<Option<Vec<Member>>> {
    let keep = |k: &str| if k == "consolidated_metadata" { Keep::Raw } else { Keep::Skip };
    let Ok(Some(f)) = json::parse_object_with(zarr_json, keep) else { return Ok(None) };
    let Some(raw) = f.raw_text("consolidated_metadata").filter(|t| t.starts_with('{')) else { return Ok(None) };
    let keep = |k: &str| if k == "metadata" { Keep::Raw } else { Keep::Parse };
    let what = "consolidated_metadata";
    let cm = json::parse_object_with(raw.as_bytes(), keep)
        .map_err(|e| invalid(format!("{what} is not valid JSON: {e}")))?
        .ok_or_else(|| invalid(format!("{what} must be an object")))?;
    if cm.object.get("kind").and_then(Value::as_str).is_some_and(|k| k != "inline") {
        return Ok(None);
    }
    let Some(metadata) = cm.raw_text("metadata").filter(|t| t.starts_with('{')) else { return Ok(None) };
    let list = members(metadata, "consolidated_metadata.metadata")?;
    Ok(Some(list.into_iter().map(|(path, doc)| (format!("{}/zarr.json", path.trim_matches('/')), doc)).collect()))
}

/// The members a Zarr v2 `.zmetadata` holds (keys as it spells them: `.zgroup`, `a/.zarray`,
/// `a/.zattrs`, …).
pub fn v2(zmetadata: &[u8]) -> Result<Vec<Member>> {
    let keep = |k: &str| if k == "metadata" { Keep::Raw } else { Keep::Parse };
    let f = json::parse_object_with(zmetadata, keep)
        .map_err(|e| invalid(format!(".zmetadata is not valid JSON: {e}")))?
        .ok_or_else(|| invalid(".zmetadata must be an object"))?;
    match f.object.get("zarr_consolidated_format").and_then(Value::as_u64) {
        Some(1) => {}
        other => return Err(invalid(format!(".zmetadata: zarr_consolidated_format must be 1, found {other:?}"))),
    }
    let metadata = f.raw_text("metadata").filter(|t| t.starts_with('{')).ok_or_else(|| invalid(".zmetadata needs a metadata object"))?;
    members(metadata, ".zmetadata metadata")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_and_v2_members() {
        let doc = br#"{"zarr_format":3,"node_type":"group","attributes":{},"consolidated_metadata":{"kind":"inline","must_understand":false,"metadata":{"a":{"zarr_format":3,"node_type":"array","shape":[1]},"sub":{"zarr_format":3,"node_type":"group"},"sub/b":{"node_type":"array"}}}}"#;
        let m = v3(doc).unwrap().unwrap();
        assert_eq!(m.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["a/zarr.json", "sub/zarr.json", "sub/b/zarr.json"]);
        assert_eq!(m[0].1, r#"{"zarr_format":3,"node_type":"array","shape":[1]}"#);
        assert_eq!(v3(br#"{"zarr_format":3,"node_type":"group","consolidated_metadata":null}"#).unwrap(), None);
        assert_eq!(v3(br#"{"consolidated_metadata":{"kind":"other","metadata":{}}}"#).unwrap(), None);
        let z = br#"{"zarr_consolidated_format":1,"metadata":{".zgroup":{"zarr_format":2},"x/.zarray":{"shape":[2]},"x/.zattrs":{}}}"#;
        let m = v2(z).unwrap();
        assert_eq!(m.len(), 3);
        assert!(v2(br#"{"zarr_consolidated_format":2,"metadata":{}}"#).is_err());
    }
}
