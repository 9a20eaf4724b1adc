//! TIFF files as a store: Cloud-Optimized GeoTIFF, OME-TIFF, BigTIFF. A TIFF's tile (or strip)
//! offsets and byte counts are a shard index by another name: each image is presented as a
//! Zarr v3 array (see [`image`]) whose chunk `c/…` is a range of the file, so the read path,
//! merging, limits and codecs are the Zarr ones.
//!
//! A file of one image is that array; a file of several (pages, overviews) a group whose
//! children `0`, `1`, … are its images in directory order, with OME-Zarr `multiscales` listing
//! the full-resolution image and its reduced-resolution ones (a COG's overviews). The file's
//! first 64 KiB are read at once — GDAL puts a COG's directories and their arrays there —, a
//! directory elsewhere by range; tile offsets and byte counts by blocks of 1,024 when a read
//! needs them, cached like a shard index.
pub mod ifd;
pub mod image;

use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use ifd::{corrupt, entry_count, parse_ifd, At, Entry, Header, Ifd};
use image::{Image, Values, DESCRIBING};

/// Bytes of the first read: the header, a COG's directories and their arrays.
const HEAD_READ: u64 = 64 << 10;
/// Bytes of a directory read elsewhere (about 330 classic entries).
const IFD_READ: u64 = 4 << 10;
/// Directories followed at most (a chain that loops is an error long before).
const MAX_IMAGES: usize = 1 << 16;
/// Entries of a tile offsets or byte counts array read at once.
const BLOCK: u64 = 1024;
/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_INFO: u64 = 0x7469_6600;
const KEY_BLOCK: u64 = 0x7469_6601;

/// A TIFF file as a layer.
pub struct Tiff {
    url: String,
    info: RefCell<Option<Rc<Info>>>,
}

/// What the file's directories say.
pub struct Info {
    /// The file's size, when an answer told it.
    size: Option<u64>,
    header: Header,
    head: Rc<Vec<u8>>,
    images: Vec<Image>,
    /// The root group's document, when the file holds several images.
    group: Option<Vec<u8>>,
}

impl Kind for Tiff {
    const NAME: &'static str = "tiff";

    /// `.tif`, `.tiff`, `.ome.tif(f)`, `.btf`, `.tf8` (before the query, in any case).
    fn named(url: &str) -> bool {
        let base = url.split(['?', '#']).next().unwrap_or(url).trim_end_matches('/').to_ascii_lowercase();
        [".tif", ".tiff", ".btf", ".tf8"].iter().any(|e| base.ends_with(e))
    }

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
        let single = info.group.is_none();
        let (image, rest) = match key.split_once('/') {
            _ if single => (0, key),
            Some((i, rest)) => match i.parse::<usize>() {
                Ok(i) if i < info.images.len() => (i, rest),
                _ => return Ok(Place::Missing),
            },
            None if key == "zarr.json" => return Ok(bytes(info.group.as_deref().unwrap_or_default())),
            None => return Ok(Place::Missing),
        };
        if rest == "zarr.json" {
            return Ok(bytes(&info.images[image].zarr_json));
        }
        let Some(coords) = rest.strip_prefix("c/").and_then(chunk_coords) else { return Ok(Place::Missing) };
        let Some(tile) = info.images[image].tile(&coords) else { return Ok(Place::Missing) };
        let (offset, len) = self.tile(below, c, &info, image, tile).await?;
        if offset == 0 || len == 0 {
            return Ok(Place::Missing);
        }
        Ok(Place::Range { url: self.url.clone(), offset, len })
    }

    async fn describe<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C) -> Container {
        Container { kind: Self::NAME, url: self.url.clone(), comment: String::new(), version: String::new() }
    }

    fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
        let info = self.info.borrow().clone()?;
        (info.group.is_some() && path.trim_matches('/').is_empty())
            .then(|| (0..info.images.len()).map(|i| (format!("{i}"), true)).collect())
    }

    fn format(&self) -> Option<&'static str> {
        Some("zarr3")
    }
}

fn bytes(b: &[u8]) -> Place {
    Place::Bytes(Rc::new(b.to_vec()))
}

/// `0/12` → `[0, 12]`.
fn chunk_coords(s: &str) -> Option<Vec<u64>> {
    s.split('/').map(|p| p.parse::<u64>().ok()).collect()
}

