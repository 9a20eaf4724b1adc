//! The Zarr nodes a TIFF file is presented as. Pages: one image is the root array; several, a
//! root group of arrays `0`, `1`, … with OME-Zarr `multiscales` over a COG's overviews.
//! OME-TIFF: one series is the root image group, its pyramid levels arrays `0`, `1`, … of axes
//! `[t, c, z, y, x]`; several, a root group (`bioformats2raw.layout` 3) of such image groups.
use crate::float::write_f64;
use crate::image::Desc;
use crate::ome::Series;
use abi::json;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// One node of the answer: `{"path":…,"zarr_json":{…}}`, and for an array where its tiles are:
/// `"dir"` (the directory it was described from), `"tiled"`, `"chunks"` (along sample planes,
/// y, x), `"planar"`, and for an OME-TIFF level its `"series"` and `"level"`.
fn node(out: &mut String, path: &str, zarr_json: &[u8], array: Option<(u64, &Desc, Option<(usize, usize)>)>) {
    if out.len() > 1 {
        out.push(',');
    }
    out.push_str("{\"path\":");
    json::str(out, path);
    out.push_str(",\"zarr_json\":");
    out.push_str(core::str::from_utf8(zarr_json).unwrap_or("{}"));
    if let Some((dir, d, level)) = array {
        out.push_str(&format!(",\"dir\":{dir},\"tiled\":{},\"planar\":{},\"chunks\":", d.tiled, d.planar));
        json::list(out, &d.chunks);
        if let Some((series, level)) = level {
            out.push_str(&format!(",\"series\":{series},\"level\":{level}"));
        }
    }
    out.push('}');
}

fn num(x: f64) -> String {
    let mut s = String::new();
    if !write_f64(&mut s, x) {
        s.push('1');
    }
    s
}

/// OME-Zarr (0.4) `multiscales` of levels `paths` with these axes and each level's scale.
fn multiscales(name: &str, axes: &str, levels: &[(String, Vec<f64>)]) -> String {
    let mut j = String::from("\"multiscales\":[{\"version\":\"0.4\",\"name\":");
    json::str(&mut j, name);
    j.push_str(",\"axes\":");
    j.push_str(axes);
    j.push_str(",\"datasets\":[");
    for (k, (path, scale)) in levels.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        j.push_str("{\"path\":");
        json::str(&mut j, path);
        j.push_str(",\"coordinateTransformations\":[{\"type\":\"scale\",\"scale\":[");
        j.push_str(&scale.iter().map(|x| num(*x)).collect::<Vec<_>>().join(","));
        j.push_str("]}]}");
    }
    j.push_str("]}]");
    j
}

fn group(attributes: &str) -> Vec<u8> {
    format!("{{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{{{attributes}}}}}").into_bytes()
}

/// The nodes of a file of pages (`descs`, the directories at `offsets`), as a JSON list.
pub fn pages(descs: &[Desc], offsets: &[u64]) -> String {
    let mut out = String::from("[");
    let array = |out: &mut String, k: usize, path: &str| {
        node(out, path, &descs[k].zarr_json(&[], ""), Some((offsets[k], &descs[k], None)))
    };
    if descs.len() == 1 {
        array(&mut out, 0, "");
        out.push(']');
        return out;
    }
    let full = &descs[0];
    let levels: Vec<usize> = core::iter::once(0)
        .chain((1..descs.len()).filter(|&i| descs[i].subfile & 1 == 1 && descs[i].axes() == full.axes()))
        .collect();
    let mut attrs = format!("\"tiff\":{{\"images\":{}}}", descs.len());
    if levels.len() > 1 {
        let axes = if full.axes() == 3 {
            "[{\"name\":\"c\",\"type\":\"channel\"},{\"name\":\"y\",\"type\":\"space\"},{\"name\":\"x\",\"type\":\"space\"}]"
        } else {
            "[{\"name\":\"y\",\"type\":\"space\"},{\"name\":\"x\",\"type\":\"space\"}]"
        };
        let scaled: Vec<(String, Vec<f64>)> = levels
            .iter()
            .map(|&i| {
                let (fy, fx) = (full.height as f64 / descs[i].height as f64, full.width as f64 / descs[i].width as f64);
                let scale = if full.axes() == 3 { alloc::vec![1.0, fy, fx] } else { alloc::vec![fy, fx] };
                (format!("{i}"), scale)
            })
            .collect();
        attrs.push(',');
        attrs.push_str(&multiscales("", axes, &scaled));
    }
    node(&mut out, "", &group(&attrs), None);
    for k in 0..descs.len() {
        array(&mut out, k, &format!("{k}"));
    }
    out.push(']');
    out
}

