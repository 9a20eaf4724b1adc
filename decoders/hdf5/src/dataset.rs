//! Datasets: layout, filters, fill value; their Zarr v3 array document.
use crate::io::{corrupt, too_large, unsupported, Code, File, E, R, UNDEF};
use abi::json;
use crate::object::{unshare, Header, DATASPACE, DATATYPE, EXTERNAL, FILL, FILL_OLD, FILTERS, LAYOUT};
use crate::types::{datatype, dataspace, fill_json, ztype, Dt, Space, ZType, UNLIMITED};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Debug)]
pub enum Index {
    BtreeV1 { addr: u64 },
    Single { addr: u64, filtered: Option<(u64, u32)> },
    Implicit { addr: u64 },
    Fixed { addr: u64 },
    Extensible { addr: u64 },
    BtreeV2 { addr: u64 },
}

#[derive(Debug)]
pub enum Layout {
    Compact { at: u64, len: u64 },
    Contiguous { addr: u64, size: u64 },
    Chunked { flags: u8, dims: Vec<u64>, index: Index },
}

pub struct Filter {
    pub id: u16,
    pub name: String,
    pub cd: Vec<u32>,
}

pub struct Dataset<'f> {
    pub shape: Vec<u64>,
    pub max: Vec<u64>,
    pub dt: Dt,
    pub z: ZType,
    pub fill: Option<&'f [u8]>,
    pub layout: Layout,
    pub filters: Vec<Filter>,
}

/// Largest dimension (2^53: exact in JSON readers with doubles) and total bytes.
const MAX_DIM: u64 = 1 << 53;

pub fn dataset<'f>(f: &'f File, h: &Header<'f>) -> R<Dataset<'f>> {
    let Some(ds) = h.find(DATASPACE) else { return corrupt("a dataset without a dataspace") };
    let Some(dt) = h.find(DATATYPE) else { return corrupt("a dataset without a datatype") };
    let Some(lm) = h.find(LAYOUT) else { return corrupt("a dataset without a layout") };
    if h.find(EXTERNAL).is_some() {
        return unsupported("raw data in external files is not read");
    }
    let space = dataspace(f, unshare(f, ds)?.data)?;
    let dt = datatype(f, unshare(f, dt)?.data)?;
    let Space { dims, max } = space;
    let Some(shape) = dims else { return unsupported("a dataset with a null dataspace") };
    if shape.iter().any(|&d| d > MAX_DIM) {
        return too_large(format!("a dimension of {} elements", shape.iter().max().unwrap_or(&0)));
    }
    let z = ztype(&dt)?;
    let es = dt.size();
    if es == 0 {
        return corrupt("a datatype of 0 bytes");
    }
    let total = shape.iter().try_fold(es, |a, &d| a.checked_mul(d));
    if total.is_none_or(|t| t > 1 << 62) {
        return too_large("the dataset's size overflows");
    }
    let mut filters = Vec::new();
    if let Some(m) = h.find(FILTERS) {
        filters = pipeline(f, unshare(f, m)?.data)?;
    }
    let fill = match h.find(FILL) {
        Some(m) => fill_new(f, unshare(f, m)?.data)?,
        None => match h.find(FILL_OLD) {
            Some(m) => {
                let mut c = f.cur(m.data, "fill value message");
                let n = c.u32()? as usize;
                Some(c.take(n)?)
            }
            None => None,
        },
    };
    let layout = layout(f, lm.data, lm.at, shape.len(), es)?;
    Ok(Dataset { shape, max, dt, z, fill: fill.filter(|b| !b.is_empty()), layout, filters })
}

fn fill_new<'f>(f: &File, b: &'f [u8]) -> R<Option<&'f [u8]>> {
    let mut c = f.cur(b, "fill value message");
    let version = c.u8()?;
    let defined = match version {
        1 | 2 => {
            c.skip(2)?;
            let d = c.u8()?;
            version == 1 || d != 0
        }
        3 => c.u8()? & 0x20 != 0,
        v => return corrupt(format!("fill value message version {v}")),
    };
    if !defined || c.left() < 4 {
        return Ok(None);
    }
    let n = c.u32()? as usize;
    Ok(Some(c.take(n)?))
}

