//! TIFF files as a store: Cloud-Optimized GeoTIFF, OME-TIFF, BigTIFF. A TIFF's tile (or strip)
//! offsets and byte counts are a shard index by another name: each image is presented as a
//! Zarr v3 array (see [`image`]) whose chunk `c/…` is a range of the file, so the read path,
//! merging, limits and codecs are the Zarr ones.
//!
//! A file of one image is that array; a file of several (pages, overviews) a group whose
//! children `0`, `1`, … are its images in directory order, with OME-Zarr `multiscales` listing
//! the full-resolution image and its reduced-resolution ones (a COG's overviews). An OME-TIFF
//! (OME-XML in the first `ImageDescription`) is its series instead, as OME-Zarr images (see
//! [`nodes`]): arrays `[t, c, z, y, x]` whose planes are the directories `TiffData` names, their
//! pyramid levels the planes' SubIFDs, found when a read needs them.
//!
//! The file's first 64 KiB are read at once — GDAL puts a COG's directories and their arrays
//! there —, a directory elsewhere by range; tile offsets and byte counts by blocks of 1,024 when
//! a read needs them, cached like a shard index.
pub mod ifd;
pub mod image;
mod nodes;
pub mod ome;

use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use super::windows::held;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use ifd::{corrupt, entry_count, parse_ifd, At, Entry, Header, Ifd};
use image::{Desc, Values, DESCRIBING, IMAGE_DESCRIPTION, RAW_TAG_BYTES};
use nodes::{Node, Source};

/// Bytes of the first read: the header, a COG's directories and their arrays.
const HEAD_READ: u64 = 64 << 10;
/// Bytes of a directory read elsewhere (about 330 classic entries).
const IFD_READ: u64 = 4 << 10;
/// Bytes read at a directory of the main chain found when a read needs it: the directories
/// after it are often near (an OME-TIFF writer's pages, each directory before its tiles).
const CHAIN_READ: u64 = 64 << 10;
/// Read-ahead windows kept, the last ones read: an OME-TIFF plane's directory and its SubIFDs
/// lie near its tiles, the next plane's further on; with one window each read of a reduced
/// level replaced the one the chain walk goes on from (5 × the file read, level 1 of the fixture).
const WINDOWS: usize = 4;
/// Directories followed at most (a chain that loops is an error long before).
const MAX_IMAGES: usize = 1 << 16;
/// Entries of a tile offsets or byte counts array read at once.
const BLOCK: u64 = 1024;
/// SubIFDs: the reduced-resolution images of an OME-TIFF plane.
const SUB_IFDS: u16 = 330;
/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_INFO: u64 = 0x7469_6600;
const KEY_BLOCK: u64 = 0x7469_6601;
const KEY_IFD: u64 = 0x7469_6602;

/// A TIFF file as a layer.
pub struct Tiff {
    url: String,
    info: RefCell<Option<Rc<Info>>>,
}

/// What the file's directories say: its nodes by path (`""`: the root).
pub struct Info {
    src: Src,
    nodes: Vec<(String, Node)>,
    /// Offsets of the main chain's directories found so far, in order, and whether it ends there.
    chain: RefCell<(Vec<u64>, bool)>,
}

/// The bytes of the file at hand: its first read, and the last [`WINDOWS`] reads ahead (offset, bytes).
pub struct Src {
    header: Header,
    /// The file's size, when an answer told it.
    size: Option<u64>,
    head: Rc<Vec<u8>>,
    /// (Filled round: the next one replaces the oldest.)
    windows: RefCell<([(u64, Rc<Vec<u8>>); WINDOWS], usize)>,
}

impl Src {
    /// `len` bytes at `offset`, if the first read or a window holds them.
    fn get(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let w = self.windows.borrow();
        let all = core::iter::once((0, &self.head[..])).chain(w.0.iter().map(|(at, b)| (*at, &b[..])));
        held(all, offset, len).map(<[u8]>::to_vec)
    }
}

