//! Multiscale images as one description: OME-Zarr 0.4 (`multiscales` in the group's attributes)
//! and 0.5 (under `ome`), and Neuroglancer precomputed scales (`info`). Levels finest first,
//! each with its path and its scale and translation per axis (the dataset's transformations
//! composed with the multiscale's own); axes with type and unit; OME's `omero` channels.
//! Documents in, a description out: no I/O.
use crate::core::error::{invalid, Result};
use crate::core::json::{self, Keep, Map, Value};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    /// `space`, `time`, `channel` (or another the writer named), if known.
    pub kind: Option<String>,
    pub unit: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Relative to the image (OME: the dataset's path; precomputed: the scale's key).
    pub path: String,
    pub scale: Vec<f64>,
    pub translation: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Multiscale {
    /// `"0.4"`, `"0.5"`, … for OME-Zarr; `"precomputed"`.
    pub version: String,
    pub name: Option<String>,
    pub axes: Vec<Axis>,
    pub levels: Vec<Level>,
    /// OME `omero` (rendering settings of the channels), as written.
    pub omero: Option<Value>,
    /// OME `image-label` (this image is a label image), as written.
    pub image_label: Option<Value>,
}

/// Axis types by name, for OME 0.3's list of names.
fn kind_of(name: &str) -> Option<String> {
    match name {
        "x" | "y" | "z" => Some("space".into()),
        "t" => Some("time".into()),
        "c" => Some("channel".into()),
        _ => None,
    }
}

/// `coordinateTransformations` composed: scale, then translation, in order.
fn transforms(list: Option<&Value>, n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let (mut scale, mut translation) = (vec![1.0; n], vec![0.0; n]);
    let Some(list) = list else { return Ok((scale, translation)) };
    let list = list.as_array().ok_or_else(|| invalid("coordinateTransformations must be a list"))?;
    let numbers = |v: Option<&Value>, what: &str| -> Result<Vec<f64>> {
        let a = v.and_then(Value::as_array).ok_or_else(|| invalid(format!("a {what} transformation needs a list")))?;
        let xs: Option<Vec<f64>> = a.iter().map(Value::as_f64).collect();
        match xs {
            Some(xs) if xs.len() == n => Ok(xs),
            _ => Err(invalid(format!("a {what} transformation needs {n} numbers"))),
        }
    };
    for t in list {
        match t.get("type").and_then(Value::as_str) {
            Some("scale") => {
                let s = numbers(t.get("scale"), "scale")?;
                for k in 0..n {
                    scale[k] *= s[k];
                    translation[k] *= s[k];
                }
            }
            Some("translation") => {
                let d = numbers(t.get("translation"), "translation")?;
                for k in 0..n {
                    translation[k] += d[k];
                }
            }
            // `identity`, or a transformation given by `path` (a file): no change here.
            _ => {}
        }
    }
    Ok((scale, translation))
}