fn pipeline(f: &File, b: &[u8]) -> R<Vec<Filter>> {
    let mut c = f.cur(b, "filter pipeline message");
    let version = c.u8()?;
    let n = c.u8()?;
    if version == 1 {
        c.skip(6)?;
    } else if version != 2 {
        return corrupt(format!("filter pipeline version {version}"));
    }
    let mut out = Vec::new();
    for _ in 0..n {
        let id = c.u16()?;
        let name_len = if version == 1 || id >= 256 { c.u16()? as usize } else { 0 };
        let _flags = c.u16()?;
        let ncd = c.u16()? as usize;
        let name = c.take(if version == 1 { name_len.div_ceil(8) * 8 } else { name_len })?;
        let name = &name[..name.iter().position(|&x| x == 0).unwrap_or(name.len())];
        let mut cd = Vec::with_capacity(ncd.min(256));
        for _ in 0..ncd {
            cd.push(c.u32()?);
        }
        if version == 1 && ncd % 2 == 1 {
            c.skip(4)?;
        }
        out.push(Filter { id, name: String::from_utf8_lossy(name).into_owned(), cd });
    }
    Ok(out)
}

fn layout(f: &File, b: &[u8], at: u64, rank: usize, es: u64) -> R<Layout> {
    let mut c = f.cur(b, "layout message");
    let version = c.u8()?;
    let chunk_dims = |dims: Vec<u64>| -> R<Vec<u64>> {
        // The chunk's dimensions, then the element size.
        if dims.len() != rank + 1 || dims.iter().any(|&d| d == 0) {
            return corrupt(format!("a chunk of {} dimensions for a dataspace of {rank}", dims.len().saturating_sub(1)));
        }
        Ok(dims[..rank].to_vec())
    };
    match version {
        1 | 2 => {
            let nd = c.u8()? as usize;
            let class = c.u8()?;
            c.skip(5)?;
            let addr = if class != 0 { c.addr()? } else { UNDEF };
            let mut dims = Vec::new();
            for _ in 0..nd {
                dims.push(c.u32()? as u64);
            }
            match class {
                0 => {
                    let n = c.u32()? as u64;
                    let pos = c.p as u64;
                    c.skip(n as usize)?;
                    Ok(Layout::Compact { at: at + pos, len: n })
                }
                1 => Ok(Layout::Contiguous { addr, size: UNDEF }),
                2 => Ok(Layout::Chunked { flags: 0, dims: chunk_dims(dims)?, index: Index::BtreeV1 { addr } }),
                k => corrupt(format!("layout class {k}")),
            }
        }
        3..=5 => {
            let class = c.u8()?;
            match class {
                0 => {
                    let n = c.u16()? as u64;
                    let pos = c.p as u64;
                    c.skip(n as usize)?;
                    Ok(Layout::Compact { at: at + pos, len: n })
                }
                1 => {
                    let addr = c.addr()?;
                    let size = c.len()?;
                    Ok(Layout::Contiguous { addr, size })
                }
                2 if version == 3 => {
                    let nd = c.u8()? as usize;
                    let addr = c.addr()?;
                    let mut dims = Vec::new();
                    for _ in 0..nd {
                        dims.push(c.u32()? as u64);
                    }
                    Ok(Layout::Chunked { flags: 0, dims: chunk_dims(dims)?, index: Index::BtreeV1 { addr } })
                }
                2 => {
                    let flags = c.u8()?;
                    let nd = c.u8()? as usize;
                    let enc = c.u8()? as usize;
                    if !(1..=8).contains(&enc) || nd > 33 {
                        return corrupt("layout: chunk dimensions");
                    }
                    let mut dims = Vec::new();
                    for _ in 0..nd {
                        dims.push(c.uv(enc)?);
                    }
                    let dims = chunk_dims(dims)?;
                    let ty = c.u8()?;
                    let index = match ty {
                        1 => {
                            let filtered = if flags & 0x02 != 0 { Some((c.len()?, c.u32()?)) } else { None };
                            Index::Single { addr: c.addr()?, filtered }
                        }
                        2 => Index::Implicit { addr: c.addr()? },
                        3 => {
                            c.skip(1)?;
                            Index::Fixed { addr: c.addr()? }
                        }
                        4 => {
                            c.skip(5)?;
                            Index::Extensible { addr: c.addr()? }
                        }
                        5 => {
                            c.skip(6)?;
                            Index::BtreeV2 { addr: c.addr()? }
                        }
                        t => return unsupported(format!("chunk index of type {t} is not read")),
                    };
                    let _ = es;
                    Ok(Layout::Chunked { flags, dims, index })
                }
                3 => unsupported("virtual datasets are not read"),
                k => corrupt(format!("layout class {k}")),
            }
        }
        v => unsupported(format!("layout message version {v} is not read")),
    }
}