impl Kind for Tiff {
    const NAME: &'static str = "tiff";
    const FIRST_READ: u64 = HEAD_READ;
    /// (`.ome.tif(f)` among them.)
    const EXTENSIONS: &'static [&'static str] = &[".tif", ".tiff", ".btf", ".tf8"];

    fn sniff(head: &[u8]) -> bool {
        Header::parse(head).is_some()
    }

    fn new(url: &str, _how: &Mounting) -> Result<Option<Self>> {
        Ok(Some(Tiff { url: String::from(url), info: RefCell::new(None) }))
    }

    fn url(&self) -> &str {
        &self.url
    }

    async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
        let info = self.info(below, c).await?;
        for (path, node) in info.nodes.iter().rev() {
            let rest = match path.as_str() {
                "" => key,
                p => match key.strip_prefix(p).and_then(|r| r.strip_prefix('/')) {
                    Some(r) => r,
                    None => continue,
                },
            };
            if rest == "zarr.json" {
                return Ok(Place::Bytes(Rc::new(node.zarr_json().to_vec())));
            }
            let (Node::Array { source, desc, .. }, Some(coords)) =
                (node, rest.strip_prefix("c/").and_then(chunk_coords))
            else {
                continue;
            };
            let Some((dir, tile)) = self.directory_of(below, c, &info, source, desc, &coords).await? else {
                return Ok(Place::Missing);
            };
            let (offset, len) = self.tile(below, c, &info, &dir, tile).await?;
            if offset == 0 || len == 0 {
                return Ok(Place::Missing);
            }
            return Ok(Place::Range { url: self.url.clone(), offset, len });
        }
        Ok(Place::Missing)
    }

    async fn describe<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C) -> Container {
        Container { kind: Self::NAME, url: self.url.clone(), comment: String::new(), version: String::new() }
    }

    fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
        let info = self.info.borrow().clone()?;
        let path = path.trim_matches('/');
        let kids = info.nodes.iter().filter_map(|(p, n)| {
            let rest = if path.is_empty() { Some(p.as_str()) } else { p.strip_prefix(path)?.strip_prefix('/') };
            rest.filter(|r| !r.is_empty() && !r.contains('/'))
                .map(|r| (String::from(r), matches!(n, Node::Array { .. })))
        });
        Some(kids.collect())
    }

    fn format(&self) -> Option<&'static str> {
        Some("zarr3")
    }

    /// Every tiles is a range of the one file: those wanted together merge.
    fn keys_share_objects(&self) -> bool {
        true
    }
}

/// `0/12` → `[0, 12]`.
fn chunk_coords(s: &str) -> Option<Vec<u64>> {
    s.split('/').map(|p| p.parse::<u64>().ok()).collect()
}

/// A boxed future (a recursion: the chain walk).
type Fut<'a, T> = core::pin::Pin<Box<dyn core::future::Future<Output = Result<T>> + 'a>>;

/// The directory holding a chunk's tiles: its tile offsets and byte counts.
pub struct Dir {
    key: u64,
    offsets: Entry,
    counts: Entry,
}

impl Tiff {
    /// The file's directories, read once.
    async fn info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Rc<Info>> {
        if let Some(i) = self.info.borrow().clone() {
            return Ok(i);
        }
        let work = || async { Ok(Rc::new(self.read_info(below, c).await?)) };
        let size = |i: &Rc<Info>| i.src.head.len() + WINDOWS * CHAIN_READ as usize + i.nodes.iter().map(|n| n.1.zarr_json().len() + 128).sum::<usize>();
        let info = (*below.memo(c, &self.url, alloc::vec![KEY_INFO], size, work).await?).clone();
        // (Kept here too: reads of every node of the file need it.)
        *self.info.borrow_mut() = Some(info.clone());
        Ok(info)
    }

