//! TIFF files as a store: Cloud-Optimized GeoTIFF, OME-TIFF, BigTIFF. A TIFF's tile (or strip)
//! offsets and byte counts are a shard index by another name: each image is presented as a
//! Zarr v3 array (see [`image`]) whose chunk `c/…` is a range of the file, so the read path,
//! merging, limits and codecs are the Zarr ones.
//!
//! A file of one image is that array; a file of several (pages, overviews) a group whose
//! children `0`, `1`, … are its images in directory order, with OME-Zarr `multiscales` listing
//! the full-resolution image and its reduced-resolution ones (a COG's overviews). An OME-TIFF
//! (OME-XML in the first `ImageDescription`) is its series instead, as OME-Zarr images: arrays
//! `[t, c, z, y, x]` whose planes are the directories `TiffData` names, their pyramid levels the
//! planes' SubIFDs, found when a read needs them.
//!
//! This side reads: the file's first 64 KiB at once — GDAL puts a COG's directories and their
//! arrays there —, a directory elsewhere by range, the values that describe each; tile offsets
//! and byte counts by blocks of 1,024 when a read needs them, cached like a shard index. The
//! images are described by the tiff reader, a decoder module (`decoders/tiff`: tags, codecs,
//! GeoTIFF keys, OME-XML, the nodes), handed the bytes read for it.
use tiff_ifd as ifd;
mod nodes;

use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use super::windows::ask;
use abi::held;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::external::Decoders;
use crate::core::json::write_str;
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use ifd::{directory_len, entry_count, parse_ifd, At, Entry, Header, Ifd, DESCRIBING, IMAGE_DESCRIPTION, RAW_TAG_BYTES, SUB_IFDS};
use nodes::{plane_ifd, tile_of, Dir, Node, Planes, Source};

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
/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_INFO: u64 = 0x7469_6600;
const KEY_BLOCK: u64 = 0x7469_6601;
const KEY_IFD: u64 = 0x7469_6602;