/// OME units as OME-Zarr (UDUNITS) names them, where they have one.
fn unit(u: &str) -> Option<&'static str> {
    Some(match u {
        "µm" | "um" | "\u{3bc}m" => "micrometer",
        "nm" => "nanometer",
        "mm" => "millimeter",
        "cm" => "centimeter",
        "m" => "meter",
        "Å" => "angstrom",
        "pm" => "picometer",
        _ => return None,
    })
}

/// Series `k`'s image group and its level arrays (each from the directory with it), under
/// `prefix` (`""` or `"3/"`).
fn image(k: usize, s: &Series, levels: &[(u64, Desc)], prefix: &str, out: &mut String) {
    let [_, _, sz, sc, st] = s.size;
    let lead = [("t", st), ("c", sc), ("z", sz)];
    let space = |k: usize| {
        let u = s.physical[k].as_ref().and_then(|(_, u)| unit(u));
        let name = ["x", "y", "z"][k];
        match u {
            Some(u) => format!("{{\"name\":\"{name}\",\"type\":\"space\",\"unit\":\"{u}\"}}"),
            None => format!("{{\"name\":\"{name}\",\"type\":\"space\"}}"),
        }
    };
    let axes = format!(
        "[{{\"name\":\"t\",\"type\":\"time\"}},{{\"name\":\"c\",\"type\":\"channel\"}},{},{},{}]",
        space(2),
        space(1),
        space(0)
    );
    let size = |k: usize| s.physical[k].as_ref().map_or(1.0, |(v, _)| *v);
    let full = &levels[0].1;
    let scaled: Vec<(String, Vec<f64>)> = levels
        .iter()
        .enumerate()
        .map(|(l, (_, d))| {
            let (fy, fx) = (full.height as f64 / d.height as f64, full.width as f64 / d.width as f64);
            (format!("{l}"), alloc::vec![1.0, 1.0, size(2), size(1) * fy, size(0) * fx])
        })
        .collect();
    let mut attrs = multiscales(&s.name, &axes, &scaled);
    attrs.push_str(",\"omero\":{\"channels\":[");
    for (k, ch) in s.channels.iter().enumerate() {
        if k > 0 {
            attrs.push(',');
        }
        attrs.push_str("{\"label\":");
        json::str(&mut attrs, ch.name.as_deref().unwrap_or(""));
        if let Some(rgba) = ch.color {
            attrs.push_str(&format!(",\"color\":\"{:06X}\"", (rgba as u32) >> 8));
        }
        attrs.push_str(",\"active\":true}");
    }
    attrs.push_str("]}");
    let root = prefix.trim_end_matches('/');
    node(out, root, &group(&attrs), None);
    for (l, (dir, d)) in levels.iter().enumerate() {
        node(out, &format!("{prefix}{l}"), &d.zarr_json(&lead, ""), Some((*dir, d, Some((k, l)))));
    }
}

/// The nodes of an OME-TIFF, as a JSON list: its series, each with its first plane's levels
/// described (with their directories).
pub fn ome(series: &[(Series, Vec<(u64, Desc)>)]) -> String {
    let mut out = String::from("[");
    let several = series.len() > 1;
    if several {
        let attrs = format!("\"bioformats2raw.layout\":3,\"tiff\":{{\"series\":{}}}", series.len());
        node(&mut out, "", &group(&attrs), None);
    }
    for (k, (s, levels)) in series.iter().enumerate() {
        let prefix = if several { format!("{k}/") } else { String::new() };
        image(k, s, levels, &prefix, &mut out);
    }
    out.push(']');
    out
}
