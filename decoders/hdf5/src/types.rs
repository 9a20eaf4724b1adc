//! Datatype and dataspace messages; data types as Zarr v3 names them; values as JSON.
use crate::io::{corrupt, le, unsupported, Cur, File, E, R};
use abi::json;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Clone, Debug)]
pub enum Dt {
    Int { size: u32, signed: bool, be: bool },
    Float { size: u32, be: bool },
    /// A floating-point layout other than IEEE's (read as nothing).
    OddFloat { size: u32 },
    /// A fixed-length string: `pad` HDF5's `strpad` (0 NULLTERM, 1 NULLPAD, 2 SPACEPAD), `cset` its
    /// charset (0 ASCII, 1 UTF-8).
    Str { size: u32, pad: u8, cset: u8 },
    VlenStr,
    Vlen { base: Box<Dt> },
    Compound { size: u32, members: Vec<(String, u64, Dt)> },
    Enum { base: Box<Dt>, members: Vec<(String, Vec<u8>)> },
    Array { dims: Vec<u64>, base: Box<Dt> },
    Opaque { size: u32 },
    Reference { size: u32 },
    Complex { size: u32, be: bool },
    Other { class: u8, size: u32 },
}

impl Dt {
    pub fn size(&self) -> u64 {
        match self {
            Dt::Int { size, .. }
            | Dt::Float { size, .. }
            | Dt::OddFloat { size }
            | Dt::Str { size, .. }
            | Dt::Compound { size, .. }
            | Dt::Opaque { size }
            | Dt::Reference { size }
            | Dt::Complex { size, .. }
            | Dt::Other { size, .. } => *size as u64,
            Dt::VlenStr | Dt::Vlen { .. } => 0,
            Dt::Enum { base, .. } => base.size(),
            Dt::Array { dims, base } => dims.iter().fold(base.size(), |a, &d| a.saturating_mul(d)),
        }
    }

    /// h5py's booleans: an enum of a 1-byte integer with FALSE = 0 and TRUE = 1.
    pub fn is_bool(&self) -> bool {
        match self {
            Dt::Enum { base, members } => {
                matches!(**base, Dt::Int { size: 1, .. })
                    && members.len() == 2
                    && members.iter().any(|(n, v)| n == "FALSE" && v == &[0])
                    && members.iter().any(|(n, v)| n == "TRUE" && v == &[1])
            }
            _ => false,
        }
    }
}

/// A datatype message (or the type inside one), `depth` levels deep.
pub fn datatype(f: &File, b: &[u8]) -> R<Dt> {
    let mut c = f.cur(b, "datatype message");
    parse_dt(&mut c, 0)
}