/// The first multiscale image of a group's attributes, if it is an OME-Zarr image; `ndim`:
/// the dimensions of its first level's array, when the axes are not written (OME ≤ 0.3).
pub fn ome(attributes: &Map, ndim: Option<usize>) -> Result<Option<Multiscale>> {
    let (ome, version) = match attributes.get("ome") {
        Some(Value::Object(o)) if o.contains_key("multiscales") => {
            (o, o.get("version").and_then(Value::as_str).unwrap_or("0.5").to_string())
        }
        _ if attributes.contains_key("multiscales") => {
            let v = attributes["multiscales"].get(0).and_then(|m| m.get("version")).and_then(Value::as_str);
            (attributes, v.unwrap_or("0.4").to_string())
        }
        _ => return Ok(None),
    };
    let bad = |why: &str| invalid(format!("OME-Zarr multiscales: {why}"));
    let ms = ome["multiscales"].get(0).and_then(Value::as_object).ok_or_else(|| bad("no multiscale image"))?;
    let datasets = ms.get("datasets").and_then(Value::as_array).filter(|d| !d.is_empty());
    let datasets = datasets.ok_or_else(|| bad("no datasets"))?;
    let axes: Vec<Axis> = match ms.get("axes").and_then(Value::as_array) {
        Some(a) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(Axis { name: s.clone(), kind: kind_of(s), unit: None }),
                Value::Object(o) => {
                    let name = o.get("name").and_then(Value::as_str).ok_or_else(|| bad("an axis without a name"))?;
                    let kind = o.get("type").and_then(Value::as_str).map(String::from).or_else(|| kind_of(name));
                    Ok(Axis { name: name.into(), kind, unit: o.get("unit").and_then(Value::as_str).map(String::from) })
                }
                _ => Err(bad("an axis is a name or an object")),
            })
            .collect::<Result<_>>()?,
        None => {
            let n = ndim.ok_or_else(|| bad("no axes"))?;
            ["t", "c", "z", "y", "x"].iter().skip(5usize.saturating_sub(n)).map(|s| Axis { name: (*s).into(), kind: kind_of(s), unit: None }).collect()
        }
    };
    let n = axes.len();
    let (outer_scale, outer_translation) = transforms(ms.get("coordinateTransformations"), n)?;
    let mut levels = Vec::new();
    for d in datasets {
        let path = d.get("path").and_then(Value::as_str).ok_or_else(|| bad("a dataset without a path"))?;
        let (s, t) = transforms(d.get("coordinateTransformations"), n)?;
        levels.push(Level {
            path: path.into(),
            scale: (0..n).map(|k| s[k] * outer_scale[k]).collect(),
            translation: (0..n).map(|k| t[k] * outer_scale[k] + outer_translation[k]).collect(),
        });
    }
    sort_finest_first(&mut levels, &axes);
    Ok(Some(Multiscale {
        version,
        name: ms.get("name").and_then(Value::as_str).map(String::from),
        axes,
        levels,
        omero: ome.get("omero").or_else(|| attributes.get("omero")).cloned(),
        image_label: ome.get("image-label").cloned(),
    }))
}

/// [`ome`] of a group's attributes given as JSON text: only the members it reads are parsed.
pub fn ome_in(attributes: &[u8], ndim: Option<usize>) -> Result<Option<Multiscale>> {
    let keep = |k: &str| if matches!(k, "ome" | "multiscales" | "omero") { Keep::Parse } else { Keep::Skip };
    match json::parse_object_with(attributes, keep) {
        Ok(Some(f)) => ome(&f.object, ndim),
        Ok(None) => Err(invalid("group attributes must be a JSON object")),
        Err(e) => Err(invalid(format!("group attributes is not valid JSON: {e}"))),
    }
}

/// Neuroglancer precomputed: one level per scale of its `info` (resolution in nm, voxel
/// offset), axes x, y, z, channel.
pub fn precomputed(info: &Value) -> Result<Multiscale> {
    let scales = info.get("scales").and_then(Value::as_array).filter(|s| !s.is_empty());
    let scales = scales.ok_or_else(|| invalid("precomputed info: no scales"))?;
    let axis = |name: &str, kind: &str, unit: Option<&str>| Axis { name: name.into(), kind: Some(kind.into()), unit: unit.map(String::from) };
    let axes = vec![axis("x", "space", Some("nanometer")), axis("y", "space", Some("nanometer")), axis("z", "space", Some("nanometer")), axis("channel", "channel", None)];
    let three = |v: Option<&Value>, default: f64| -> Vec<f64> {
        let a = v.and_then(Value::as_array);
        (0..3).map(|k| a.and_then(|a| a.get(k)).and_then(Value::as_f64).unwrap_or(default)).collect()
    };
    let mut levels = Vec::new();
    for (i, s) in scales.iter().enumerate() {
        let res = three(s.get("resolution"), 1.0);
        let off = three(s.get("voxel_offset"), 0.0);
        let mut scale = res.clone();
        scale.push(1.0);
        let mut translation: Vec<f64> = (0..3).map(|k| off[k] * res[k]).collect();
        translation.push(0.0);
        let path = s.get("key").and_then(Value::as_str).map_or_else(|| i.to_string(), String::from);
        levels.push(Level { path, scale, translation });
    }
    sort_finest_first(&mut levels, &axes);
    Ok(Multiscale { version: "precomputed".into(), name: None, axes, levels, omero: None, image_label: None })
}