impl Tiff {
    /// The file's directories, read once.
    async fn info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Rc<Info>> {
        if let Some(i) = self.info.borrow().clone() {
            return Ok(i);
        }
        let work = || async { self.read_info(below, c).await };
        let size = |i: &Info| i.head.len() + i.images.iter().map(|m| m.zarr_json.len() + 128).sum::<usize>();
        let info = below.memo(c, &self.url, alloc::vec![KEY_INFO], size, work).await?;
        // (Kept here too: reads of every node of the file need it.)
        let rc = Rc::new(Info {
            size: info.size,
            header: info.header,
            head: info.head.clone(),
            images: info.images.clone(),
            group: info.group.clone(),
        });
        *self.info.borrow_mut() = Some(rc.clone());
        Ok(rc)
    }

    /// `len` bytes at `offset`: from the first read when it holds them, else by range.
    async fn bytes_at<S: Objects, C: HttpClient>(&self, below: &S, c: &C, head: &[u8], offset: u64, len: u64) -> Result<Vec<u8>> {
        let end = offset.checked_add(len).ok_or_else(|| corrupt(&self.url, "an offset past any file"))?;
        if let Some(b) = head.get(offset as usize..end as usize) {
            return Ok(b.to_vec());
        }
        if len > below.max_document() {
            let what = format!("{}: a TIFF value of {len} bytes", self.url);
            return Err(crate::core::error::too_large(&what, len, below.max_document(), "maxMetadataBytes"));
        }
        let r = below.read(c, &self.url, ByteRange::Range { offset, len }).await?;
        r.map(|r| r.bytes).ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{}: not found", self.url)))
    }

    async fn read_info<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Result<Info> {
        let url = &self.url;
        let first = below.read(c, url, ByteRange::Prefix(HEAD_READ)).await?;
        let head = first.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{url}: not found (no TIFF file here)")))?;
        let header = Header::parse(&head.bytes).ok_or_else(|| corrupt(url, "no TIFF header (II*, MM*, II+, MM+)"))?;
        let size = head.object_size;
        let head = Rc::new(head.bytes);
        let mut images = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        let mut at = header.first;
        while at != 0 {
            if seen.contains(&at) {
                return Err(corrupt(url, format!("the directory chain loops (back to offset {at})")));
            }
            if images.len() >= MAX_IMAGES {
                return Err(corrupt(url, format!("more than {MAX_IMAGES} directories")));
            }
            seen.push(at);
            let ifd = self.ifd(below, c, &header, (&head, size), at).await?;
            let mut fetched = Vec::new();
            for tag in DESCRIBING {
                if let Some(Entry { at: At::Offset(o), .. }) = ifd.get(tag) {
                    let len = ifd.get(tag).and_then(Entry::len).ok_or_else(|| corrupt(url, "a tag of an unknown type"))?;
                    fetched.push((tag, self.bytes_at(below, c, &head, *o, len).await?));
                }
            }
            let v = Values { header: &header, ifd: &ifd, fetched: &fetched };
            images.push(Image::new(url, images.len(), &v)?);
            at = ifd.next;
        }
        if images.is_empty() {
            return Err(corrupt(url, "no image"));
        }
        let group = (images.len() > 1).then(|| group_json(&images));
        Ok(Info { size, header, head, images, group })
    }

    /// The directory at `at`: from the first read, or one range (two for a large one, or where
    /// the file's size is not known).
    async fn ifd<S: Objects, C: HttpClient>(&self, below: &S, c: &C, h: &Header, (head, size): (&[u8], Option<u64>), at: u64) -> Result<Ifd> {
        let (count, each, next) = h.sizes();
        if size.is_some_and(|s| at >= s) {
            return Err(corrupt(&self.url, format!("a directory at offset {at}, past the file's end")));
        }
        let first = size.map_or(count, |s| IFD_READ.min(s - at));
        let start = match head.get(at as usize..) {
            Some(b) if b.len() as u64 >= count => b.to_vec(),
            _ => self.bytes_at(below, c, head, at, first).await?,
        };
        let n = entry_count(h, &start).ok_or_else(|| corrupt(&self.url, format!("no directory at offset {at}")))?;
        let len = n.checked_mul(each).and_then(|x| x.checked_add(count + next)).ok_or_else(|| corrupt(&self.url, "a directory too large"))?;
        let b = if (start.len() as u64) >= len { start } else { self.bytes_at(below, c, head, at, len).await? };
        parse_ifd(&self.url, h, &b)
    }

    /// (offset, byte count) of tile or strip `tile` of image `image`.
    async fn tile<S: Objects, C: HttpClient>(&self, below: &S, c: &C, info: &Info, image: usize, tile: u64) -> Result<(u64, u64)> {
        let block = tile / BLOCK;
        let b = self.blocks(below, c, info, image, block).await?;
        let k = (tile % BLOCK) as usize;
        Ok((b.0.get(k).copied().unwrap_or(0), b.1.get(k).copied().unwrap_or(0)))
    }

