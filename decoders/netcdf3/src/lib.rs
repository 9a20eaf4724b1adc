//! shardfetch's NetCDF-3 decoder module: the header of a classic, 64-bit offset or CDF-5 file,
//! read from the file's first bytes, answered as Zarr v3 documents and chunk locations; the core
//! drives it over HTTP exactly as it drives the HDF5 module (`decoders/hdf5`, same protocol).
//!
//! `decode(input, _)`: `input` is a request and the file's bytes the host holds so far:
//! `u32 LE n`, `n` bytes of JSON, then windows `u64 LE offset, u64 LE len, len bytes`. Answers:
//!
//! - `{"op":"node","path":"","size":N|null}` → `{"node":{"zarr_json":{…},"children":[…]}}`: the
//!   root group (global attributes; one array per variable); `"path":"temp"` → variable `temp`
//!   as an array, or `{"node":null}`;
//! - `{"op":"chunk","path":…,"coords":[i,…],"size":N}` → `{"chunk":[offset,len]}` with
//!   `"more":[[[i,…],offset,len],…]` (the variable's other chunks near it);
//! - any op: `{"need":[[offset,len]]}` (the header goes on past the bytes held), or
//!   `{"error":{"code":…,"message":…}}`.
//!
//! A fixed-size variable is one contiguous block: chunks of whole rows (about
//! `contiguous_chunk_bytes`, 2 MiB, as the HDF5 module cuts contiguous datasets). A record
//! variable's chunk is one record, at `begin + i × recsize`.
#![forbid(unsafe_code)]
extern crate alloc;

mod header;

use abi::json::{self, Json};
use abi::Failure;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use header::{corrupt, parse, type_size, Attr, Header, Var, E, R};

pub use header::is_netcdf3;

abi::export_decoder!(decode);

/// Bytes a fixed-size variable's chunk of whole rows aims at (the HDF5 module's for contiguous
/// datasets).
pub const CONTIG_TARGET: u64 = 2 << 20;
/// The longest header read.
const MAX_HEADER: u64 = 8 << 20;
/// Chunk locations an answer brings at most besides the one asked for.
const MORE: u64 = 4096;

pub fn decode(input: &[u8], _args: &[f64]) -> Result<Vec<u8>, Failure> {
    let (req, windows) = abi::request(input)?;
    let op = req.get("op").and_then(Json::as_str).ok_or_else(|| Failure::corrupt("request: no op"))?;
    let size = match req.get("size") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| Failure::corrupt("request: size"))?),
    };
    let path = match req.get("path") {
        None | Some(Json::Null) => "",
        Some(Json::Str(s)) => s.trim_matches('/'),
        _ => return Err(Failure::corrupt("request: path must be a string")),
    };
    let target = req.get("contiguous_chunk_bytes").and_then(Json::as_u64).unwrap_or(CONTIG_TARGET).max(1);
    let coords: Option<Vec<u64>> = match (op, req.get("coords")) {
        ("node", _) => None,
        ("chunk", Some(Json::Arr(a))) => Some(a.iter().map(|v| v.as_u64().ok_or_else(|| Failure::corrupt("request: coords"))).collect::<Result<_, _>>()?),
        ("chunk", _) => return Err(Failure::corrupt("request: coords must be a list")),
        (other, _) => return Err(Failure::corrupt(format!("request: unknown op \"{other}\""))),
    };
    let prefix = prefix(&windows);
    let answer = parse(&prefix).and_then(|h| match &coords {
        None => node(&h, path, size, target),
        Some(k) => chunk(&h, path, k, size, target),
    });
    let out = match answer {
        Ok(s) => s,
        Err(E::Need(end)) => need(prefix.len() as u64, end, size),
        Err(E::Fail(code, msg)) => error(code, &msg),
    };
    Ok(out.into_bytes())
}

/// The bytes held from offset 0 on without a gap (the windows joined, in any order).
fn prefix(windows: &[(u64, &[u8])]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    // (A window that adds bytes each round; no sort: a few windows, and a smaller module.)
    while let Some(b) = abi::tails(windows.iter().copied(), out.len() as u64).find(|rest| !rest.is_empty()) {
        out.extend_from_slice(b);
    }
    out
}

/// The answer to a header that goes on to `end` past the `held` bytes: the next bytes (at least
/// as many again as held: a long header in a few rounds), or why they cannot be read.
fn need(held: u64, end: u64, size: Option<u64>) -> String {
    if size.is_some_and(|s| end > s) {
        return error("CorruptShard", &format!("the header runs past the end of the file ({} bytes)", size.unwrap_or(0)));
    }
    if end > MAX_HEADER {
        return error("TooLarge", &format!("a header of more than {MAX_HEADER} bytes"));
    }
    let mut len = (end - held.min(end)).max(held).max(1);
    if let Some(s) = size {
        len = len.min(s.saturating_sub(held)).max(end.saturating_sub(held));
    }
    format!("{{\"need\":[[{held},{len}]]}}")
}