fn parse_dt(c: &mut Cur, depth: u32) -> R<Dt> {
    if depth > 8 {
        return unsupported("datatypes nested more than 8 deep");
    }
    let cv = c.u8()?;
    let (class, version) = (cv & 0x0f, cv >> 4);
    let bits = c.take(3)?;
    let (b0, b1) = (bits[0], bits[1]);
    let size = c.u32()?;
    Ok(match class {
        0 | 4 => {
            let offset = c.u16()?;
            let precision = c.u16()?;
            let be = b0 & 1 != 0;
            if offset != 0 || precision as u32 != size.saturating_mul(8) || !matches!(size, 1 | 2 | 4 | 8) {
                Dt::Other { class, size }
            } else {
                Dt::Int { size, signed: class == 0 && b0 & 0x08 != 0, be }
            }
        }
        1 => float(c, size, b0, b1)?,
        3 => Dt::Str { size, pad: b0 & 0x0f, cset: b0 >> 4 },
        5 => {
            // The tag: NUL-padded to a multiple of 8 bytes.
            let tag = (b0 as usize) | ((b1 as usize) << 8);
            c.skip(tag)?;
            Dt::Opaque { size }
        }
        6 => compound(c, depth, version, size, (b0 as usize) | ((b1 as usize) << 8))?,
        7 => Dt::Reference { size },
        8 => {
            let n = (b0 as usize) | ((b1 as usize) << 8);
            let base = parse_dt(c, depth + 1)?;
            let mut names = Vec::new();
            for _ in 0..n {
                let s = c.rest();
                let end = s.iter().position(|&x| x == 0).ok_or_else(|| fail("an enum member's name"))?;
                names.push(String::from_utf8_lossy(&s[..end]).into_owned());
                c.skip(if version >= 3 { end + 1 } else { (end + 1).div_ceil(8) * 8 })?;
            }
            let bs = base.size() as usize;
            let mut members = Vec::new();
            for name in names {
                members.push((name, c.take(bs)?.to_vec()));
            }
            Dt::Enum { base: Box::new(base), members }
        }
        9 => {
            let base = parse_dt(c, depth + 1)?;
            if b0 & 0x0f == 1 {
                Dt::VlenStr
            } else {
                Dt::Vlen { base: Box::new(base) }
            }
        }
        10 => {
            let rank = c.u8()? as usize;
            if version < 3 {
                c.skip(3)?;
            }
            let mut dims = Vec::new();
            for _ in 0..rank {
                dims.push(c.u32()? as u64);
            }
            if version < 3 {
                c.skip(4 * rank)?;
            }
            let base = parse_dt(c, depth + 1)?;
            Dt::Array { dims, base: Box::new(base) }
        }
        11 => {
            let base = parse_dt(c, depth + 1)?;
            match base {
                Dt::Float { size: s, be } if s * 2 == size && s >= 4 => Dt::Complex { size, be },
                _ => Dt::Other { class, size },
            }
        }
        _ => Dt::Other { class, size },
    })
}

/// A floating-point type's properties (class 1): IEEE 754 binary16/32/64, or another layout.
fn float(c: &mut Cur, size: u32, b0: u8, b1: u8) -> R<Dt> {
    let _offset = c.u16()?;
    let precision = c.u16()?;
    let exp_loc = c.u8()?;
    let exp_size = c.u8()?;
    let man_loc = c.u8()?;
    let man_size = c.u8()?;
    let bias = c.u32()?;
    let be = b0 & 1 != 0;
    let vax = b0 & 0x40 != 0;
    let norm = (b0 >> 4) & 3;
    let sign = b1;
    let ieee = match size {
        2 => (10, 5, 0, 10, 15),
        4 => (23, 8, 0, 23, 127),
        8 => (52, 11, 0, 52, 1023),
        _ => (0, 0, 0, 0, 0),
    };
    Ok(if !vax
        && norm == 2
        && sign as u32 == size * 8 - 1
        && precision as u32 == size * 8
        && (exp_loc, exp_size, man_loc, man_size, bias) == ieee
    {
        Dt::Float { size, be }
    } else {
        Dt::OddFloat { size }
    })
}

/// A compound type's `n` members (class 6), each a name, an offset and a type.
fn compound(c: &mut Cur, depth: u32, version: u8, size: u32, n: usize) -> R<Dt> {
    let mut members = Vec::new();
    for _ in 0..n {
        let name = if version >= 3 {
            let s = c.rest();
            let end = s.iter().position(|&x| x == 0).ok_or_else(|| fail("a compound member's name"))?;
            let name = String::from_utf8_lossy(&s[..end]).into_owned();
            c.skip(end + 1)?;
            name
        } else {
            let s = c.rest();
            let end = s.iter().position(|&x| x == 0).ok_or_else(|| fail("a compound member's name"))?;
            let name = String::from_utf8_lossy(&s[..end]).into_owned();
            c.skip((end + 1).div_ceil(8) * 8)?;
            name
        };
        let offset = match version {
            1 | 2 => c.u32()? as u64,
            _ => c.uv(crate::io::enc_size(size as u64))?,
        };
        let t = if version == 1 {
            let rank = c.u8()? as usize;
            c.skip(3 + 4 + 4)?;
            let mut dims = Vec::new();
            for k in 0..4 {
                let d = c.u32()? as u64;
                if k < rank {
                    dims.push(d);
                }
            }
            let base = parse_dt(c, depth + 1)?;
            if rank > 0 {
                Dt::Array { dims, base: Box::new(base) }
            } else {
                base
            }
        } else {
            parse_dt(c, depth + 1)?
        };
        members.push((name, offset, t));
    }
    Ok(Dt::Compound { size, members })
}