/// Finest first: by the product of the spatial scales (stable for equal ones).
fn sort_finest_first(levels: &mut [Level], axes: &[Axis]) {
    let size = |l: &Level| -> f64 {
        l.scale.iter().zip(axes).filter(|(_, a)| a.kind.as_deref() == Some("space")).map(|(s, _)| *s).product()
    };
    // Insertion sort, stable (a handful of levels; the library's sort would add KBs of code).
    for i in 1..levels.len() {
        let mut j = i;
        while j > 0 && size(&levels[j - 1]) > size(&levels[j]) {
            levels.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::json;

    #[test]
    fn ome_05_and_04() {
        let v05 = json!({"ome": {"version": "0.5", "multiscales": [{"name": "cells",
            "axes": [{"name": "z", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
            "datasets": [{"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [2.0, 0.5, 0.5]}]},
                         {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 0.25, 0.25]},
                                                                      {"type": "translation", "translation": [0.0, 1.0, 1.0]}]}],
            "coordinateTransformations": [{"type": "scale", "scale": [1.0, 2.0, 2.0]}]}],
            "omero": {"channels": [{"label": "DNA"}]}}});
        let m = ome(v05.as_object().unwrap(), None).unwrap().unwrap();
        assert_eq!(m.version, "0.5");
        assert_eq!(m.levels[0].path, "0", "finest first");
        assert_eq!(m.levels[0].scale, [1.0, 0.5, 0.5]);
        assert_eq!(m.levels[0].translation, [0.0, 2.0, 2.0]);
        assert_eq!(m.axes[0].unit.as_deref(), Some("micrometer"));
        assert_eq!(m.omero.unwrap()["channels"][0]["label"], "DNA");
        // 0.4: at the top level; 0.3: axes as names; none: from the array's dimensions.
        let v04 = json!({"multiscales": [{"version": "0.4", "axes": ["c", "y", "x"], "datasets": [{"path": "0"}]}]});
        let m = ome(v04.as_object().unwrap(), None).unwrap().unwrap();
        assert_eq!((m.version.as_str(), m.axes[0].kind.as_deref()), ("0.4", Some("channel")));
        let v02 = json!({"multiscales": [{"version": "0.2", "datasets": [{"path": "0"}]}]});
        assert_eq!(ome(v02.as_object().unwrap(), Some(2)).unwrap().unwrap().axes.len(), 2);
        assert!(ome(json!({"other": 1}).as_object().unwrap(), None).unwrap().is_none());
        let e = ome(json!({"multiscales": [{"datasets": []}]}).as_object().unwrap(), None).unwrap_err();
        assert_eq!(e.code, crate::core::error::ErrorCode::InvalidMetadata, "{e}");
        assert_eq!(e.message, "OME-Zarr multiscales: no datasets");
    }

    #[test]
    fn ome_from_text_parses_only_its_members() {
        let text = br#"{"huge": [1, 2, {"x": "\u00e9"}], "multiscales": [{"version": "0.4", "axes": ["y", "x"],
            "datasets": [{"path": "0"}]}], "omero": {"id": 9007199254740993}}"#;
        let m = ome_in(text, None).unwrap().unwrap();
        assert_eq!(m.levels[0].path, "0");
        assert_eq!(m.omero.unwrap()["id"].as_u64(), Some(9007199254740993));
        let invalid = |text: &[u8], why: &str| {
            let e = ome_in(text, None).unwrap_err();
            assert_eq!(e.code, crate::core::error::ErrorCode::InvalidMetadata, "{e}");
            assert!(e.message.starts_with(why), "{why}: {e}");
        };
        // Skipped members are validated.
        invalid(br#"{"huge": [1, 2"#, "group attributes is not valid JSON: EOF while parsing a list");
        invalid(b"[]", "group attributes must be a JSON object");
        assert!(ome_in(b"{}", None).unwrap().is_none());
    }

    #[test]
    fn precomputed_scales() {
        let info = json!({"scales": [{"key": "8_8_8", "resolution": [8, 8, 8], "voxel_offset": [1, 2, 3]},
                                     {"key": "4_4_4", "resolution": [4, 4, 4]}]});
        let m = precomputed(&info).unwrap();
        assert_eq!(m.levels[0].path, "4_4_4");
        assert_eq!(m.levels[1].translation, [8.0, 16.0, 24.0, 0.0]);
        assert_eq!(m.axes.len(), 4);
    }
}