fn error(code: &str, msg: &str) -> String {
    let mut out = String::from("{\"error\":{\"code\":");
    json::str(&mut out, code);
    out.push_str(",\"message\":");
    json::str(&mut out, &format!("not a readable NetCDF-3 file: {msg}"));
    out.push_str("}}");
    out
}

fn find<'h, 'a>(h: &'h Header<'a>, path: &str) -> Option<&'h Var<'a>> {
    h.vars.iter().find(|v| v.name == path)
}

fn node(h: &Header, path: &str, size: Option<u64>, target: u64) -> R<String> {
    let mut out = String::from("{\"node\":{\"zarr_json\":");
    if path.is_empty() {
        out.push_str("{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":");
        attributes(&mut out, &h.attrs);
        out.push_str("},\"children\":[");
        // (In the header's order, as ncdump lists them.)
        for (k, n) in h.vars.iter().map(|v| v.name.as_str()).enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push('[');
            json::str(&mut out, n);
            out.push_str(",true]");
        }
        out.push(']');
    } else {
        let Some(v) = find(h, path) else { return Ok(String::from("{\"node\":null}")) };
        array(&mut out, h, v, h.records(size)?, target).map_err(|e| context(e, &v.name))?;
    }
    out.push_str("}}");
    Ok(out)
}

fn context(e: E, name: &str) -> E {
    match e {
        E::Fail(c, m) => E::Fail(c, format!("/{name}: {m}")),
        need => need,
    }
}

/// The chunk shape shown: one record of a record variable; whole rows of about `target` bytes
/// of a fixed one.
fn chunk_shape(h: &Header, v: &Var, shape: &[u64], target: u64) -> Vec<u64> {
    let Some((&first, rest)) = shape.split_first() else { return Vec::new() };
    let row = rest.iter().fold(type_size(v.ty).unwrap_or(1), |a, &d| a.saturating_mul(d.max(1)));
    let k = if h.is_record(v) { 1 } else { (target / row.max(1)).clamp(1, first.max(1)) };
    let mut s = alloc::vec![k];
    s.extend(rest.iter().map(|&d| d.max(1)));
    s
}

fn array(out: &mut String, h: &Header, v: &Var, records: u64, target: u64) -> R<()> {
    h.var_bytes(v)?;
    let shape = h.shape(v, records);
    let chunk = chunk_shape(h, v, &shape, target);
    out.push_str("{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":");
    json::list(out, &shape);
    out.push_str(",\"data_type\":");
    out.push_str(match v.ty {
        1 => "\"int8\"",
        2 => "{\"name\":\"fixed_length_string\",\"configuration\":{\"length_bytes\":1,\"charset\":\"ascii\",\"padding\":\"nullterm\"}}",
        3 => "\"int16\"",
        4 => "\"int32\"",
        5 => "\"float32\"",
        6 => "\"float64\"",
        7 => "\"uint8\"",
        8 => "\"uint16\"",
        9 => "\"uint32\"",
        10 => "\"int64\"",
        _ => "\"uint64\"",
    });
    let first = shape.first().copied().unwrap_or(0);
    out.push_str(",\"chunk_grid\":");
    match chunk.first() {
        // Whole rows whose last chunk is shorter: a rectilinear grid (the host then reads
        // exactly the rows there are), as the HDF5 module shows contiguous datasets.
        Some(&k) if first % k != 0 => {
            out.push_str("{\"name\":\"rectilinear\",\"configuration\":{\"kind\":\"inline\",\"chunk_shapes\":[");
            out.push_str(&format!("[[{k},{}],{}]", first / k, first % k));
            for d in &chunk[1..] {
                out.push_str(&format!(",{d}"));
            }
            out.push_str("]}}");
        }
        _ => {
            out.push_str("{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":");
            json::list(out, &chunk);
            out.push_str("}}");
        }
    }
    out.push_str(",\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}}");
    out.push_str(",\"fill_value\":");
    fill(out, v);
    out.push_str(",\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":");
    out.push_str(if type_size(v.ty).unwrap_or(1) > 1 { "\"big\"}}]" } else { "\"little\"}}]" });
    if !v.dims.is_empty() {
        out.push_str(",\"dimension_names\":[");
        for (k, &d) in v.dims.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            json::str(out, &h.dims[d].name);
        }
        out.push(']');
    }
    out.push_str(",\"attributes\":");
    attributes(out, &v.attrs);
    out.push('}');
    Ok(())
}

/// The variable's `_FillValue` (of its own type), else the format's default fill of its type.
fn fill(out: &mut String, v: &Var) {
    let es = type_size(v.ty).unwrap_or(1) as usize;
    let own = v.attrs.iter().find(|a| a.name == "_FillValue" && a.ty == v.ty && a.n > 0).and_then(|a| a.data.get(..es));
    let default: &[u8] = match v.ty {
        1 => &[0x81],
        2 => &[0],
        3 => &[0x80, 0x01],
        4 => &[0x80, 0, 0, 0x01],
        5 => &[0x7c, 0xf0, 0, 0],
        6 => &[0x47, 0x9e, 0, 0, 0, 0, 0, 0],
        7 => &[0xff],
        8 => &[0xff, 0xff],
        9 => &[0xff, 0xff, 0xff, 0xff],
        10 => &[0x80, 0, 0, 0, 0, 0, 0, 0x02],
        _ => &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe],
    };
    let b = own.unwrap_or(default);
    if v.ty == 2 {
        json::base64(out, if b == [0] { &[] } else { b });
    } else {
        value(out, v.ty, b);
    }
}

/// One big-endian value of type `ty` (not char) as JSON.
fn value(out: &mut String, ty: u32, b: &[u8]) {
    let u = b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x));
    match ty {
        1 => json::num(out, u as u8 as i8),
        3 => json::num(out, u as u16 as i16),
        4 => json::num(out, u as u32 as i32),
        // (As the f64 it is: exact, as Python's float() of it.)
        5 => json::f64(out, f64::from(f32::from_bits(u as u32))),
        6 => json::f64(out, f64::from_bits(u)),
        10 => json::num(out, u as i64),
        _ => json::num(out, u),
    }
}