fn fail(what: &str) -> E {
    E::Fail(crate::io::Code::Corrupt, format!("datatype: {what} is not terminated"))
}

/// How the core is to read a dataset's elements: its Zarr `data_type` JSON and byte order.
pub struct ZType {
    pub json: String,
    pub be: bool,
    /// Enum member names, for the attributes.
    pub enum_names: Option<String>,
}

fn int_name(size: u32, signed: bool) -> &'static str {
    match (size, signed) {
        (1, true) => "int8",
        (2, true) => "int16",
        (4, true) => "int32",
        (8, true) => "int64",
        (1, false) => "uint8",
        (2, false) => "uint16",
        (4, false) => "uint32",
        _ => "uint64",
    }
}

/// The simple (non-record) Zarr type of `t`, and whether it is big-endian.
fn simple(t: &Dt) -> R<(String, bool)> {
    let mut s = String::new();
    let be = match t {
        Dt::Int { size, signed, be } => {
            json::str(&mut s, int_name(*size, *signed));
            *be && *size > 1
        }
        Dt::Float { size, be } => {
            json::str(&mut s, ["float16", "float32", "float64"][(*size as usize / 4).min(2)]);
            *be
        }
        Dt::Complex { size, be } => {
            json::str(&mut s, if *size == 8 { "complex64" } else { "complex128" });
            *be
        }
        _ if t.is_bool() => {
            s.push_str("\"bool\"");
            false
        }
        Dt::Enum { base, .. } => return simple(base),
        Dt::Str { size, pad, cset } => {
            // Text in a charset, padded: the core reads it as `fixed_length_string`.
            s.push_str("{\"name\":\"fixed_length_string\",\"configuration\":{\"length_bytes\":");
            json::num(&mut s, size);
            let charset = match cset {
                0 => "ascii",
                1 => "utf-8",
                k => return unsupported(format!("string charset {k}")),
            };
            let padding = match pad {
                0 => "nullterm",
                1 => "nullpad",
                2 => "spacepad",
                k => return unsupported(format!("string padding {k}")),
            };
            s.push_str(&format!(",\"charset\":\"{charset}\",\"padding\":\"{padding}\"}}}}"));
            false
        }
        Dt::Opaque { size } => {
            s.push_str("{\"name\":\"raw_bytes\",\"configuration\":{\"length_bytes\":");
            json::num(&mut s, size);
            s.push_str("}}");
            false
        }
        Dt::Compound { .. } => return complex_of(t).ok_or(()).or_else(|_| unsupported("a nested compound datatype")),
        Dt::VlenStr => return unsupported("variable-length strings as dataset data are not read"),
        Dt::Vlen { .. } => return unsupported("variable-length sequences are not read"),
        Dt::Array { .. } => return unsupported("array datatypes are not read"),
        Dt::Reference { .. } => return unsupported("references as dataset data are not read"),
        Dt::OddFloat { .. } => return unsupported("a floating-point layout other than IEEE 754"),
        Dt::Other { class, .. } => return unsupported(format!("datatype class {class} is not read")),
    };
    Ok((s, be))
}

/// h5py's complex numbers: a compound of two floats of one size named r and i.
fn complex_of(t: &Dt) -> Option<(String, bool)> {
    let Dt::Compound { size, members } = t else { return None };
    match members.as_slice() {
        [(r, 0, Dt::Float { size: a, be }), (i, off, Dt::Float { size: b, be: be2 })]
            if r == "r" && i == "i" && a == b && *off == *a as u64 && *size == 2 * a && be == be2 && *a >= 4 =>
        {
            Some((String::from(if *a == 4 { "\"complex64\"" } else { "\"complex128\"" }), *be))
        }
        _ => None,
    }
}

