//! shardfetch's HDF5 decoder module: HDF5 (and NetCDF-4) metadata read from a sparse view of
//! the file, answered as Zarr v3 documents and chunk locations; the core drives it over HTTP.
//!
//! `decode(input, _)`: `input` is a request and the file's bytes the host holds so far:
//! `u32 LE n`, `n` bytes of JSON, then windows `u64 LE offset, u64 LE len, len bytes`. Answers
//! (JSON, always starting with `{`):
//!
//! - `{"op":"node","path":"grp/temp","size":N|null}` → `{"node":{"zarr_json":{…},"children":[…]}}`
//!   (children for groups only), or `{"node":null}`;
//! - `{"op":"chunk","path":…,"coords":[i,j],"size":N}` → `{"chunk":[offset,len]}` or
//!   `{"chunk":null}`, with `"more":[[[i,j],offset,len],…]` (other chunks found on the way) and
//!   `"short":true` when the range is shorter than a whole chunk (a contiguous dataset's last
//!   rows);
//! - any op: `{"need":[[offset,len],…]}` (bytes to fetch and call again with), or
//!   `{"error":{"code":…,"message":…}}` (the file cannot be answered).
//!
//! A chunk stored with filters skipped (its filter mask: an optional filter that failed, as LZF
//! does on bytes it cannot shrink) adds `"wrap":[ID,…]`: `{"op":"wrap","filters":[…]}` with the
//! chunk as the one window at offset 0 answers it as those filters would have stored it (LZF
//! literal runs, stored deflate blocks), so that the dataset's codecs read it as any other.
//!
//! `{"op":"filter","filter":ID,"params":[…],"size":N}` with one window at offset 0 (a chunk as
//! stored) answers the chunk's bytes decoded through HDF5 filter ID (LZF, HDF5-LZ4,
//! scale-offset): raw bytes, not JSON; failures are `Err`.
#![forbid(unsafe_code)]
extern crate alloc;

mod dataset;
mod filters;
mod group;
mod heap;
mod index;
mod io;
mod object;
mod types;

use abi::{json, Failure};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use dataset::{dataset, Dataset, Layout, CONTIG_TARGET};
use group::{attributes, kind, links, resolve, Kind, Target, Visited};
use io::{all, context, corrupt, Code, File, E, R, UNDEF};
use json::Json;
use object::{header, superblock, Header, Super, ATTRIBUTE};
use types::{attr_value, Attr, Dt};

abi::export_decoder!(decode);

pub fn decode(input: &[u8], _args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (req, windows) = abi::request(input)?;
    let op = req.get("op").and_then(Json::as_str).ok_or_else(|| Failure::corrupt("request: no op"))?;
    if op == "filter" {
        let id = req.get("filter").and_then(Json::as_u64).ok_or_else(|| Failure::corrupt("request: no filter id"))?;
        let size = req.get("size").and_then(Json::as_u64).ok_or_else(|| Failure::corrupt("request: no size"))?;
        let params: Vec<u64> = match req.get("params") {
            Some(Json::Arr(a)) => a.iter().map(|v| v.as_u64().ok_or_else(|| Failure::corrupt("request: params"))).collect::<Result<_, _>>()?,
            None | Some(Json::Null) => Vec::new(),
            _ => return Err(Failure::corrupt("request: params must be a list")),
        };
        let data = match windows.as_slice() {
            [(0, b)] => *b,
            [] => &[][..],
            _ => return Err(Failure::corrupt("request: op filter takes one window at offset 0")),
        };
        return filters::run(id, &params, data, size);
    }
    if op == "wrap" {
        let ids: Vec<u64> = match req.get("filters") {
            Some(Json::Arr(a)) => a.iter().map(|v| v.as_u64().ok_or_else(|| Failure::corrupt("request: filters"))).collect::<Result<_, _>>()?,
            _ => return Err(Failure::corrupt("request: filters must be a list")),
        };
        let data = match windows.as_slice() {
            [(0, b)] => *b,
            [] => &[][..],
            _ => return Err(Failure::corrupt("request: op wrap takes one window at offset 0")),
        };
        return filters::wrap(&ids, data);
    }
    let size = match req.get("size") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| Failure::corrupt("request: size"))?),
    };
    let path = match req.get("path") {
        None | Some(Json::Null) => "",
        Some(Json::Str(s)) => s.as_str(),
        _ => return Err(Failure::corrupt("request: path must be a string")),
    };
    // A test hook: the contiguous layout's pseudo-chunk size.
    let target = req.get("contiguous_chunk_bytes").and_then(Json::as_u64).unwrap_or(CONTIG_TARGET).max(1);
    let mut file = File::new(windows, size);
    let answer = match op {
        "node" => node(&mut file, path, target),
        "chunk" => {
            let coords: Vec<u64> = match req.get("coords") {
                Some(Json::Arr(a)) => {
                    a.iter().map(|v| v.as_u64().ok_or_else(|| Failure::corrupt("request: coords"))).collect::<Result<_, _>>()?
                }
                _ => return Err(Failure::corrupt("request: coords must be a list")),
            };
            chunk(&mut file, path, &coords, target)
        }
        other => return Err(Failure::corrupt(format!("request: unknown op \"{other}\""))),
    };
    let mut out = String::new();
    match answer {
        Ok(s) => out = s,
        Err(E::Need) => {
            let needs = file.take_needs();
            if needs.is_empty() {
                return Err(Failure::corrupt("internal: bytes missing but none named"));
            }
            out.push_str("{\"need\":[");
            for (k, (o, l)) in needs.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                out.push('[');
                json::num(&mut out, o);
                out.push(',');
                json::num(&mut out, l);
                out.push(']');
            }
            out.push_str("]}");
        }
        Err(E::Fail(code, msg)) => {
            out.push_str("{\"error\":{\"code\":");
            json::str(&mut out, code.name());
            out.push_str(",\"message\":");
            json::str(&mut out, &msg);
            out.push_str("}}");
        }
    }
    Ok(out.into_bytes())
}