/// Attributes as a JSON object: text for char, else a list, even of one (as the HDF5 module
/// shows NetCDF-4's).
fn attributes(out: &mut String, attrs: &[Attr]) {
    out.push('{');
    for (k, a) in attrs.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        json::str(out, &a.name);
        out.push(':');
        let es = type_size(a.ty).unwrap_or(1) as usize;
        if a.ty == 2 {
            let end = a.data.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1);
            json::bytes_str(out, &a.data[..end]);
        } else {
            out.push('[');
            for (i, b) in a.data.chunks_exact(es).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                value(out, a.ty, b);
            }
            out.push(']');
        }
    }
    out.push('}');
}

fn chunk(h: &Header, path: &str, coords: &[u64], size: Option<u64>, target: u64) -> R<String> {
    let Some(v) = find(h, path) else { return Err(E::Fail("NotFound", format!("/{path}: no variable there"))) };
    chunk_of(h, v, coords, size, target).map_err(|e| context(e, &v.name))
}

fn chunk_of(h: &Header, v: &Var, coords: &[u64], size: Option<u64>, target: u64) -> R<String> {
    let records = h.records(size)?;
    let shape = h.shape(v, records);
    let chunk = chunk_shape(h, v, &shape, target);
    let grid: Vec<u64> = shape.iter().zip(&chunk).map(|(&s, &c)| s.div_ceil(c.max(1))).collect();
    if coords.len() != chunk.len() || coords.iter().zip(&grid).any(|(&c, &g)| c >= g) {
        return Err(E::Fail("NotFound", format!("chunk {coords:?} is outside the chunk grid {grid:?}")));
    }
    let bytes = h.var_bytes(v)?;
    let row = chunk.iter().skip(1).fold(type_size(v.ty).unwrap_or(1), |a, &d| a.saturating_mul(d));
    let k = chunk.first().copied().unwrap_or(1);
    let recsize = if h.is_record(v) { h.recsize()? } else { 0 };
    // Chunk `i` along the first axis: (offset, length).
    let at = |i: u64| -> Option<(u64, u64)> {
        if h.is_record(v) {
            Some((v.begin.checked_add(i.checked_mul(recsize)?)?, bytes))
        } else {
            let start = i.checked_mul(k)?.checked_mul(row)?;
            Some((v.begin.checked_add(start)?, (k.saturating_mul(row)).min(bytes.saturating_sub(start))))
        }
    };
    let inside = |(o, n): (u64, u64)| o.checked_add(n).is_some_and(|e| size.is_none_or(|s| e <= s));
    let i = coords.first().copied().unwrap_or(0);
    let Some(this) = at(i) else { return corrupt("a chunk's offset overflows") };
    if !inside(this) {
        return corrupt(format!("chunk bytes {}+{} are past the end of the file", this.0, this.1));
    }
    let mut out = format!("{{\"chunk\":[{},{}]", this.0, this.1);
    let n = grid.first().copied().unwrap_or(1);
    let (lo, hi) = (i.saturating_sub(MORE / 2), i.saturating_add(MORE / 2).min(n));
    let mut more = String::new();
    for j in (lo..hi).filter(|&j| j != i) {
        let Some(r) = at(j).filter(|&r| inside(r)) else { continue };
        more.push_str(if more.is_empty() { "[[[" } else { ",[[" });
        json::num(&mut more, j);
        for _ in 1..coords.len() {
            more.push_str(",0");
        }
        more.push_str(&format!("],{},{}]", r.0, r.1));
    }
    if !more.is_empty() {
        out.push_str(",\"more\":");
        out.push_str(&more);
        out.push(']');
    }
    out.push('}');
    Ok(out)
}