pub fn ztype(t: &Dt) -> R<ZType> {
    let enum_names = match t {
        Dt::Enum { base, members } if !t.is_bool() => {
            let mut s = String::from("{");
            for (k, (n, v)) in members.iter().enumerate() {
                if k > 0 {
                    s.push(',');
                }
                json::str(&mut s, n);
                s.push(':');
                scalar(&mut s, base, v);
            }
            s.push('}');
            Some(s)
        }
        _ => None,
    };
    if let Dt::Compound { size, members } = t {
        if let Some((json, be)) = complex_of(t) {
            return Ok(ZType { json, be, enum_names });
        }
        // Zarr's structured type: fields packed in order, little-endian.
        let mut sorted: Vec<&(String, u64, Dt)> = members.iter().collect();
        sorted.sort_by_key(|m| m.1);
        let mut s = String::from("{\"name\":\"structured\",\"configuration\":{\"fields\":[");
        let mut at = 0u64;
        for (k, (name, off, mt)) in sorted.iter().enumerate() {
            if *off != at {
                return unsupported(format!("compound member \"{name}\" is not packed (padding before it)"));
            }
            let (js, be) = simple(mt)?;
            if be {
                return unsupported(format!("compound member \"{name}\" is big-endian"));
            }
            if k > 0 {
                s.push(',');
            }
            s.push('[');
            json::str(&mut s, name);
            s.push(',');
            s.push_str(&js);
            s.push(']');
            at = at.saturating_add(mt.size());
        }
        if at != *size as u64 || members.is_empty() {
            return unsupported("a compound with padding at its end");
        }
        s.push_str("]}}");
        return Ok(ZType { json: s, be: false, enum_names });
    }
    let (json, be) = simple(t)?;
    Ok(ZType { json, be, enum_names })
}

/// A dataset's fill value as Zarr v3 writes it for `t` (the element's bytes as stored).
pub fn fill_json(out: &mut String, t: &Dt, bytes: Option<&[u8]>) {
    let size = t.size() as usize;
    let zero = alloc::vec![0u8; size];
    let b = match bytes {
        Some(b) if b.len() == size => b,
        _ => &zero,
    };
    match t {
        _ if t.is_bool() => out.push_str(if b.iter().any(|&x| x != 0) { "true" } else { "false" }),
        Dt::Int { .. } | Dt::Enum { .. } => scalar(out, t, b),
        Dt::Float { size, be } => {
            let bits = if *be { be_u64(b) } else { le(b) };
            let canonical = match size {
                2 => 0x7e00,
                4 => 0x7fc0_0000,
                _ => 0x7ff8_0000_0000_0000,
            };
            let nan = match size {
                2 => bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0,
                4 => f32::from_bits(bits as u32).is_nan(),
                _ => f64::from_bits(bits).is_nan(),
            };
            if nan && bits != canonical {
                out.push_str(&format!("\"0x{:0w$x}\"", bits, w = 2 * *size as usize));
            } else {
                scalar(out, t, b)
            }
        }
        Dt::Complex { size, .. } => {
            out.push('[');
            scalar(out, t, b);
            let _ = size;
            out.push(']');
        }
        Dt::Compound { .. } if complex_of(t).is_some() => {
            let Dt::Compound { members, .. } = t else { return };
            let h = size / 2;
            out.push('[');
            scalar(out, &members[0].2, &b[..h]);
            out.push(',');
            scalar(out, &members[1].2, &b[h..]);
            out.push(']');
        }
        Dt::Str { .. } => {
            let end = b.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1);
            json::base64(out, &b[..end]);
        }
        _ => json::base64(out, b),
    }
}

fn be_u64(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// One element of a number-like type as JSON.
pub fn scalar(out: &mut String, t: &Dt, b: &[u8]) {
    match t {
        Dt::Int { size, signed, be } => {
            let v = if *be { be_u64(b) } else { le(b) };
            if *signed {
                let shift = 64 - 8 * (*size).min(8);
                json::num(out, ((v << shift) as i64) >> shift);
            } else {
                json::num(out, v);
            }
        }
        Dt::Float { size, be } => {
            let v = if *be { be_u64(b) } else { le(b) };
            match size {
                2 => json::f64(out, f16(v as u16)),
                4 => json::f32(out, f32::from_bits(v as u32)),
                _ => json::f64(out, f64::from_bits(v)),
            }
        }
        Dt::Complex { size, be } => {
            let h = *size as usize / 2;
            let part = Dt::Float { size: h as u32, be: *be };
            scalar(out, &part, b.get(..h).unwrap_or(&[]));
            out.push(',');
            scalar(out, &part, b.get(h..).unwrap_or(&[]));
        }
        _ if t.is_bool() => out.push_str(if b.iter().any(|&x| x != 0) { "true" } else { "false" }),
        Dt::Enum { base, .. } => scalar(out, base, b),
        _ => out.push_str("null"),
    }
}

pub fn f16(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * (2f64).powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * (2f64).powi(e - 15),
    }
}