/// Read the superblock and set the file's address base and field sizes.
fn open(f: &mut File) -> R<Super> {
    let sb = superblock(f)?;
    f.base = sb.base;
    f.o = sb.o;
    f.l = sb.l;
    Ok(sb)
}

fn hdf5_path(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

fn node(f: &mut File, path: &str, target: u64) -> R<String> {
    let sb = open(f)?;
    let f = &*f;
    let name = hdf5_path(path);
    let mut visited = Vec::new();
    let found = context(resolve(f, &sb, None, path, &mut visited), &name)?;
    let Some((h, at)) = found else { return Ok(String::from("{\"node\":null}")) };
    let mut out = String::from("{\"node\":{\"zarr_json\":");
    match kind(&h) {
        Kind::Group => context(group_node(f, &sb, &h, &at, &mut visited, &mut out), &name)?,
        Kind::Array => context(array_node(f, &sb, &h, &at, &visited, target, &mut out), &name)?,
        Kind::Other => return Ok(String::from("{\"node\":null}")),
    }
    out.push_str("}}");
    Ok(out)
}

/// Attributes that NetCDF-4 and dimension scales keep for their own bookkeeping.
const HIDDEN: [&str; 7] = ["_Netcdf4Dimid", "_Netcdf4Coordinates", "_nc3_strict", "DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"];

const NC_DIM: &[u8] = b"This is a netCDF dimension but not a netCDF variable";

/// The attributes as a JSON object (every one JSON can say; the rest as null).
fn attributes_json(f: &File, attrs: &[Attr], extra: Option<(&str, &str)>) -> R<String> {
    let shown: Vec<&Attr> = attrs.iter().filter(|a| !HIDDEN.contains(&a.name.as_str())).collect();
    let values = all(&shown, |a| {
        let mut v = String::new();
        match attr_value(f, &mut v, &a.dt, &a.space, a.data) {
            Ok(()) => Ok(v),
            Err(E::Need) => Err(E::Need),
            Err(E::Fail(..)) => Ok(String::from("null")),
        }
    })?;
    let mut out = String::from("{");
    for (k, (a, v)) in shown.iter().zip(&values).enumerate() {
        if k > 0 {
            out.push(',');
        }
        json::str(&mut out, &a.name);
        out.push(':');
        out.push_str(v);
    }
    if let Some((k, v)) = extra {
        if out.len() > 1 {
            out.push(',');
        }
        json::str(&mut out, k);
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
    Ok(out)
}

fn is_nc_dimension(f: &File, h: &Header) -> bool {
    h.all(ATTRIBUTE).any(|m| {
        types::attribute(f, m.data).is_ok_and(|a| a.name == "NAME" && matches!(a.dt, Dt::Str { .. }) && a.data.starts_with(NC_DIM))
    })
}

fn group_node(f: &File, sb: &Super, h: &Header, at: &[String], visited: &mut Vec<Visited>, out: &mut String) -> R<()> {
    let attrs = attributes(f, h);
    let list = match visited.iter().find(|v| v.addr == h.addr) {
        Some(v) => Ok(v.links.clone()),
        None => links(f, sb, h),
    };
    let (attrs, list) = (attrs?, list?);
    let attrs = attributes_json(f, &attrs, None);
    let here = (h.addr, at.to_vec());
    let kids = all(&list, |l| {
        let r = match &l.target {
            Target::Hard(a) => header(f, *a).map(|h| Some((h, Vec::new()))),
            Target::Soft(p) => {
                let mut v = Vec::new();
                resolve(f, sb, Some(here.clone()), p, &mut v)
            }
            Target::External => Ok(None),
        };
        match r {
            Ok(Some((h, _))) => Ok(match kind(&h) {
                Kind::Group => Some((l.name.clone(), false)),
                Kind::Array if !is_nc_dimension(f, &h) => Some((l.name.clone(), true)),
                _ => None,
            }),
            Ok(None) => Ok(None),
            Err(E::Need) => Err(E::Need),
            // A child that cannot be read is left out of the listing (opening it says why).
            Err(E::Fail(..)) => Ok(None),
        }
    });
    let (attrs, kids) = (attrs?, kids?);
    let mut kids: Vec<(String, bool)> = kids.into_iter().flatten().collect();
    kids.sort();
    out.push_str("{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":");
    out.push_str(&attrs);
    out.push_str("},\"children\":[");
    for (k, (name, arr)) in kids.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push('[');
        json::str(out, name);
        out.push_str(if *arr { ",true]" } else { ",false]" });
    }
    out.push(']');
    Ok(())
}

/// Dimension names: from `DIMENSION_LIST` (each dimension's first scale, named by its link in a
/// group on the path, else by its `NAME`), or the dataset's own name if it is a scale itself.
fn dimension_names(f: &File, attrs: &[Attr], at: &[String], visited: &[Visited], rank: usize) -> R<Option<Vec<Option<String>>>> {
    let scale = attrs.iter().any(|a| a.name == "CLASS" && a.data.starts_with(b"DIMENSION_SCALE"));
    let Some(list) = attrs.iter().find(|a| a.name == "DIMENSION_LIST") else {
        if scale && rank == 1 {
            return Ok(Some(alloc::vec![at.last().cloned()]));
        }
        return Ok(None);
    };
    let Dt::Vlen { base } = &list.dt else { return Ok(None) };
    let rsize = base.size() as usize;
    let es = 8 + f.o as usize;
    if rsize == 0 || list.data.len() < rank * es {
        return Ok(None);
    }
    let dims: Vec<usize> = (0..rank).collect();
    let firsts = all(&dims, |&k| {
        let mut c = f.cur(&list.data[k * es..(k + 1) * es], "DIMENSION_LIST");
        let n = c.u32()?;
        let coll = c.addr()?;
        let idx = c.u32()?;
        if n == 0 || coll == UNDEF {
            return Ok(None);
        }
        let refs = heap::global(f, coll, idx)?;
        Ok(refs.get(..rsize).map(io::le))
    })?;
    let names = all(&firsts, |r| {
        let Some(addr) = *r else { return Ok(None) };
        for v in visited.iter().rev() {
            if let Some(l) = v.links.iter().find(|l| l.target == Target::Hard(addr)) {
                return Ok(Some(l.name.clone()));
            }
        }
        let h = match header(f, addr) {
            Ok(h) => h,
            Err(E::Need) => return Err(E::Need),
            Err(_) => return Ok(None),
        };
        for m in h.all(ATTRIBUTE) {
            if let Ok(a) = types::attribute(f, m.data) {
                if a.name == "NAME" && !a.data.starts_with(NC_DIM) {
                    let end = a.data.iter().position(|&b| b == 0).unwrap_or(a.data.len());
                    return Ok(Some(String::from_utf8_lossy(&a.data[..end]).into_owned()));
                }
            }
        }
        Ok(None)
    })?;
    Ok(Some(names))
}

fn array_node(f: &File, _sb: &Super, h: &Header, at: &[String], visited: &[Visited], target: u64, out: &mut String) -> R<()> {
    let d = dataset(f, h);
    let attrs = attributes(f, h);
    let (d, attrs) = (d?, attrs?);
    let enum_names = d.z.enum_names.clone();
    let aj = attributes_json(f, &attrs, enum_names.as_deref().map(|e| ("hdf5_enum", e)));
    let dims = dimension_names(f, &attrs, at, visited, d.shape.len());
    let (aj, dims) = (aj?, dims?);
    out.push_str(&d.zarr_json(target, &aj, dims.as_deref())?);
    Ok(())
}

fn chunk(f: &mut File, path: &str, coords: &[u64], target: u64) -> R<String> {
    let sb = open(f)?;
    let f = &*f;
    let name = hdf5_path(path);
    let mut visited = Vec::new();
    let found = context(resolve(f, &sb, None, path, &mut visited), &name)?;
    let h = match found {
        Some((h, _)) if matches!(kind(&h), Kind::Array) => h,
        _ => return Err(E::Fail(Code::NotFound, format!("{name}: no dataset there"))),
    };
    context(chunk_of(f, &sb, &h, coords, target), &name)
}

fn chunk_of(f: &File, sb: &Super, h: &Header, coords: &[u64], target: u64) -> R<String> {
    let d = dataset(f, h)?;
    d.codecs()?;
    let chunk = d.chunk_shape(target);
    let grid = d.grid(&chunk);
    if coords.len() != chunk.len() || coords.iter().zip(&grid).any(|(&c, &g)| c >= g) {
        return Err(E::Fail(Code::NotFound, format!("chunk {coords:?} is outside the chunk grid {grid:?}")));
    }
    let full = d.chunk_bytes(&chunk);
    let mut out = String::from("{\"chunk\":");
    let range = |out: &mut String, addr: u64, len: u64| -> R<()> {
        let a = f.abs(addr)?;
        if let Some(s) = f.size {
            if a.checked_add(len).is_none_or(|e| e > s) {
                return corrupt(format!("chunk bytes {a}+{len} are past the end of the file"));
            }
        }
        out.push('[');
        json::num(out, a);
        out.push(',');
        json::num(out, len);
        out.push(']');
        Ok(())
    };
    match &d.layout {
        Layout::Compact { at, len } => {
            if *len != full {
                return corrupt(format!("compact data of {len} bytes for {full}"));
            }
            out.push('[');
            json::num(&mut out, at);
            out.push(',');
            json::num(&mut out, len);
            out.push(']');
        }
        Layout::Contiguous { addr, size } => {
            let total = d.shape.iter().fold(d.elem(), |a, &x| a.saturating_mul(x));
            if *addr == UNDEF {
                out.push_str("null");
            } else {
                if *size != UNDEF && *size < total {
                    return corrupt(format!("contiguous storage of {size} bytes for {total}"));
                }
                let start = coords.first().map_or(0, |&c| c.saturating_mul(full));
                let len = full.min(total.saturating_sub(start));
                let Some(a) = addr.checked_add(start) else { return corrupt("an address overflows") };
                range(&mut out, a, len)?;
                if len < full {
                    out.push_str(",\"short\":true");
                }
            }
        }
        Layout::Chunked { flags, .. } => {
            let edge = d.shape.iter().zip(&chunk).zip(coords).any(|((&s, &c), &i)| (i + 1).saturating_mul(c) > s);
            let unfiltered_edge = flags & 1 != 0 && !d.filters.is_empty();
            if unfiltered_edge && edge {
                return io::unsupported("partial edge chunks stored unfiltered are not read");
            }
            let l = index::find(f, sb, &d, coords)?;
            match l.hit {
                None => out.push_str("null"),
                Some(loc) => {
                    range(&mut out, loc.addr, loc.size)?;
                    if loc.mask != 0 {
                        out.push_str(",\"wrap\":");
                        let ids = filters::masked(&d.filters.iter().map(|f| f.id).collect::<Vec<_>>(), loc.mask);
                        let ids = ids.ok_or_else(|| E::Fail(Code::Unsupported, format!("chunk {coords:?} skips filters (mask {:#x}) that cannot be re-applied", loc.mask)))?;
                        json::list(&mut out, &ids);
                    }
                }
            }
            let more: Vec<_> = l
                .more
                .iter()
                .filter(|(c, loc)| {
                    let e = d.shape.iter().zip(&chunk).zip(c).any(|((&s, &k), &i)| (i + 1).saturating_mul(k) > s);
                    loc.mask == 0
                        && !(unfiltered_edge && e)
                        && f.base.checked_add(loc.addr).and_then(|a| a.checked_add(loc.size)).is_some_and(|e| f.size.is_none_or(|s| e <= s))
                })
                .collect();
            if !more.is_empty() {
                out.push_str(",\"more\":[");
                for (k, (c, loc)) in more.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    out.push('[');
                    json::list(&mut out, c);
                    out.push(',');
                    json::num(&mut out, f.base + loc.addr);
                    out.push(',');
                    json::num(&mut out, loc.size);
                    out.push(']');
                }
                out.push(']');
            }
        }
    }
    out.push('}');
    let _: Option<&Dataset> = None;
    Ok(out)
}
