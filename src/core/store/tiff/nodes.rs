//! The Zarr nodes a TIFF file is presented as. Pages: one image is the root array; several, a
//! root group of arrays `0`, `1`, … with OME-Zarr `multiscales` over a COG's overviews.
//! OME-TIFF: one series is the root image group, its pyramid levels arrays `0`, `1`, … of axes
//! `[t, c, z, y, x]`; several, a root group (`bioformats2raw.layout` 3) of such image groups.
use super::image::Desc;
use super::ome::Series;
use crate::core::error::Result;
use crate::core::json::{write_f64, write_str};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// Where an array's tiles are.
#[derive(Clone, Debug)]
pub enum Source {
    /// In the directory at this offset (its entries are the array's description's).
    Page(u64),
    /// In the directories of a series' planes (`level` 0) or their SubIFDs.
    Planes { series: Rc<Planes>, level: usize },
}

/// A series and the main-chain directory of each of its planes (plane index order).
#[derive(Debug)]
pub struct Planes {
    pub series: Series,
    pub planes: Vec<u64>,
}

#[derive(Clone, Debug)]
pub enum Node {
    Group(Vec<u8>),
    Array { zarr_json: Vec<u8>, desc: Desc, source: Source },
}

impl Node {
    pub fn zarr_json(&self) -> &[u8] {
        match self {
            Node::Group(j) | Node::Array { zarr_json: j, .. } => j,
        }
    }
}

/// The main-chain directory of plane (t, c, z).
pub fn plane_ifd(p: &Planes, t: u64, c: u64, z: u64) -> Option<u64> {
    let [_, _, sz, sc, st] = p.series.size;
    if t >= st || c >= sc || z >= sz {
        return None;
    }
    p.planes.get(p.series.plane(z, c, t) as usize).copied()
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
    write_str(&mut j, name);
    j.push_str(",\"axes\":");
    j.push_str(axes);
    j.push_str(",\"datasets\":[");
    for (k, (path, scale)) in levels.iter().enumerate() {
        if k > 0 {
            j.push(',');
        }
        j.push_str("{\"path\":");
        write_str(&mut j, path);
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

/// The nodes of a file of pages (`descs`, the directories at `offsets`).
pub fn pages(descs: &[Desc], offsets: &[u64]) -> Vec<(String, Node)> {
    let array = |k: usize| Node::Array {
        zarr_json: descs[k].zarr_json(&[], ""),
        desc: descs[k].clone(),
        source: Source::Page(offsets[k]),
    };
    if descs.len() == 1 {
        return alloc::vec![(String::new(), array(0))];
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
    let mut out = alloc::vec![(String::new(), Node::Group(group(&attrs)))];
    out.extend((0..descs.len()).map(|k| (format!("{k}"), array(k))));
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

/// One series' image group attributes and its level arrays, under `prefix` (`""` or `"3/"`).
fn image(p: &Rc<Planes>, levels: &[Desc], prefix: &str, out: &mut Vec<(String, Node)>) {
    let s = &p.series;
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
    let full = &levels[0];
    let scaled: Vec<(String, Vec<f64>)> = levels
        .iter()
        .enumerate()
        .map(|(l, d)| {
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
        write_str(&mut attrs, ch.name.as_deref().unwrap_or(""));
        if let Some(rgba) = ch.color {
            attrs.push_str(&format!(",\"color\":\"{:06X}\"", (rgba as u32) >> 8));
        }
        attrs.push_str(",\"active\":true}");
    }
    attrs.push_str("]}");
    let root = prefix.trim_end_matches('/');
    out.push((String::from(root), Node::Group(group(&attrs))));
    for (l, d) in levels.iter().enumerate() {
        let zarr_json = d.zarr_json(&lead, "");
        let source = Source::Planes { series: p.clone(), level: l };
        out.push((format!("{prefix}{l}"), Node::Array { zarr_json, desc: d.clone(), source }));
    }
}

/// The nodes of an OME-TIFF: its series, each with the descriptions of its first plane's levels.
pub fn ome(series: Vec<(Planes, Vec<Desc>)>) -> Result<Vec<(String, Node)>> {
    let mut out = Vec::new();
    let several = series.len() > 1;
    if several {
        out.push((
            String::new(),
            Node::Group(group(&format!("\"bioformats2raw.layout\":3,\"tiff\":{{\"series\":{}}}", series.len()))),
        ));
    }
    for (k, (planes, levels)) in series.into_iter().enumerate() {
        let prefix = if several { format!("{k}/") } else { String::new() };
        image(&Rc::new(planes), &levels, &prefix, &mut out);
    }
    Ok(out)
}