// ------------------------------------------------------------------------------------------------
// dataspaces
// ------------------------------------------------------------------------------------------------

pub const UNLIMITED: u64 = u64::MAX;

#[derive(Clone, Debug)]
pub struct Space {
    /// `None`: the null dataspace (no elements).
    pub dims: Option<Vec<u64>>,
    pub max: Vec<u64>,
}

pub fn dataspace(f: &File, b: &[u8]) -> R<Space> {
    let mut c = f.cur(b, "dataspace message");
    let version = c.u8()?;
    let rank = c.u8()? as usize;
    let flags = c.u8()?;
    let kind = match version {
        1 => {
            c.skip(5)?;
            if rank == 0 {
                0
            } else {
                1
            }
        }
        2 => c.u8()?,
        v => return corrupt(format!("dataspace version {v}")),
    };
    if rank > 32 {
        return unsupported(format!("a dataspace of rank {rank}"));
    }
    let l = f.l as usize;
    let mut dims = Vec::with_capacity(rank);
    for _ in 0..rank {
        dims.push(c.uv(l)?);
    }
    let mut max = dims.clone();
    if flags & 1 != 0 {
        for m in max.iter_mut() {
            let v = c.uv(l)?;
            *m = if l < 8 && v == (1u64 << (8 * l)) - 1 { UNLIMITED } else { v };
        }
    }
    Ok(match kind {
        2 => Space { dims: None, max: Vec::new() },
        0 => Space { dims: Some(Vec::new()), max: Vec::new() },
        _ => Space { dims: Some(dims), max },
    })
}

// ------------------------------------------------------------------------------------------------
// attribute values as JSON
// ------------------------------------------------------------------------------------------------

/// Most elements an attribute is rendered with (else it is null).
const MAX_ELEMENTS: u64 = 1 << 20;

/// An attribute's value as JSON: scalars as values, arrays as nested lists, strings as strings;
/// `null` for what JSON cannot say. Variable-length strings are read from the global heap.
pub fn attr_value(f: &File, out: &mut String, t: &Dt, space: &Space, data: &[u8]) -> R<()> {
    let Some(dims) = &space.dims else {
        out.push_str("null");
        return Ok(());
    };
    let n = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let es = elem_size(f, t);
    let total = n.and_then(|n| n.checked_mul(es));
    match (n, total) {
        (Some(n), Some(total)) if n <= MAX_ELEMENTS && total <= data.len() as u64 => {
            let mut k = 0usize;
            nested(f, out, t, dims, data, es as usize, &mut k)
        }
        _ => {
            out.push_str("null");
            Ok(())
        }
    }
}

fn elem_size(f: &File, t: &Dt) -> u64 {
    match t {
        Dt::VlenStr | Dt::Vlen { .. } => 8 + f.o as u64,
        _ => t.size(),
    }
}

fn nested(f: &File, out: &mut String, t: &Dt, dims: &[u64], data: &[u8], es: usize, k: &mut usize) -> R<()> {
    match dims.split_first() {
        None => {
            let at = *k * es;
            *k += 1;
            element(f, out, t, data.get(at..at + es).unwrap_or(&[]), 0)
        }
        Some((&d, rest)) => {
            out.push('[');
            for i in 0..d {
                if i > 0 {
                    out.push(',');
                }
                nested(f, out, t, rest, data, es, k)?;
            }
            out.push(']');
            Ok(())
        }
    }
}

