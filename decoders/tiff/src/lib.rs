//! shardfetch's TIFF decoder module: TIFF images described as Zarr v3 documents — their tags,
//! compression and predictor as codecs, GeoTIFF keys and OME-XML as attributes, a COG's
//! overviews and an OME-TIFF's series and levels as OME-Zarr nodes. The core reads the file
//! (header, directories, the values that describe them) and follows directories to tiles; this
//! module only describes, from the bytes it is handed.
//!
//! `decode(input, _)`: `input` is a request and the file's bytes the host read for it: `u32 LE
//! n`, `n` bytes of JSON, then windows `u64 LE offset, u64 LE len, len bytes` (the header at
//! offset 0, each directory, the values of its tags that were read). Answers (JSON):
//!
//! - `{"op":"ome","file":URL}` → `{"series":[{"planes":[IFD,…],"size":[T,C,Z]},…]}`: the
//!   series of the OME-XML in the first directory's `ImageDescription` (none: not an OME-TIFF),
//!   each plane's directory in the main chain, in (t, c, z) order;
//! - `{"op":"nodes","pages":[offset,…]}` → `{"nodes":[…]}`: the nodes of a file of pages;
//! - `{"op":"nodes","file":URL,"series":[{"index":K,"levels":[offset,…]},…]}` → `{"nodes":[…]}`:
//!   an OME-TIFF's, each series' first plane (directory K) and its SubIFDs at those offsets;
//! - `{"op":"value","type":T,"count":N,"big_endian":B}` with the value's bytes as the one window
//!   → `{"value":…}`: a tag's value as the raw tags give it (`null`: a type TIFF does not define);
//! - `{"op":"ready"}` → `{}` (asked before the file is read: the host loads the module first);
//! - any: `{"error":{"code":…,"message":…}}` (the host names the file before the message).
//!
//! A node is `{"path":…,"zarr_json":{…}}`, an array's with where its tiles are: `"dir"` (the
//! directory it was described from), `"tiled"`, `"planar"`, `"chunks"` (along sample planes, y,
//! x), and an OME-TIFF level's `"series"` and `"level"`.
#![forbid(unsafe_code)]
extern crate alloc;

mod fail;
mod float;
mod image;
mod nodes;
mod ome;

use abi::json::{self, Json};
use tiff_ifd as ifd;
use abi::Failure;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use ifd::{directory_len, entry_count, parse_ifd, At, Entry, Header, Ifd, IMAGE_DESCRIPTION};
use abi::held;
use fail::{corrupt, Fail};
use image::{Desc, Values};

abi::export_decoder!(decode);


fn unsupported(what: String) -> Fail {
    Fail("UnsupportedFormat", format!("OME-TIFF {what} is not read"))
}

pub fn decode(input: &[u8], _args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (req, file) = abi::request(input)?;
    let op = req.get("op").and_then(Json::as_str).ok_or_else(|| Failure::corrupt("request: no op"))?;
    let answer = match op {
        "ready" => Ok(String::from("{}")),
        "ome" => ome_planes(&req, &file),
        "nodes" => nodes(&req, &file),
        "value" => tag_value(&req, &file),
        other => return Err(Failure::corrupt(format!("request: unknown op \"{other}\""))),
    };
    let out = answer.unwrap_or_else(|Fail(code, message)| {
        let mut o = format!("{{\"error\":{{\"code\":\"{code}\",\"message\":");
        json::str(&mut o, &message);
        o.push_str("}}");
        o
    });
    Ok(out.into_bytes())
}

fn header(file: &[(u64, &[u8])]) -> Result<Header, Fail> {
    let head = abi::tails(file.iter().copied(), 0).next().unwrap_or_default();
    Header::parse(head).ok_or_else(|| corrupt("no TIFF header (II*, MM*, II+, MM+)"))
}

/// The directory at `at`, from the windows.
fn directory(h: &Header, file: &[(u64, &[u8])], at: u64) -> Result<Ifd, Fail> {
    let missing = || corrupt(format!("no directory at offset {at}"));
    let n = held(file.iter().copied(), at, h.sizes().0).and_then(|b| entry_count(h, b)).ok_or_else(missing)?;
    let len = directory_len(h, n).ok_or_else(|| corrupt("a directory too large"))?;
    parse_ifd(h, held(file.iter().copied(), at, len).ok_or_else(missing)?).map_err(corrupt)
}