    /// `len` bytes at `offset`: from what `src` holds, else by range — of `ahead` bytes when
    /// that is more (kept as a window: the directories and values near a directory).
    async fn bytes<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, offset: u64, len: u64, ahead: u64) -> Result<Vec<u8>> {
        if let Some(b) = src.get(offset, len) {
            return Ok(b);
        }
        if len > below.max_document() {
            let what = format!("{}: a TIFF value of {len} bytes", self.url);
            return Err(crate::core::error::too_large(&what, len, below.max_document(), "maxMetadataBytes"));
        }
        let ahead = src.size.map_or(ahead, |s| ahead.min(s.saturating_sub(offset)));
        let want = len.max(ahead);
        let r = below.read(c, &self.url, ByteRange::Range { offset, len: want }).await?;
        let b = r.map(|r| r.bytes).ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{}: not found", self.url)))?;
        if (b.len() as u64) < len {
            return Err(corrupt(&self.url, format!("{len} bytes at offset {offset}, past the file's end")));
        }
        let part = b[..len as usize].to_vec();
        if want > len {
            let (w, next) = &mut *src.windows.borrow_mut();
            w[*next % WINDOWS] = (offset, Rc::new(b));
            *next += 1;
        }
        Ok(part)
    }

    /// The directory at `at` and the out-of-line values of the tags that describe it.
    async fn described<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, at: u64) -> Result<(Ifd, Vec<(u16, Vec<u8>)>)> {
        let ifd = self.ifd(below, c, src, at, IFD_READ).await?;
        let mut fetched = Vec::new();
        for tag in DESCRIBING.iter().copied().chain([IMAGE_DESCRIPTION, SUB_IFDS]) {
            if let Some(e @ Entry { at: At::Offset(o), .. }) = ifd.get(tag) {
                let len = e.len().ok_or_else(|| corrupt(&self.url, "a tag of an unknown type"))?;
                // An image description is read only where it could be OME-XML (the first).
                if tag == IMAGE_DESCRIPTION && (at != src.header.first || len > below.max_document()) {
                    continue;
                }
                fetched.push((tag, self.bytes(below, c, src, *o, len, 0).await?));
            }
        }
        // The other tags' values that the bytes in hand hold, for the raw tags: no request.
        for e in &ifd.entries {
            if let (At::Offset(o), Some(len)) = (e.at, e.len()) {
                if len <= RAW_TAG_BYTES && !fetched.iter().any(|(t, _)| *t == e.tag) {
                    fetched.extend(src.get(o, len).map(|b| (e.tag, b)));
                }
            }
        }
        Ok((ifd, fetched))
    }

    async fn read_info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Info> {
        let url = &self.url;
        let first = below.read(c, url, ByteRange::Prefix(HEAD_READ)).await?;
        let head =
            first.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{url}: not found (no TIFF file here)")))?;
        let header = Header::parse(&head.bytes).ok_or_else(|| corrupt(url, "no TIFF header (II*, MM*, II+, MM+)"))?;
        let src = Src { header, size: head.object_size, head: Rc::new(head.bytes), windows: RefCell::default() };
        let (ifd0, fetched0) = self.described(below, c, &src, header.first).await?;
        let v0 = Values { header: &header, ifd: &ifd0, fetched: &fetched0 };
        let series = v0.text(IMAGE_DESCRIPTION).map(|x| ome::parse(&x)).unwrap_or_default();
        if !series.is_empty() {
            return self.read_ome(below, c, src, (ifd0, fetched0), series).await;
        }
        let mut descs = alloc::vec![Desc::new(url, 0, &v0)?];
        let mut seen = alloc::vec![header.first];
        let mut at = ifd0.next;
        while at != 0 {
            if seen.contains(&at) {
                return Err(corrupt(url, format!("the directory chain loops (back to offset {at})")));
            }
            if seen.len() >= MAX_IMAGES {
                return Err(corrupt(url, format!("more than {MAX_IMAGES} directories")));
            }
            seen.push(at);
            let (ifd, fetched) = self.described(below, c, &src, at).await?;
            descs.push(Desc::new(url, descs.len(), &Values { header: &header, ifd: &ifd, fetched: &fetched })?);
            at = ifd.next;
        }
        let nodes = nodes::pages(&descs, &seen);
        Ok(Info { src, nodes, chain: RefCell::new((seen, true)) })
    }

    /// An OME-TIFF's series: each one's planes, and its first plane's levels described (the
    /// chain followed only as far as the last series' first plane).
    async fn read_ome<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        src: Src,
        (ifd0, fetched0): (Ifd, Vec<(u16, Vec<u8>)>),
        series: Vec<ome::Series>,
    ) -> Result<Info> {
        let url = &self.url;
        let header = src.header;
        let bad = |why: String| Error::new(ErrorCode::UnsupportedFormat, format!("{url}: OME-TIFF {why} is not read"));
        let mut all = Vec::new();
        let mut next_ifd = 0u64;
        for s in series {
            let planes = s.planes(next_ifd, url).map_err(bad)?;
            next_ifd += planes.len() as u64;
            all.push(nodes::Planes { series: s, planes });
        }
        // The chain's directories up to the last series' first plane.
        let mut chain = alloc::vec![header.first];
        let mut next = ifd0.next;
        let last = all.iter().map(|p| p.planes[0]).max().unwrap_or(0);
        while (chain.len() as u64) <= last && next != 0 {
            if chain.contains(&next) || chain.len() >= MAX_IMAGES {
                return Err(corrupt(url, format!("the directory chain loops (back to offset {next})")));
            }
            chain.push(next);
            next = self.ifd(below, c, &src, next, CHAIN_READ).await?.next;
        }
        let mut series = Vec::new();
        for p in all {
            let k = p.planes[0];
            let at = *chain
                .get(k as usize)
                .ok_or_else(|| corrupt(url, format!("no directory {k} (the OME-XML names it)")))?;
            let (ifd, fetched) = match at == header.first {
                true => (ifd0.clone(), fetched0.clone()),
                false => self.described(below, c, &src, at).await?,
            };
            let v = Values { header: &header, ifd: &ifd, fetched: &fetched };
            let d = Desc::new(url, k as usize, &v)?;
            if d.samples != 1 || d.width != p.series.size[0] || d.height != p.series.size[1] {
                return Err(bad(format!(
                    "series \"{}\" ({} samples per pixel, or sizes unlike its planes')",
                    p.series.name, d.samples
                )));
            }
            let mut levels = alloc::vec![d];
            for o in v.ints(SUB_IFDS).unwrap_or_default() {
                let (ifd, fetched) = self.described(below, c, &src, o).await?;
                levels.push(Desc::new(url, k as usize, &Values { header: &header, ifd: &ifd, fetched: &fetched })?);
            }
            series.push((p, levels));
        }
        let nodes = nodes::ome(series)?;
        Ok(Info { src, nodes, chain: RefCell::new((chain, next == 0)) })
    }

    /// The directory at `at`: from what `src` holds, or read with `ahead` bytes (a second range
    /// for a larger one).
    async fn ifd<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, at: u64, ahead: u64) -> Result<Ifd> {
        let h = &src.header;
        let (count, each, next) = h.sizes();
        if src.size.is_some_and(|s| at >= s) {
            return Err(corrupt(&self.url, format!("a directory at offset {at}, past the file's end")));
        }
        let start = self.bytes(below, c, src, at, count, ahead).await?;
        let n = entry_count(h, &start).ok_or_else(|| corrupt(&self.url, format!("no directory at offset {at}")))?;
        let len = n.checked_mul(each).and_then(|x| x.checked_add(count + next));
        let len = len.ok_or_else(|| corrupt(&self.url, "a directory too large"))?;
        parse_ifd(&self.url, h, &self.bytes(below, c, src, at, len, ahead).await?)
    }

    /// The directory at `at`, cached (an OME-TIFF's planes, found when a read needs them),
    /// read with [`CHAIN_READ`] bytes.
    async fn cached_ifd<S: Objects, C: HttpClient>(&self, below: &S, c: &C, info: &Info, at: u64) -> Result<Rc<Ifd>> {
        let work = || self.ifd(below, c, &info.src, at, CHAIN_READ);
        below.memo(c, &self.url, alloc::vec![KEY_IFD, at], |i: &Ifd| 64 + i.entries.len() * 32, work).await
    }

    /// The offset of the `k`th directory of the main chain, following it as far as needed.
    fn chain_at<'a, S: Objects, C: HttpClient>(
        &'a self,
        below: &'a S,
        c: &'a C,
        info: &'a Info,
        k: u64,
    ) -> Fut<'a, Option<u64>> {
        Box::pin(async move {
            loop {
                let (known, ended) = {
                    let chain = info.chain.borrow();
                    (chain.0.get(k as usize).copied(), chain.1)
                };
                if let Some(at) = known {
                    return Ok(Some(at));
                }
                if ended {
                    return Ok(None);
                }
                let last = *info.chain.borrow().0.last().unwrap_or(&info.src.header.first);
                let next = self.cached_ifd(below, c, info, last).await?.next;
                let mut chain = info.chain.borrow_mut();
                if chain.0.last().unwrap_or(&info.src.header.first) != &last {
                    // Another read followed the chain meanwhile.
                    continue;
                }
                if next == 0 || chain.0.len() >= MAX_IMAGES {
                    chain.1 = true;
                } else if chain.0.contains(&next) {
                    return Err(corrupt(&self.url, format!("the directory chain loops (back to offset {next})")));
                } else {
                    chain.0.push(next);
                }
            }
        })
    }

    /// The directory holding the chunk at `coords` of an array from `source`, and the tile.
    async fn directory_of<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        info: &Info,
        source: &Source,
        desc: &Desc,
        coords: &[u64],
    ) -> Result<Option<(Dir, u64)>> {
        match source {
            Source::Page(at) => {
                Ok(desc.tile_of(coords).map(|t| (Dir { key: *at, offsets: desc.offsets, counts: desc.counts }, t)))
            }
            Source::Planes { series, level } => {
                let [t, ch, z] = [coords[0], coords[1], coords[2]];
                let Some(tile) = desc.tile_of(&coords[3..]) else { return Ok(None) };
                let Some(k) = nodes::plane_ifd(series, t, ch, z) else { return Ok(None) };
                let Some(at) = self.chain_at(below, c, info, k).await? else {
                    return Err(corrupt(&self.url, format!("no directory {k} (the OME-XML names it)")));
                };
                let mut dir = self.cached_ifd(below, c, info, at).await?;
                let mut key = at;
                if *level > 0 {
                    let e = dir
                        .get(SUB_IFDS)
                        .copied()
                        .ok_or_else(|| corrupt(&self.url, format!("directory {k} has no SubIFDs")))?;
                    let b = match e.at {
                        At::Inline(v) => v.to_vec(),
                        At::Offset(o) => self.bytes(below, c, &info.src, o, e.len().unwrap_or(0), 0).await?,
                    };
                    let subs = ifd::integers(&info.src.header, &e, &b).unwrap_or_default();
                    key = *subs
                        .get(*level - 1)
                        .ok_or_else(|| corrupt(&self.url, format!("directory {k} has no level {level}")))?;
                    dir = self.cached_ifd(below, c, info, key).await?;
                }
                let pick = |tags: [u16; 2]| tags.iter().find_map(|&t| dir.get(t).copied());
                let offsets = pick([image::TILE_OFFSETS, image::STRIP_OFFSETS]);
                let counts = pick([image::TILE_BYTE_COUNTS, image::STRIP_BYTE_COUNTS]);
                let (Some(offsets), Some(counts)) = (offsets, counts) else {
                    return Err(corrupt(&self.url, format!("directory {k} has no tile offsets")));
                };
                if offsets.count != desc.offsets.count || counts.count != desc.counts.count {
                    return Err(corrupt(&self.url, format!("directory {k} is tiled unlike the series' first plane")));
                }
                Ok(Some((Dir { key, offsets, counts }, tile)))
            }
        }
    }

    /// (offset, byte count) of tile or strip `tile` of directory `dir`.
    async fn tile<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        info: &Info,
        dir: &Dir,
        tile: u64,
    ) -> Result<(u64, u64)> {
        let block = tile / BLOCK;
        let b = self.blocks(below, c, info, dir, block).await?;
        let k = (tile % BLOCK) as usize;
        Ok((b.0.get(k).copied().unwrap_or(0), b.1.get(k).copied().unwrap_or(0)))
    }

    /// Block `block` (of [`BLOCK`] entries) of a directory's tile offsets and byte counts,
    /// cached; both in one request when they lie within 1 MiB of each other (GDAL writes them
    /// side by side), from the first read when it holds them.
    async fn blocks<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        info: &Info,
        dir: &Dir,
        block: u64,
    ) -> Result<Rc<(Vec<u64>, Vec<u64>)>> {
        let h = info.src.header;
        let work = || async {
            let spans = [span(&self.url, &dir.offsets, block)?, span(&self.url, &dir.counts, block)?];
            let (lo, hi) = (spans[0].1.min(spans[1].1), (spans[0].1 + spans[0].2).max(spans[1].1 + spans[1].2));
            let whole = match (spans[0].0, spans[1].0) {
                (At::Offset(_), At::Offset(_))
                    if hi - lo <= 1 << 20 && info.src.head.get(lo as usize..hi as usize).is_none() =>
                {
                    Some(self.bytes(below, c, &info.src, lo, hi - lo, 0).await?)
                }
                _ => None,
            };
            let mut out: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            for (k, (at, start, len, part)) in spans.into_iter().enumerate() {
                let b = match (at, &whole) {
                    (At::Inline(v), _) => v.to_vec(),
                    (At::Offset(_), Some(w)) => w[(start - lo) as usize..(start - lo + len) as usize].to_vec(),
                    (At::Offset(_), None) => self.bytes(below, c, &info.src, start, len, 0).await?,
                };
                out[k] = ifd::integers(&h, &part, &b).ok_or_else(|| corrupt(&self.url, "tile offsets cut short"))?;
            }
            let [o, n] = out;
            Ok((o, n))
        };
        let key = alloc::vec![KEY_BLOCK, dir.key, block];
        below.memo(c, &self.url, key, |v: &(Vec<u64>, Vec<u64>)| (v.0.len() + v.1.len()) * 8 + 64, work).await
    }
}

/// Where block `block` of the integer array `e` is: (where, offset, bytes, the block's entry).
fn span(file: &str, e: &Entry, block: u64) -> Result<(At, u64, u64, Entry)> {
    let size = ifd::type_size(e.typ)
        .filter(|_| matches!(e.typ, 3 | 4 | 16))
        .ok_or_else(|| corrupt(file, format!("tile offsets of type {}", e.typ)))?;
    let first = block * BLOCK;
    let n = e.count.saturating_sub(first).min(BLOCK);
    let part = Entry { count: n, ..*e };
    match e.at {
        At::Inline(_) => Ok((e.at, 0, 0, part)),
        At::Offset(o) => {
            let start = o.checked_add(first * size).ok_or_else(|| corrupt(file, "an offset past any file"))?;
            Ok((e.at, start, n * size, part))
        }
    }
}