    /// Block `block` (of [`BLOCK`] entries) of image `image`'s tile offsets and byte counts,
    /// cached; both in one request when they lie within 1 MiB of each other (GDAL writes them
    /// side by side), from the first read when it holds them.
    async fn blocks<S: Objects, C: HttpClient>(&self, below: &S, c: &C, info: &Info, image: usize, block: u64) -> Result<Rc<(Vec<u64>, Vec<u64>)>> {
        let h = info.header;
        let im = &info.images[image];
        let work = || async {
            let spans = [span(&self.url, &im.offsets, block)?, span(&self.url, &im.counts, block)?];
            let (lo, hi) = (spans[0].1.min(spans[1].1), (spans[0].1 + spans[0].2).max(spans[1].1 + spans[1].2));
            let whole = match (spans[0].0, spans[1].0) {
                (At::Offset(_), At::Offset(_)) if hi - lo <= 1 << 20 && info.head.get(lo as usize..hi as usize).is_none() => {
                    Some(self.bytes_at(below, c, &info.head, lo, hi - lo).await?)
                }
                _ => None,
            };
            let mut out: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
            for (k, (at, start, len, part)) in spans.into_iter().enumerate() {
                let b = match (at, &whole) {
                    (At::Inline(v), _) => v.to_vec(),
                    (At::Offset(_), Some(w)) => w[(start - lo) as usize..(start - lo + len) as usize].to_vec(),
                    (At::Offset(_), None) => self.bytes_at(below, c, &info.head, start, len).await?,
                };
                out[k] = ifd::integers(&h, &part, &b).ok_or_else(|| corrupt(&self.url, "tile offsets cut short"))?;
            }
            let [o, n] = out;
            Ok((o, n))
        };
        let key = alloc::vec![KEY_BLOCK, image as u64, block];
        below.memo(c, &self.url, key, |v: &(Vec<u64>, Vec<u64>)| (v.0.len() + v.1.len()) * 8 + 64, work).await
    }
}

/// Where block `block` of the integer array `e` is: (where, offset, bytes, the block's entry).
fn span(file: &str, e: &Entry, block: u64) -> Result<(At, u64, u64, Entry)> {
    let size = ifd::type_size(e.typ).filter(|_| matches!(e.typ, 3 | 4 | 16)).ok_or_else(|| corrupt(file, format!("tile offsets of type {}", e.typ)))?;
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

/// The root group of a file of several images: its children, and the full-resolution image with
/// its reduced-resolution ones as an OME-Zarr multiscale (scales from their widths).
fn group_json(images: &[Image]) -> Vec<u8> {
    let mut j = String::from("{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{\"tiff\":{\"images\":");
    j.push_str(&format!("{}}}", images.len()));
    let full = &images[0];
    let levels: Vec<usize> = core::iter::once(0)
        .chain((1..images.len()).filter(|&i| images[i].subfile & 1 == 1 && images[i].zarr_json_axes() == full.zarr_json_axes()))
        .collect();
    if levels.len() > 1 {
        let axes = if full.zarr_json_axes() == 3 {
            "[{\"name\":\"c\",\"type\":\"channel\"},{\"name\":\"y\",\"type\":\"space\"},{\"name\":\"x\",\"type\":\"space\"}]"
        } else {
            "[{\"name\":\"y\",\"type\":\"space\"},{\"name\":\"x\",\"type\":\"space\"}]"
        };
        j.push_str(",\"multiscales\":[{\"version\":\"0.4\",\"axes\":");
        j.push_str(axes);
        j.push_str(",\"datasets\":[");
        for (k, &i) in levels.iter().enumerate() {
            let num = |x: f64| {
                let mut s = String::new();
                crate::core::json::write_f64(&mut s, x);
                s
            };
            let f = num(full.width as f64 / images[i].width as f64);
            let g = num(full.height as f64 / images[i].height as f64);
            let scale = if full.zarr_json_axes() == 3 { format!("[1,{g},{f}]") } else { format!("[{g},{f}]") };
            if k > 0 {
                j.push(',');
            }
            j.push_str(&format!("{{\"path\":\"{i}\",\"coordinateTransformations\":[{{\"type\":\"scale\",\"scale\":{scale}}}]}}"));
        }
        j.push_str("]}]");
    }
    j.push_str("}}");
    j.into_bytes()
}