/// The series of the OME-XML in the first directory (none when there is none).
fn series(h: &Header, file: &[(u64, &[u8])]) -> Result<Vec<ome::Series>, Fail> {
    let ifd0 = directory(h, file, h.first)?;
    let v = Values { header: h, ifd: &ifd0, file };
    Ok(v.text(IMAGE_DESCRIPTION).map(|x| ome::parse(&x)).unwrap_or_default())
}

fn ome_planes(req: &Json, file: &[(u64, &[u8])]) -> Result<String, Fail> {
    let name = req.get("file").and_then(Json::as_str).unwrap_or("");
    let mut out = String::from("{\"series\":[");
    let mut next_ifd = 0u64;
    for (k, s) in series(&header(file)?, file)?.iter().enumerate() {
        let planes = s.planes(next_ifd, name).map_err(unsupported)?;
        next_ifd += planes.len() as u64;
        let [_, _, sz, sc, st] = s.size;
        let mut tcz = Vec::with_capacity(planes.len());
        for t in 0..st {
            for c in 0..sc {
                tcz.extend((0..sz).map(|z| planes[s.plane(z, c, t) as usize]));
            }
        }
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"planes\":");
        json::list(&mut out, &tcz);
        out.push_str(",\"size\":");
        json::list(&mut out, &[st, sc, sz]);
        out.push('}');
    }
    out.push_str("]}");
    Ok(out)
}

fn nodes(req: &Json, file: &[(u64, &[u8])]) -> Result<String, Fail> {
    let h = header(file)?;
    let describe = |k: usize, at: u64| Desc::new(k, &Values { header: &h, ifd: &directory(&h, file, at)?, file });
    let offsets = |v: Option<&Json>| match v {
        Some(Json::Arr(a)) => a.iter().filter_map(Json::as_u64).collect(),
        _ => Vec::new(),
    };
    let list = match req.get("series") {
        Some(Json::Arr(wanted)) => {
            let mut all = Vec::new();
            for (s, want) in series(&h, file)?.into_iter().zip(wanted) {
                let k = want.get("index").and_then(Json::as_u64).unwrap_or(0) as usize;
                let levels: Vec<u64> = offsets(want.get("levels"));
                let first = *levels.first().ok_or_else(|| corrupt("a series of no directory"))?;
                let d = describe(k, first)?;
                if d.samples != 1 || d.width != s.size[0] || d.height != s.size[1] {
                    let why = format!("series \"{}\" ({} samples per pixel, or sizes unlike its planes')", s.name, d.samples);
                    return Err(unsupported(why));
                }
                let mut described = alloc::vec![(first, d)];
                for &at in &levels[1..] {
                    described.push((at, describe(k, at)?));
                }
                all.push((s, described));
            }
            nodes::ome(&all)
        }
        _ => {
            let pages: Vec<u64> = offsets(req.get("pages"));
            let descs = pages.iter().enumerate().map(|(k, &at)| describe(k, at)).collect::<Result<Vec<_>, _>>()?;
            nodes::pages(&descs, &pages)
        }
    };
    Ok(format!("{{\"nodes\":{list}}}"))
}

fn tag_value(req: &Json, file: &[(u64, &[u8])]) -> Result<String, Fail> {
    let n = |k: &str| req.get(k).and_then(Json::as_u64).ok_or_else(|| corrupt(format!("request: no {k}")));
    let e = Entry { tag: 0, typ: u16::try_from(n("type")?).unwrap_or(0), count: n("count")?, at: At::Offset(0) };
    let h = Header { big_endian: req.get("big_endian") == Some(&Json::Bool(true)), bigtiff: false, first: 0 };
    let b = file.first().map_or(&[][..], |w| w.1);
    let mut out = String::from("{\"value\":");
    if !image::value(&mut out, &h, &e, b) {
        out.push_str("null");
    }
    out.push('}');
    Ok(out)
}