fn element(f: &File, out: &mut String, t: &Dt, b: &[u8], depth: u32) -> R<()> {
    match t {
        Dt::Str { pad, .. } => {
            let s = match pad {
                0 => &b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())],
                2 => &b[..b.iter().rposition(|&x| x != b' ').map_or(0, |p| p + 1)],
                _ => &b[..b.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1)],
            };
            json::bytes_str(out, s);
        }
        Dt::VlenStr => {
            let mut c = f.cur(b, "variable-length string");
            let len = c.u32()? as usize;
            let coll = c.addr()?;
            let idx = c.u32()?;
            if len == 0 || coll == crate::io::UNDEF || coll == 0 {
                out.push_str(if coll == crate::io::UNDEF || coll == 0 { "null" } else { "\"\"" });
                return Ok(());
            }
            let obj = crate::heap::global(f, coll, idx)?;
            let s = obj.get(..len).unwrap_or(obj);
            let s = &s[..s.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1)];
            json::bytes_str(out, s);
        }
        Dt::Compound { members, .. } if depth < 4 => {
            if complex_of(t).is_some() {
                out.push('[');
                scalar(out, &members[0].2, b.get(..b.len() / 2).unwrap_or(&[]));
                out.push(',');
                scalar(out, &members[1].2, b.get(b.len() / 2..).unwrap_or(&[]));
                out.push(']');
                return Ok(());
            }
            out.push('{');
            for (k, (name, off, mt)) in members.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                json::str(out, name);
                out.push(':');
                let (s, e) = (*off as usize, off.saturating_add(mt.size()) as usize);
                match b.get(s..e) {
                    Some(mb) => element(f, out, mt, mb, depth + 1)?,
                    None => out.push_str("null"),
                }
            }
            out.push('}');
        }
        Dt::Array { dims, base } if depth < 4 => {
            let es = base.size() as usize;
            let mut k = 0usize;
            if dims.iter().try_fold(es as u64, |a, &d| a.checked_mul(d)) != Some(b.len() as u64) {
                out.push_str("null");
                return Ok(());
            }
            array_elems(f, out, base, dims, b, es, &mut k, depth + 1)?;
        }
        Dt::Complex { .. } => {
            out.push('[');
            scalar(out, t, b);
            out.push(']');
        }
        _ => scalar(out, t, b),
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn array_elems(f: &File, out: &mut String, t: &Dt, dims: &[u64], b: &[u8], es: usize, k: &mut usize, depth: u32) -> R<()> {
    match dims.split_first() {
        None => {
            let at = *k * es;
            *k += 1;
            element(f, out, t, b.get(at..at + es).unwrap_or(&[]), depth)
        }
        Some((&d, rest)) => {
            out.push('[');
            for i in 0..d {
                if i > 0 {
                    out.push(',');
                }
                array_elems(f, out, t, rest, b, es, k, depth)?;
            }
            out.push(']');
            Ok(())
        }
    }
}

/// An attribute message: name, datatype, dataspace, and its data.
pub struct Attr<'f> {
    pub name: String,
    pub dt: Dt,
    pub space: Space,
    pub data: &'f [u8],
}

pub fn attribute<'f>(f: &'f File, b: &'f [u8]) -> R<Attr<'f>> {
    let mut c = f.cur(b, "attribute message");
    let version = c.u8()?;
    let flags = c.u8()?;
    let name_size = c.u16()? as usize;
    let dt_size = c.u16()? as usize;
    let ds_size = c.u16()? as usize;
    if version == 3 {
        c.u8()?;
    }
    let pad = |n: usize| if version == 1 { n.div_ceil(8) * 8 } else { n };
    let name = c.take(pad(name_size))?;
    let name = &name[..name_size.min(name.len())];
    let name = &name[..name.iter().position(|&x| x == 0).unwrap_or(name.len())];
    let dtb = c.take(pad(dt_size))?;
    let dsb = c.take(pad(ds_size))?;
    if flags & 3 != 0 || !(1..=3).contains(&version) {
        return unsupported("a shared datatype or dataspace in an attribute");
    }
    let dt = datatype(f, dtb)?;
    let space = dataspace(f, dsb)?;
    Ok(Attr { name: String::from_utf8_lossy(name).into_owned(), dt, space, data: c.rest() })
}