/// A TIFF file as a layer.
pub struct Tiff {
    url: String,
    decoders: Option<Rc<dyn Decoders>>,
    info: crate::core::store::Kept<Rc<Info>>,
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
    const READER: &'static str = crate::core::external::TIFF;
    /// (`.ome.tif(f)` among them.)
    const EXTENSIONS: &'static [&'static str] = &[".tif", ".tiff", ".btf", ".tf8"];

    fn sniff(head: &[u8]) -> bool {
        Header::parse(head).is_some()
    }

    fn new(url: &str, how: &Mounting) -> Result<Option<Self>> {
        Ok(Some(Tiff { url: String::from(url), decoders: how.decoders.clone(), info: Default::default() }))
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn decoders(&self) -> &'static [&'static str] {
        &[crate::core::external::TIFF]
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
            if let (Node::Array { dir, .. }, Some(tag)) = (node, rest.strip_prefix("tags/").and_then(|t| t.parse().ok())) {
                return self.tag(below, c, &info, *dir, tag).await;
            }
            let (Node::Array { source, chunks, planar, .. }, Some(coords)) =
                (node, rest.strip_prefix("c/").and_then(chunk_coords))
            else {
                continue;
            };
            let Some((dir, tile)) = self.directory_of(below, c, &info, source, (*chunks, *planar), &coords).await? else {
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
        let info = self.info.any()?;
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

impl Tiff {
    /// The file's directories, read once (per version of the file).
    async fn info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Rc<Info>> {
        let stamp = below.stamp(&self.url);
        if let Some(i) = self.info.get(stamp) {
            return Ok(i);
        }
        let work = || async { Ok(Rc::new(self.read_info(below, c).await?)) };
        let size = |i: &Rc<Info>| i.src.head.len() + WINDOWS * CHAIN_READ as usize + i.nodes.iter().map(|n| n.1.zarr_json().len() + 128).sum::<usize>();
        let info = (*below.memo(c, &self.url, alloc::vec![KEY_INFO], size, work).await?).clone();
        // (Kept here too: reads of every node of the file need it.)
        self.info.set(stamp, below.stamp(&self.url), info.clone());
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

    /// The directory at `at`, its bytes and the out-of-line values of the tags that describe it
    /// added to `read` (what the reader is handed).
    async fn described<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, at: u64, read: &mut Pieces) -> Result<Ifd> {
        let raw = self.ifd_bytes(below, c, src, at, IFD_READ).await?;
        let ifd = parse_ifd(&src.header, &raw).map_err(|w| corrupt(&self.url, w))?;
        read.push((at, raw));
        let mut fetched: Vec<u16> = Vec::new();
        for tag in DESCRIBING.iter().copied().chain([IMAGE_DESCRIPTION, SUB_IFDS]) {
            if let Some(e @ Entry { at: At::Offset(o), .. }) = ifd.get(tag) {
                let len = e.len().ok_or_else(|| corrupt(&self.url, "a tag of an unknown type"))?;
                // An image description is read only where it could be OME-XML (the first).
                if tag == IMAGE_DESCRIPTION && (at != src.header.first || len > below.max_document()) {
                    continue;
                }
                read.push((*o, self.bytes(below, c, src, *o, len, 0).await?));
                fetched.push(tag);
            }
        }
        // The other tags' values that the bytes in hand hold, for the raw tags: no request.
        for e in &ifd.entries {
            if let (At::Offset(o), Some(len)) = (e.at, e.len()) {
                if len <= RAW_TAG_BYTES && !fetched.contains(&e.tag) {
                    read.extend(src.get(o, len).map(|b| (o, b)));
                }
            }
        }
        Ok(ifd)
    }

    /// The tiff reader's answer to `op` (JSON members), handed the bytes `read`.
    fn ask(&self, read: &Pieces, op: &str) -> Result<crate::core::json::Value> {
        let mut request = String::from("{\"file\":");
        write_str(&mut request, &self.url);
        request.push_str(op);
        request.push('}');
        let what = ("tiff", "TIFF images' descriptions");
        ask(self.decoders.as_deref(), what, &self.url, &request, read.iter().map(|(at, b)| (*at, &b[..])))
    }

    async fn read_info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Info> {
        let url = &self.url;
        // (The reader loaded before any request: without it the open starts again.)
        self.ask(&Vec::new(), ",\"op\":\"ready\"")?;
        let first = below.read(c, url, ByteRange::Prefix(HEAD_READ)).await?;
        let head =
            first.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{url}: not found (no TIFF file here)")))?;
        let header = Header::parse(&head.bytes).ok_or_else(|| corrupt(url, "no TIFF header (II*, MM*, II+, MM+)"))?;
        let mut read: Pieces = alloc::vec![(0, head.bytes[..head.bytes.len().min(16)].to_vec())];
        let src = Src { header, size: head.object_size, head: Rc::new(head.bytes), windows: RefCell::default() };
        let ifd0 = self.described(below, c, &src, header.first, &mut read).await?;
        let series = nodes::series(&self.ask(&read, ",\"op\":\"ome\"")?);
        if !series.is_empty() {
            return self.read_ome(below, c, src, read, ifd0, series).await;
        }
        let mut dirs = alloc::vec![(header.first, ifd0)];
        let mut at = dirs[0].1.next;
        while at != 0 {
            if dirs.iter().any(|d| d.0 == at) {
                return Err(corrupt(url, format!("the directory chain loops (back to offset {at})")));
            }
            if dirs.len() >= MAX_IMAGES {
                return Err(corrupt(url, format!("more than {MAX_IMAGES} directories")));
            }
            let ifd = self.described(below, c, &src, at, &mut read).await?;
            dirs.push((at, ifd));
            at = dirs[dirs.len() - 1].1.next;
        }
        let seen: Vec<u64> = dirs.iter().map(|d| d.0).collect();
        let op = format!(",\"op\":\"nodes\",\"pages\":{}", list(&seen));
        let nodes = self.nodes(&self.ask(&read, &op)?, &dirs, &[])?;
        Ok(Info { src, nodes, chain: RefCell::new((seen, true)) })
    }

    fn nodes(&self, v: &crate::core::json::Value, dirs: &[(u64, Ifd)], series: &[Rc<Planes>]) -> Result<Vec<(String, Node)>> {
        nodes::nodes(v, dirs, series).ok_or_else(|| corrupt(&self.url, "the tiff reader's answer names no such directory"))
    }

    /// An OME-TIFF's series: each one's planes, and its first plane's levels described (the
    /// chain followed only as far as the last series' first plane).
    async fn read_ome<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        src: Src,
        mut read: Pieces,
        ifd0: Ifd,
        series: Vec<Rc<Planes>>,
    ) -> Result<Info> {
        let url = &self.url;
        let header = src.header;
        // The chain's directories up to the last series' first plane.
        let mut chain = alloc::vec![header.first];
        let mut next = ifd0.next;
        let first = |p: &Planes| p.planes.first().copied().unwrap_or(0);
        let last = series.iter().map(|p| first(p)).max().unwrap_or(0);
        while (chain.len() as u64) <= last && next != 0 {
            if chain.contains(&next) || chain.len() >= MAX_IMAGES {
                return Err(corrupt(url, format!("the directory chain loops (back to offset {next})")));
            }
            chain.push(next);
            next = self.ifd(below, c, &src, next, CHAIN_READ).await?.next;
        }
        let mut dirs = alloc::vec![(header.first, ifd0)];
        let mut op = String::from(",\"op\":\"nodes\",\"series\":[");
        for (n, p) in series.iter().enumerate() {
            let k = first(p);
            let at = *chain
                .get(k as usize)
                .ok_or_else(|| corrupt(url, format!("no directory {k} (the OME-XML names it)")))?;
            if !dirs.iter().any(|d| d.0 == at) {
                let ifd = self.described(below, c, &src, at, &mut read).await?;
                dirs.push((at, ifd));
            }
            let mut levels = alloc::vec![at];
            // (SubIFDs' values were read with the directory.)
            if let Some(e) = dirs.iter().find(|d| d.0 == at).and_then(|d| d.1.get(SUB_IFDS).copied()) {
                let b = match e.at {
                    At::Inline(v) => Some(v.to_vec()),
                    At::Offset(o) => held(read.iter().map(|(w, b)| (*w, &b[..])), o, e.len().unwrap_or(0)).map(<[u8]>::to_vec),
                };
                levels.extend(b.and_then(|b| ifd::integers(&header, &e, &b)).unwrap_or_default());
            }
            for &o in &levels[1..] {
                if !dirs.iter().any(|d| d.0 == o) {
                    let ifd = self.described(below, c, &src, o, &mut read).await?;
                    dirs.push((o, ifd));
                }
            }
            op.push_str(&format!("{}{{\"index\":{k},\"levels\":{}}}", if n > 0 { "," } else { "" }, list(&levels)));
        }
        op.push(']');
        let nodes = self.nodes(&self.ask(&read, &op)?, &dirs, &series)?;
        Ok(Info { src, nodes, chain: RefCell::new((chain, next == 0)) })
    }

    /// The bytes of the directory at `at`: from what `src` holds, or read with `ahead` bytes (a
    /// second range for a larger one).
    async fn ifd_bytes<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, at: u64, ahead: u64) -> Result<Vec<u8>> {
        let h = &src.header;
        let count = h.sizes().0;
        if src.size.is_some_and(|s| at >= s) {
            return Err(corrupt(&self.url, format!("a directory at offset {at}, past the file's end")));
        }
        let start = self.bytes(below, c, src, at, count, ahead).await?;
        let n = entry_count(h, &start).ok_or_else(|| corrupt(&self.url, format!("no directory at offset {at}")))?;
        let len = directory_len(h, n).ok_or_else(|| corrupt(&self.url, "a directory too large"))?;
        self.bytes(below, c, src, at, len, ahead).await
    }

    /// The directory at `at` (see [`Tiff::ifd_bytes`]).
    async fn ifd<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, at: u64, ahead: u64) -> Result<Ifd> {
        parse_ifd(&src.header, &self.ifd_bytes(below, c, src, at, ahead).await?).map_err(|w| corrupt(&self.url, w))
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

    /// The directory holding the chunk at `coords` of an array from `source` (of `chunks` tiles
    /// along sample planes, y, x), and the tile.
    async fn directory_of<S: Objects, C: HttpClient>(
        &self,
        below: &S,
        c: &C,
        info: &Info,
        source: &Source,
        (chunks, planar): ([u64; 3], bool),
        coords: &[u64],
    ) -> Result<Option<(Dir, u64)>> {
        match source {
            Source::Page(dir) => Ok(tile_of(chunks, planar, coords).map(|t| (*dir, t))),
            Source::Planes { series, level, tiled } => {
                let [t, ch, z] = [coords[0], coords[1], coords[2]];
                let Some(tile) = tile_of(chunks, planar, &coords[3..]) else { return Ok(None) };
                let Some(k) = plane_ifd(series, t, ch, z) else { return Ok(None) };
                let Some(at) = self.chain_at(below, c, info, k).await? else {
                    return Err(corrupt(&self.url, format!("no directory {k} (the OME-XML names it)")));
                };
                let mut ifd = self.cached_ifd(below, c, info, at).await?;
                let mut key = at;
                if *level > 0 {
                    let e = ifd
                        .get(SUB_IFDS)
                        .copied()
                        .ok_or_else(|| corrupt(&self.url, format!("directory {k} has no SubIFDs")))?;
                    let b = self.value(below, c, &info.src, &e).await?;
                    let subs = ifd::integers(&info.src.header, &e, &b).unwrap_or_default();
                    key = *subs
                        .get(*level - 1)
                        .ok_or_else(|| corrupt(&self.url, format!("directory {k} has no level {level}")))?;
                    ifd = self.cached_ifd(below, c, info, key).await?;
                }
                let dir = Dir::of(key, &ifd, *tiled).ok_or_else(|| corrupt(&self.url, format!("directory {k} has no tile offsets")))?;
                let n = chunks.iter().product::<u64>();
                if dir.offsets.count != n || dir.counts.count != n {
                    return Err(corrupt(&self.url, format!("directory {k} is tiled unlike the series' first plane")));
                }
                Ok(Some((dir, tile)))
            }
        }
    }

    /// Tag `tag` of the directory at `dir`, read whatever its size (within `maxMetadataBytes`):
    /// its value as JSON, as the raw tags give it.
    async fn tag<S: Objects, C: HttpClient>(&self, below: &S, c: &C, info: &Info, dir: u64, tag: u16) -> Result<Place> {
        let Some(e) = self.cached_ifd(below, c, info, dir).await?.get(tag).copied() else { return Ok(Place::Missing) };
        let b = self.value(below, c, &info.src, &e).await?;
        let h = info.src.header;
        let op = format!(",\"op\":\"value\",\"type\":{},\"count\":{},\"big_endian\":{}", e.typ, e.count, h.big_endian);
        let mut out = String::new();
        self.ask(&alloc::vec![(0, b)], &op)?.get("value").unwrap_or(&crate::core::json::Value::Null).write(&mut out);
        Ok(Place::Bytes(Rc::new(out.into_bytes())))
    }

    /// The bytes of entry `e`'s value: inline, held, or read by range.
    async fn value<S: Objects, C: HttpClient>(&self, below: &S, c: &C, src: &Src, e: &Entry) -> Result<Vec<u8>> {
        match e.at {
            At::Inline(v) => Ok(v.to_vec()),
            At::Offset(o) => self.bytes(below, c, src, o, e.len().unwrap_or(0), 0).await,
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

/// The bytes read for the reader: (offset, bytes).
type Pieces = Vec<(u64, Vec<u8>)>;

fn corrupt(file: &str, why: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{file}: not a readable TIFF: {why}"))
}

/// `[1,2,3]`.
fn list(v: &[u64]) -> String {
    let mut s = String::from("[");
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        s.push_str(&format!("{x}"));
    }
    s.push(']');
    s
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