/// Bytes per chunk the contiguous layout's pseudo-chunks aim at.
pub const CONTIG_TARGET: u64 = 2 << 20;

impl Dataset<'_> {
    pub fn elem(&self) -> u64 {
        self.dt.size()
    }

    /// The chunk shape shown: the chunks' for chunked layouts, else whole rows of about
    /// `target` bytes (contiguous) or the whole array (compact).
    pub fn chunk_shape(&self, target: u64) -> Vec<u64> {
        match &self.layout {
            Layout::Chunked { dims, .. } => dims.clone(),
            Layout::Compact { .. } => self.shape.iter().map(|&d| d.max(1)).collect(),
            Layout::Contiguous { .. } => {
                let Some((&first, rest)) = self.shape.split_first() else { return Vec::new() };
                let row = rest.iter().fold(self.elem(), |a, &d| a.saturating_mul(d.max(1)));
                let k = (target / row.max(1)).clamp(1, first.max(1));
                let mut s = alloc::vec![k];
                s.extend(rest.iter().map(|&d| d.max(1)));
                s
            }
        }
    }

    /// Bytes of one whole chunk.
    pub fn chunk_bytes(&self, chunk: &[u64]) -> u64 {
        chunk.iter().fold(self.elem(), |a, &d| a.saturating_mul(d))
    }

    /// Chunks along each axis.
    pub fn grid(&self, chunk: &[u64]) -> Vec<u64> {
        self.shape.iter().zip(chunk).map(|(&s, &c)| s.div_ceil(c.max(1))).collect()
    }

    /// The codecs list (encoding order): `bytes`, then the filter pipeline.
    pub fn codecs(&self) -> R<String> {
        let mut s = String::from("[{\"name\":\"bytes\",\"configuration\":{\"endian\":");
        s.push_str(if self.z.be { "\"big\"}}" } else { "\"little\"}}" });
        for flt in &self.filters {
            s.push(',');
            let cd = |i: usize| flt.cd.get(i).copied().unwrap_or(0);
            match flt.id {
                1 => {
                    s.push_str("{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":");
                    json::num(&mut s, cd(0));
                    s.push_str("}}");
                }
                2 => {
                    s.push_str("{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":");
                    json::num(&mut s, if flt.cd.is_empty() { self.elem() } else { cd(0) as u64 });
                    s.push_str("}}");
                }
                3 => s.push_str("{\"name\":\"numcodecs.fletcher32\"}"),
                32001 => {
                    let cname = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];
                    let shuffle = ["noshuffle", "shuffle", "bitshuffle"];
                    s.push_str("{\"name\":\"blosc\",\"configuration\":{\"cname\":");
                    json::str(&mut s, cname.get(cd(6) as usize).copied().unwrap_or("blosclz"));
                    s.push_str(",\"clevel\":");
                    json::num(&mut s, cd(4));
                    s.push_str(",\"shuffle\":");
                    json::str(&mut s, shuffle.get(cd(5) as usize).copied().unwrap_or("noshuffle"));
                    s.push_str(",\"typesize\":");
                    json::num(&mut s, if flt.cd.len() > 2 { cd(2) as u64 } else { self.elem() });
                    s.push_str(",\"blocksize\":0}}");
                }
                32015 => {
                    s.push_str("{\"name\":\"zstd\",\"configuration\":{\"level\":");
                    json::num(&mut s, cd(0) as i32);
                    s.push_str(",\"checksum\":false}}");
                }
                307 => {
                    s.push_str("{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":");
                    json::num(&mut s, cd(0).clamp(1, 9));
                    s.push_str("}}");
                }
                32000 | 32004 | 6 => {
                    s.push_str("{\"name\":\"hdf5_filter\",\"configuration\":{\"filter\":");
                    json::num(&mut s, flt.id);
                    s.push_str(",\"params\":[");
                    for (k, v) in flt.cd.iter().enumerate() {
                        if k > 0 {
                            s.push(',');
                        }
                        json::num(&mut s, v);
                    }
                    s.push_str("]}}");
                }
                id => {
                    let name = if flt.name.is_empty() { known_name(id) } else { flt.name.as_str() };
                    return Err(E::Fail(Code::Codec, format!("filter {id} ({name}) is not read")));
                }
            }
        }
        s.push(']');
        Ok(s)
    }

    /// The Zarr v3 array document (without the attributes' closing: `attributes` is the JSON
    /// object to put there, `dims` the dimension names if known).
    pub fn zarr_json(&self, target: u64, attributes: &str, dims: Option<&[Option<String>]>) -> R<String> {
        let codecs = self.codecs()?;
        let chunk = self.chunk_shape(target);
        let mut j = String::from("{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":");
        json::list(&mut j, &self.shape);
        j.push_str(",\"data_type\":");
        j.push_str(&self.z.json);
        let first = self.shape.first().copied().unwrap_or(0);
        match (&self.layout, chunk.first()) {
            // Contiguous rows whose last pseudo-chunk is shorter: a rectilinear grid (the host
            // then reads exactly the rows there are).
            (Layout::Contiguous { .. }, Some(&k)) if k > 0 && first % k != 0 => {
                j.push_str(",\"chunk_grid\":{\"name\":\"rectilinear\",\"configuration\":{\"kind\":\"inline\",\"chunk_shapes\":[");
                j.push_str(&alloc::format!("[[{k},{}],{}]", first / k, first % k));
                for d in &chunk[1..] {
                    j.push_str(&alloc::format!(",{d}"));
                }
                j.push_str("]}}");
            }
            _ => {
                j.push_str(",\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":");
                json::list(&mut j, &chunk);
                j.push_str("}}");
            }
        }
        j.push_str(",\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}}");
        j.push_str(",\"fill_value\":");
        fill_json(&mut j, &self.dt, self.fill);
        j.push_str(",\"codecs\":");
        j.push_str(&codecs);
        if let Some(d) = dims.filter(|d| d.len() == self.shape.len() && d.iter().any(Option::is_some)) {
            j.push_str(",\"dimension_names\":[");
            for (k, n) in d.iter().enumerate() {
                if k > 0 {
                    j.push(',');
                }
                match n {
                    Some(n) => json::str(&mut j, n),
                    None => j.push_str("null"),
                }
            }
            j.push(']');
        }
        j.push_str(",\"attributes\":");
        j.push_str(attributes);
        j.push('}');
        Ok(j)
    }

    /// Whether any dimension can grow.
    pub fn unlimited_dim(&self) -> Option<usize> {
        self.max.iter().position(|&m| m == UNLIMITED)
    }
}

fn known_name(id: u16) -> &'static str {
    match id {
        4 => "szip",
        5 => "nbit",
        32008 => "bitshuffle",
        32017 => "SZ",
        32013 => "zfp",
        32026 => "blosc2",
        _ => "unknown",
    }
}
