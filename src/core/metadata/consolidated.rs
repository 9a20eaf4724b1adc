//! Consolidated metadata: the documents of a group's members held in one document —
//! zarr-python 3's `consolidated_metadata` in a group's `zarr.json` (`kind: "inline"`), and
//! Zarr v2's `.zmetadata` (`zarr_consolidated_format: 1`, as zarr-python 2 and xarray write it).
//! Members' documents are kept as their JSON text, not parsed here.
use crate::core::error::{invalid, Result};
use crate::core::json::{self, Value};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// One member's document: its key relative to the group (`a/zarr.json`, `a/.zarray`) and text.
pub type Member = (String, String);

/// The members of the object at `path` in `text`, and the other members met on the way
/// (level, name, text); `None` when the document is not an object.
fn nested<'a>(text: &'a [u8], path: &[&str], what: &str) -> Result<Option<json::Nested<'a>>> {
    json::members_at(text, path).map_err(|e| invalid(format!("{what} is not valid JSON: {e}")))
}

/// A member met on the way, parsed (small: `kind`, `zarr_consolidated_format`).
fn beside(n: &json::Nested, level: usize, name: &str) -> Option<Value> {
    let raw = n.beside.iter().rev().find(|b| b.0 == level && b.1 == name)?.2;
    json::parse(raw.as_bytes()).ok()
}

fn owned(n: json::Nested) -> Vec<Member> {
    n.members.into_iter().map(|(k, v)| (k.into_owned(), v.to_string())).collect()
}

/// The members a Zarr v3 group's `zarr.json` holds in `consolidated_metadata` (keys
/// `<path>/zarr.json`); `None` when it holds none, or of a kind this reader does not know (it
/// need not: `must_understand` is false). One pass over the document, however large.
pub fn v3(zarr_json: &[u8]) -> Result<Option<Vec<Member>>> {
    let Ok(Some(n)) = nested(zarr_json, &["consolidated_metadata", "metadata"], "zarr.json") else { return Ok(None) };
    if !n.found || beside(&n, 1, "kind").is_some_and(|k| k.as_str() != Some("inline")) {
        return Ok(None);
    }
    Ok(Some(owned(n).into_iter().map(|(path, doc)| (format!("{}/zarr.json", path.trim_matches('/')), doc)).collect()))
}

/// The members a Zarr v2 `.zmetadata` holds (keys as it spells them: `.zgroup`, `a/.zarray`,
/// `a/.zattrs`, …).
pub fn v2(zmetadata: &[u8]) -> Result<Vec<Member>> {
    let n = nested(zmetadata, &["metadata"], ".zmetadata")?.ok_or_else(|| invalid(".zmetadata must be an object"))?;
    match beside(&n, 0, "zarr_consolidated_format").and_then(|v| v.as_u64()) {
        Some(1) => {}
        other => return Err(invalid(format!(".zmetadata: zarr_consolidated_format must be 1, found {}", other.map_or("none".into(), |v| v.to_string())))),
    }
    if !n.found {
        return Err(invalid(".zmetadata needs a metadata object"));
    }
    Ok(owned(n))
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
        let e = v2(br#"{"zarr_consolidated_format":2,"metadata":{}}"#).unwrap_err();
        assert_eq!(e.code, crate::core::error::ErrorCode::InvalidMetadata, "{e}");
        assert!(e.message.contains("zarr_consolidated_format must be 1, found 2"), "{e}");
    }
}
