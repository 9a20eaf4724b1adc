//! The nodes a TIFF file is presented as, from the tiff reader's answer (`decoders/tiff`
//! describes the images): each node's `zarr.json`, and for an array where its tiles are.
use tiff_ifd::{Entry, Ifd, STRIP_BYTE_COUNTS, STRIP_OFFSETS, TILE_BYTE_COUNTS, TILE_OFFSETS};
use crate::core::json::Value;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// An OME-TIFF series' planes: the main-chain directory of each, in (t, c, z) order.
#[derive(Debug)]
pub struct Planes {
    pub planes: Vec<u64>,
    /// Sizes T, C, Z.
    pub size: [u64; 3],
}

/// The directory holding a chunk's tiles: its key (offset) and its tile offsets and byte counts.
#[derive(Clone, Copy, Debug)]
pub struct Dir {
    pub key: u64,
    pub offsets: Entry,
    pub counts: Entry,
}

impl Dir {
    /// The directory at `key`'s tile (or strip) offsets and byte counts.
    pub fn of(key: u64, ifd: &Ifd, tiled: bool) -> Option<Dir> {
        let [o, n] = if tiled { [TILE_OFFSETS, TILE_BYTE_COUNTS] } else { [STRIP_OFFSETS, STRIP_BYTE_COUNTS] };
        Some(Dir { key, offsets: *ifd.get(o)?, counts: *ifd.get(n)? })
    }
}

/// Where an array's tiles are.
#[derive(Clone, Debug)]
pub enum Source {
    /// In this directory.
    Page(Dir),
    /// In the directories of a series' planes (`level` 0) or their SubIFDs.
    Planes { series: Rc<Planes>, level: usize, tiled: bool },
}

#[derive(Clone, Debug)]
pub enum Node {
    Group(Vec<u8>),
    /// `chunks`: tiles along sample planes, y, x; `dir`: the directory it was described from
    /// (whose tags it gives).
    Array { zarr_json: Vec<u8>, chunks: [u64; 3], planar: bool, source: Source, dir: u64 },
}

impl Node {
    pub fn zarr_json(&self) -> &[u8] {
        match self {
            Node::Group(j) | Node::Array { zarr_json: j, .. } => j,
        }
    }
}

/// The index of the tile or strip at the chunk whose last axes are `coords` (`[y, x]` or
/// `[sample, y, x]`) of an array of `chunks` tiles.
pub fn tile_of(chunks: [u64; 3], planar: bool, coords: &[u64]) -> Option<u64> {
    let (s, y, x) = match *coords {
        [y, x] => (0, y, x),
        [s, y, x] => (s, y, x),
        _ => return None,
    };
    let [ns, ny, nx] = chunks;
    let s = if planar { s } else { 0 };
    (s < ns && y < ny && x < nx).then(|| (s * ny + y) * nx + x)
}

/// The main-chain directory of plane (t, c, z).
pub fn plane_ifd(p: &Planes, t: u64, c: u64, z: u64) -> Option<u64> {
    let [st, sc, sz] = p.size;
    if t >= st || c >= sc || z >= sz {
        return None;
    }
    p.planes.get(((t * sc + c) * sz + z) as usize).copied()
}

/// The series of an `ome` answer.
pub fn series(v: &Value) -> Vec<Rc<Planes>> {
    let nums = |v: Option<&Value>| -> Vec<u64> { v.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default() };
    let one = |s: &Value| {
        let size = nums(s.get("size"));
        Rc::new(Planes { planes: nums(s.get("planes")), size: [0, 1, 2].map(|k| size.get(k).copied().unwrap_or(0)) })
    };
    v.get("series").and_then(Value::as_array).map(|a| a.iter().map(one).collect()).unwrap_or_default()
}

/// The nodes of a `nodes` answer (`dirs`: the directories described, `series`: an OME-TIFF's),
/// or `None` where the answer names what is not there.
pub fn nodes(v: &Value, dirs: &[(u64, Ifd)], series: &[Rc<Planes>]) -> Option<Vec<(String, Node)>> {
    let mut out = Vec::new();
    // (Pages come in directory order: each found where the last one was, not by a scan of all.)
    let mut from = 0;
    let mut find = |dir: u64| {
        let k = (from..dirs.len()).chain(0..from).find(|&k| dirs[k].0 == dir)?;
        from = k + 1;
        Some(&dirs[k].1)
    };
    for n in v.get("nodes")?.as_array()? {
        let mut doc = String::new();
        n.get("zarr_json")?.write(&mut doc);
        let zarr_json = doc.into_bytes();
        let path = String::from(n.get("path")?.as_str()?);
        let Some(c) = n.get("chunks").and_then(Value::as_array) else {
            out.push((path, Node::Group(zarr_json)));
            continue;
        };
        let chunks = [c.first()?.as_u64()?, c.get(1)?.as_u64()?, c.get(2)?.as_u64()?];
        let (dir, tiled) = (n.get("dir")?.as_u64()?, n.get("tiled")?.as_bool()?);
        let source = match n.get("series").and_then(Value::as_u64) {
            Some(k) => Source::Planes { series: series.get(k as usize)?.clone(), level: n.get("level")?.as_u64()? as usize, tiled },
            None => Source::Page(Dir::of(dir, find(dir)?, tiled)?),
        };
        out.push((path, Node::Array { zarr_json, chunks, planar: n.get("planar")?.as_bool()?, source, dir }));
    }
    Some(out)
}
