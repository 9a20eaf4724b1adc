//! Zip archives (and OME's single-file `.ozx`) as a store over a store: the central directory is
//! a shard index with names. Read with one suffix request (the end record, ZIP64 records, and
//! the directory when it fits: a small archive comes whole), cached like a shard index; a stored
//! entry is then a byte range of the archive — so a shard inside it is ranges of ranges, merged
//! with its neighbours — and a deflated one is inflated whole (bounded by its size in the
//! directory and `maxDecodedBytes`, its CRC-32 checked).
//!
//! Where an entry's data starts is known without reading its local header when the layout says
//! so: the data ends where the next header (or the directory) starts, which must agree with the
//! header's length as the directory gives it (or that plus a ZIP64 extra field of two sizes, in a
//! ZIP64 archive). Otherwise its local header is read once (30 bytes).
use super::{ByteRange, HttpClient, Objects};
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

/// Bytes of the first (suffix) read: the end record with the longest comment and the ZIP64
/// records, and a directory of about a thousand entries.
const FIRST_READ: u64 = 128 << 10;
/// Bytes of an archive's start, read beside its end: where RFC-9 puts an `.ozx`'s `zarr.json`
/// documents (the root first, the others breadth-first), and where zarr-python's `ZipStore` and
/// folder zippers walking top-down put a node's.
const HEAD_READ: u64 = 64 << 10;

const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_INDEX: u64 = 0x7a69_7000;
const KEY_HEADER: u64 = 0x7a69_7001;
const KEY_INFLATED: u64 = 0x7a69_7002;

/// One entry of the central directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    pub method: u16,
    pub flags: u16,
    pub crc: u32,
    pub compressed: u64,
    pub size: u64,
    /// Offset of the local header.
    pub header: u64,
    /// Where the data starts, when the layout says so without reading the local header.
    pub data: Option<u64>,
    /// Where the next local header (or the directory) starts.
    pub end: u64,
    /// Why this entry cannot be read (overlapping, outside the archive), if it cannot.
    pub bad: Option<String>,
}

/// A parsed central directory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Directory {
    /// Sorted by name (a name given twice: the later entry).
    pub entries: Vec<Entry>,
    pub comment: String,
    pub zip64: bool,
    /// Size of the archive.
    pub size: u64,
    /// The archive's first bytes, when read (all of them when the first read held it).
    pub front: Option<Rc<Vec<u8>>>,
}

impl Directory {
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.binary_search_by(|e| e.name.as_str().cmp(name)).ok().map(|i| &self.entries[i])
    }

    fn nbytes(d: &Directory) -> usize {
        256 + d.entries.iter().map(|e| 96 + e.name.len()).sum::<usize>() + d.front.as_ref().map_or(0, |w| w.len())
    }

    /// Bytes `a..b` of the archive when its first bytes hold them.
    fn in_front(&self, a: u64, b: u64) -> Option<&[u8]> {
        self.front.as_ref()?.get(usize::try_from(a).ok()?..usize::try_from(b).ok()?)
    }

    fn whole(&self) -> bool {
        self.front.as_ref().is_some_and(|f| f.len() as u64 == self.size)
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    super::le(b, at).map(u16::from_le_bytes)
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    super::le(b, at).map(u32::from_le_bytes)
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    super::le(b, at).map(u64::from_le_bytes)
}

fn corrupt(archive: &str, why: impl core::fmt::Display) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{archive}: not a readable zip archive: {why}"))
}

/// Where the directory is, from the end of the archive: `tail` holds its last bytes, from
/// `tail_at`; the archive has `size` bytes. (directory offset, size, entries, comment, zip64)
pub fn find_directory(archive: &str, tail: &[u8], tail_at: u64, size: u64) -> Result<(u64, u64, u64, String, bool)> {
    // The end record: the last signature whose comment length reaches the end exactly.
    let mut at = None;
    for i in (0..tail.len().saturating_sub(21)).rev() {
        if u32_at(tail, i) == Some(EOCD) && u16_at(tail, i + 20).map(usize::from) == Some(tail.len() - i - 22) {
            at = Some(i);
            break;
        }
    }
    let i = at.ok_or_else(|| corrupt(archive, "no end of central directory record"))?;
    let field = |o: usize| u16_at(tail, i + o).unwrap_or(0);
    let mut entries = u64::from(field(10));
    let mut cd_size = u64::from(u32_at(tail, i + 12).unwrap_or(0));
    let mut cd_offset = u64::from(u32_at(tail, i + 16).unwrap_or(0));
    let comment = String::from_utf8_lossy(&tail[i + 22..]).into_owned();
    let mut zip64 = false;
    // A ZIP64 locator just before the end record points at the ZIP64 end record.
    if i >= 20 && u32_at(tail, i - 20) == Some(ZIP64_LOCATOR) {
        zip64 = true;
        let record = u64_at(tail, i - 12).unwrap_or(u64::MAX);
        let local = record.checked_sub(tail_at).map(|r| r as usize);
        let r = match local {
            Some(r) if u32_at(tail, r) == Some(ZIP64_EOCD) && r + 56 <= tail.len() => r,
            _ => return Err(corrupt(archive, "the ZIP64 end record is not where its locator says")),
        };
        entries = u64_at(tail, r + 32).unwrap_or(0);
        cd_size = u64_at(tail, r + 40).unwrap_or(0);
        cd_offset = u64_at(tail, r + 48).unwrap_or(0);
    }
    let end = cd_offset.checked_add(cd_size).ok_or_else(|| corrupt(archive, "the directory's size overflows"))?;
    if end > size {
        return Err(corrupt(archive, format!("the directory ({cd_size} bytes at {cd_offset}) lies beyond its {size} bytes")));
    }
    // Each entry takes at least 46 bytes of the directory.
    if entries.saturating_mul(46) > cd_size {
        return Err(corrupt(archive, format!("{entries} entries cannot fit in a {cd_size}-byte directory")));
    }
    Ok((cd_offset, cd_size, entries, comment, zip64))
}

/// The entries of a central directory (`cd`, at `cd_offset` of an archive of `size` bytes).
pub fn parse_directory(archive: &str, cd: &[u8], cd_offset: u64, entries: u64, zip64: bool) -> Result<Vec<Entry>> {
    let mut out: Vec<Entry> = Vec::new();
    out.try_reserve_exact(entries.min(cd.len() as u64 / 46) as usize)
        .map_err(|_| Error::new(ErrorCode::TooLarge, format!("{archive}: cannot hold {entries} entries")))?;
    let mut p = 0usize;
    // Where each entry's local header could begin when the layout is as the directory says.
    let mut declared_headers: Vec<u64> = Vec::new();
    for k in 0..entries {
        let bad = || corrupt(archive, format!("directory entry {k} is cut short or malformed"));
        if u32_at(cd, p) != Some(CENTRAL) {
            return Err(bad());
        }
        let flags = u16_at(cd, p + 8).ok_or_else(bad)?;
        let method = u16_at(cd, p + 10).ok_or_else(bad)?;
        let crc = u32_at(cd, p + 16).ok_or_else(bad)?;
        let mut compressed = u64::from(u32_at(cd, p + 20).ok_or_else(bad)?);
        let mut size = u64::from(u32_at(cd, p + 24).ok_or_else(bad)?);
        let name_len = usize::from(u16_at(cd, p + 28).ok_or_else(bad)?);
        let extra_len = usize::from(u16_at(cd, p + 30).ok_or_else(bad)?);
        let comment_len = usize::from(u16_at(cd, p + 32).ok_or_else(bad)?);
        let mut header = u64::from(u32_at(cd, p + 42).ok_or_else(bad)?);
        let name_bytes = cd.get(p + 46..p + 46 + name_len).ok_or_else(bad)?;
        let extra = cd.get(p + 46 + name_len..p + 46 + name_len + extra_len).ok_or_else(bad)?;
        // ZIP64 extended information: the fields whose 32-bit value is all ones, in order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let (id, n) = (u16_at(extra, e).unwrap_or(0), usize::from(u16_at(extra, e + 2).unwrap_or(0)));
            if id == 1 {
                let mut q = e + 4;
                let mut take = |v: &mut u64| {
                    if *v == 0xffff_ffff {
                        if let Some(x) = u64_at(extra, q) {
                            *v = x;
                            q += 8;
                        }
                    }
                };
                take(&mut size);
                take(&mut compressed);
                take(&mut header);
            }
            e += 4 + n;
        }
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let mut bad_entry = None;
        if name_bytes.first() == Some(&b'/') || name_bytes.split(|&c| c == b'/' || c == b'\\').any(|s| s == b"..") {
            bad_entry = Some(format!("its name \"{name}\" leaves the archive's root"));
        }
        declared_headers.push(header.saturating_add(30 + name_len as u64 + extra_len as u64));
        out.push(Entry { name, method, flags, crc, compressed, size, header, data: None, end: 0, bad: bad_entry });
        p += 46 + name_len + extra_len + comment_len;
    }
    place_data(&mut out, &declared_headers, cd_offset, zip64);
    // Later entries of a name win (as Python's zipfile reads them).
    let names: Vec<&[u8]> = out.iter().map(|e| e.name.as_bytes()).collect();
    let order = crate::core::nd::order(out.len(), &|a, b| names[a] < names[b]);
    drop(names);
    let mut slots: Vec<Option<Entry>> = out.into_iter().map(Some).collect();
    let mut sorted: Vec<Entry> = Vec::with_capacity(slots.len());
    for e in order.into_iter().filter_map(|i| slots[i].take()) {
        if sorted.last().is_some_and(|l| l.name == e.name) {
            sorted.pop();
        }
        sorted.push(e);
    }
    Ok(sorted)
}

/// Where each entry's data starts when the layout shows it (see the module's doc), and which
/// entries overlap others or the directory.
fn place_data(entries: &mut [Entry], declared: &[u64], cd_offset: u64, zip64: bool) {
    let by_offset = crate::core::nd::order(entries.len(), &|a, b| entries[a].header < entries[b].header);
    for (k, &i) in by_offset.iter().enumerate() {
        let next = by_offset.get(k + 1).map_or(cd_offset, |&j| entries[j].header);
        entries[i].end = next;
        let e = &entries[i];
        let min_data = e.header.saturating_add(30).saturating_add(e.name.len() as u64);
        if next < min_data.saturating_add(e.compressed) || e.header >= cd_offset {
            entries[i].bad = Some(format!("its data overlaps the next entry or the directory (header at {})", e.header));
            continue;
        }
        // A data descriptor (flag bit 3) follows the data: 12 to 24 bytes, signature optional.
        let descriptors: &[u64] = if e.flags & 8 != 0 { &[12, 16, 20, 24] } else { &[0] };
        let a = declared[i];
        for &d in descriptors {
            let Some(b) = next.checked_sub(e.compressed).and_then(|x| x.checked_sub(d)) else { continue };
            if b == a || (zip64 && b == a + 20) {
                entries[i].data = Some(b);
                break;
            }
        }
    }
}

/// An archive mounted as a store: objects under `prefix` (the archive's URL and `/`) are its
/// entries.
#[derive(Debug)]
pub struct Archive {
    /// The archive's URL, its query (a signed URL's token) kept.
    pub url: String,
    /// The archive's URL without the query, then `/`.
    pub prefix: String,
    /// Its directory, once read: kept here too, for the stores of every node opened in it.
    read: core::cell::RefCell<Option<Rc<Directory>>>,
    pub(super) last_whole: super::objects::LastWhole,
}

impl PartialEq for Archive {
    fn eq(&self, other: &Archive) -> bool {
        self.url == other.url
    }
}

/// Where an object inside a mounted store is.
#[derive(Clone, Debug)]
pub enum Place {
    /// `len` bytes at `offset` of the object at `url`.
    Range { url: String, offset: u64, len: u64 },
    /// Bytes held here (an inflated entry).
    Bytes(Rc<Vec<u8>>),
    /// The whole object at this URL (its size unknown until read).
    Whole(String),
    Missing,
}

/// The key of an object URL under a mounted store's `prefix` (its query cut).
pub(super) fn key_under<'a>(prefix: &str, url: &'a str) -> Option<&'a str> {
    let rest = url.strip_prefix(prefix)?;
    Some(rest.split(['?', '#']).next().unwrap_or(rest))
}

impl Archive {
    pub fn new(url: &str) -> Archive {
        let (base, _) = super::split_url(url);
        Archive { url: String::from(url), prefix: format!("{base}/"), read: core::cell::RefCell::new(None), last_whole: Default::default() }
    }

    /// The entry name of an object URL under this archive.
    pub fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
        key_under(&self.prefix, url)
    }

    /// For a `NotFound` in the archive, once its directory is read: the folders holding Zarr
    /// metadata, shallowest first — `; the archive's nodes: "data.zarr", "data.zarr/a"`.
    pub fn nodes_hint(&self) -> Option<String> {
        let dir = self.read.borrow().clone()?;
        let mut nodes: Vec<(usize, &str)> = Vec::new();
        for e in &dir.entries {
            let (folder, file) = e.name.rsplit_once('/').unwrap_or(("", e.name.as_str()));
            if matches!(file, "zarr.json" | ".zarray" | ".zgroup") {
                nodes.push((folder.bytes().filter(|&b| b == b'/').count() + usize::from(!folder.is_empty()), folder));
            }
        }
        let mut shown = String::new();
        let mut n = 0;
        for depth in 0..=nodes.iter().map(|x| x.0).max()? {
            for &(_, folder) in nodes.iter().filter(|x| x.0 == depth) {
                n += 1;
                if n <= 4 {
                    shown += &format!("{}\"{folder}\"", if n > 1 { ", " } else { "" });
                }
            }
        }
        Some(format!("; the archive's nodes: {shown}{} (the `path` option opens one)", if n > 4 { ", …" } else { "" }))
    }

    fn what(&self, entry: &str) -> String {
        format!("entry \"{entry}\" of the zip archive {}", self.url)
    }

    /// The archive's directory, read once and cached.
    pub async fn directory<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Directory>> {
        if let Some(d) = self.read.borrow().clone() {
            return Ok(d);
        }
        let d = self.read_directory(store, c).await?;
        *self.read.borrow_mut() = Some(d.clone());
        Ok(d)
    }

    async fn read_directory<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Directory>> {
        let url = self.url.clone();
        let work = || async {
            // The start too, at the same time: the zarr.json documents it holds then cost no
            // round trip of their own, which a cold open would wait for after the directory.
            // Only a hint: a failed read is not an error.
            let end = store.read_object(c, &url, ByteRange::Tail(FIRST_READ));
            let start = store.read_object(c, &url, ByteRange::Head(HEAD_READ));
            let (tail, head) = futures_util::future::join(end, start).await;
            let head = head.ok().flatten();
            let tail = tail?.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{url}: not found (no zip archive here)")))?;
            let size = tail.object_size.unwrap_or(tail.bytes.len() as u64);
            let tail_at = size.saturating_sub(tail.bytes.len() as u64);
            let (cd_offset, cd_size, entries, comment, zip64) = find_directory(&url, &tail.bytes, tail_at, size)?;
            let cd = match cd_offset.checked_sub(tail_at) {
                Some(start) => tail.bytes[start as usize..(start + cd_size) as usize].to_vec(),
                None => store
                    .read_object(c, &url, ByteRange::Range { offset: cd_offset, len: cd_size })
                    .await?
                    .ok_or_else(|| corrupt(&url, "the archive went missing"))?
                    .bytes,
            };
            let entries = parse_directory(&url, &cd, cd_offset, entries, zip64)?;
            let head = head.filter(|h| h.object_size.is_none_or(|n| n == size)).map(|h| Rc::new(h.bytes));
            let front = if tail_at == 0 { Some(Rc::new(tail.bytes)) } else { head };
            Ok(Directory { entries, comment, zip64, size, front })
        };
        store.memo(c, &self.url, alloc::vec![KEY_INDEX], Directory::nbytes, work).await
    }

    /// Where entry `name` is.
    pub async fn place<C: HttpClient>(&self, store: &impl Objects, c: &C, name: &str) -> Result<Place> {
        let dir = self.directory(store, c).await?;
        let Some(e) = dir.get(name) else { return Ok(Place::Missing) };
        if e.flags & 1 != 0 {
            let why = format!("{}: the entry is encrypted; encrypted entries are not read", self.what(name));
            return Err(Error::new(ErrorCode::UnsupportedFormat, why));
        }
        if let Some(why) = &e.bad {
            return Err(Error::new(ErrorCode::CorruptShard, format!("{}: {why}", self.what(name))));
        }
        if ![0, 8, 93].contains(&e.method) {
            let m = match e.method {
                12 => "bzip2",
                14 => "lzma",
                95 => "xz",
                _ => "an unknown method",
            };
            let why = format!("{}: compressed with {m} ({}); only stored, deflated and zstd entries are read", self.what(name), e.method);
            return Err(Error::new(ErrorCode::UnsupportedFormat, why));
        }
        if e.method != 0 {
            return Ok(Place::Bytes(self.decompressed(store, c, e, &dir).await?));
        }
        if e.compressed != e.size {
            return Err(corrupt(&self.url, format!("{}: stored, but {} bytes stand for {}", self.what(name), e.compressed, e.size)));
        }
        let data = match e.data {
            Some(d) => d,
            None => self.data_offset(store, c, e, &dir).await?,
        };
        if let Some(b) = dir.in_front(data, data.saturating_add(e.size)) {
            return Ok(Place::Bytes(Rc::new(b.to_vec())));
        }
        if dir.whole() {
            return Err(corrupt(&self.url, "an entry past the end"));
        }
        Ok(Place::Range { url: self.url.clone(), offset: data, len: e.size })
    }

    /// The data offset of an entry whose layout did not show it: from its local header.
    async fn data_offset<C: HttpClient>(&self, store: &impl Objects, c: &C, e: &Entry, dir: &Directory) -> Result<u64> {
        let header = e.header;
        let url = self.url.clone();
        let work = || async {
            let h = match dir.in_front(header, header.saturating_add(30)).map(<[u8]>::to_vec) {
                Some(b) => b,
                None => {
                    store
                        .read_object(c, &url, ByteRange::Range { offset: header, len: 30 })
                        .await?
                        .ok_or_else(|| corrupt(&url, "the archive went missing"))?
                        .bytes
                }
            };
            let b = &h;
            if u32_at(b, 0) != Some(LOCAL) {
                return Err(corrupt(&url, format!("no local header at {header}")));
            }
            let n = u64::from(u16_at(b, 26).unwrap_or(0)) + u64::from(u16_at(b, 28).unwrap_or(0));
            Ok(header + 30 + n)
        };
        let at = store.memo(c, &self.url, alloc::vec![KEY_HEADER, header], |_| 64, work).await?;
        Ok(*at)
    }

    /// A deflated or zstd entry (method 8 or 93, Python 3.14's `ZIP_ZSTANDARD`), decompressed
    /// (at most its declared size, and `maxDecodedBytes`), its CRC-32 checked; cached. Read
    /// whole with its local header (one request, whatever the layout): from its header to the
    /// next.
    async fn decompressed<C: HttpClient>(&self, store: &impl Objects, c: &C, e: &Entry, dir: &Directory) -> Result<Rc<Vec<u8>>> {
        let limit = store.max_body();
        let what = self.what(&e.name);
        if e.size > limit || e.compressed > limit {
            return Err(crate::core::error::too_large(&format!("{what}: inflated"), e.size.max(e.compressed), limit, "maxDecodedBytes"));
        }
        let url = self.url.clone();
        let e = e.clone();
        let work = || async {
            let len = e.end - e.header;
            let raw = match dir.in_front(e.header, e.end).map(<[u8]>::to_vec) {
                Some(b) => Some(b),
                None if dir.whole() => None,
                None => store.read_object(c, &url, ByteRange::Range { offset: e.header, len }).await?.map(|r| r.bytes),
            };
            let raw = raw.ok_or_else(|| corrupt(&url, "an entry past the end"))?;
            if u32_at(&raw, 0) != Some(LOCAL) {
                return Err(corrupt(&url, format!("{what}: no local header at {}", e.header)));
            }
            let start = 30 + usize::from(u16_at(&raw, 26).unwrap_or(0)) + usize::from(u16_at(&raw, 28).unwrap_or(0));
            let stream = raw.get(start..start + e.compressed as usize).ok_or_else(|| corrupt(&url, format!("{what}: its data overlaps the next entry")))?;
            let n = e.size as usize;
            let mut probe: Vec<u8> = Vec::new();
            probe.try_reserve_exact(n).map_err(|_| Error::new(ErrorCode::TooLarge, format!("{what}: cannot allocate {n} bytes")))?;
            drop(probe);
            let out = if e.method == 8 {
                shardfetch_kernels::inflate::inflate(stream, false, n, n)
                    .map_err(|err| Error::new(ErrorCode::CorruptChunk, format!("{what}: does not inflate ({err:?})")))?
            } else {
                crate::core::zstd::unzstd(stream, n).map_err(|err| Error::new(ErrorCode::CorruptChunk, format!("{what}: {}", err.message)))?
            };
            if out.len() != n {
                return Err(Error::new(ErrorCode::CorruptChunk, format!("{what}: decompresses to {} bytes, not {n}", out.len())));
            }
            if crate::core::crc::crc32(&out) != e.crc {
                return Err(Error::new(ErrorCode::ChecksumMismatch, format!("{what}: CRC-32 mismatch")));
            }
            Ok(out)
        };
        store.memo(c, &self.url, alloc::vec![KEY_INFLATED, e.header], |v: &Vec<u8>| v.len(), work).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored zip of `files` as Python's zipfile writes one (no descriptors, no extras).
    fn zip(files: &[(&str, &[u8])], comment: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in files {
            let at = out.len() as u32;
            let crc = crate::core::crc::crc32(data);
            out.extend_from_slice(&LOCAL.to_le_bytes());
            out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);
            central.extend_from_slice(&CENTRAL.to_le_bytes());
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&crc.to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0; 12]);
            central.extend_from_slice(&at.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_at = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(&EOCD.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&(files.len() as u16).to_le_bytes());
        out.extend_from_slice(&(files.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_at.to_le_bytes());
        out.extend_from_slice(&(comment.len() as u16).to_le_bytes());
        out.extend_from_slice(comment.as_bytes());
        out
    }

    fn dir(z: &[u8]) -> Result<(Vec<Entry>, String)> {
        let (at, n, count, comment, zip64) = find_directory("z", z, 0, z.len() as u64)?;
        Ok((parse_directory("z", &z[at as usize..(at + n) as usize], at, count, zip64)?, comment))
    }

    #[test]
    fn entries_and_their_data_without_local_headers() {
        let z = zip(&[("b/zarr.json", b"{}"), ("a", b"hello")], "{\"ome\":{\"version\":\"0.5\"}}");
        let (entries, comment) = dir(&z).unwrap();
        assert_eq!(comment, "{\"ome\":{\"version\":\"0.5\"}}");
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a", "b/zarr.json"]);
        let a = &entries[0];
        let at = a.data.unwrap() as usize;
        assert_eq!(&z[at..at + 5], b"hello");
    }

    /// One object, answered as `how` says; every request's range logged.
    struct Answer {
        body: Vec<u8>,
        how: &'static str,
        log: core::cell::RefCell<Vec<Option<String>>>,
    }

    impl HttpClient for Answer {
        async fn send(&self, req: crate::core::storage::Request<'_>) -> Result<crate::core::storage::Response> {
            use crate::core::storage::Response;
            self.log.borrow_mut().push(req.range.clone());
            let n = self.body.len();
            let Some(spec) = req.range.as_deref().and_then(|r| r.strip_prefix("bytes=")) else {
                return Ok(Response { status: 200, body: self.body.clone(), ..Default::default() });
            };
            let (a, b) = spec.split_once('-').unwrap();
            let (a, b) = match a.parse::<usize>() {
                Ok(a) => (a, b.parse::<usize>().unwrap().min(n - 1)),
                Err(_) => (n.saturating_sub(b.parse().unwrap()), n - 1),
            };
            let part = self.body[a..=b].to_vec();
            let cr = |s: String| Some(s);
            Ok(match self.how {
                "busy-start" if a == 0 => Response { status: 503, ..Default::default() },
                "whole" => Response { status: 200, body: self.body.clone(), ..Default::default() },
                "empty" => Response { status: 416, ..Default::default() },
                "hidden" => Response { status: 206, body: part, ..Default::default() },
                "lying" => Response { status: 206, content_range: cr(format!("bytes {a}-{}/{}", b + 1, n + 1)), body: part, ..Default::default() },
                _ => Response { status: 206, content_range: cr(format!("bytes {a}-{b}/{n}")), body: part, ..Default::default() },
            })
        }
    }

    fn answer(body: &[u8], how: &'static str) -> Answer {
        Answer { body: body.to_vec(), how, log: core::cell::RefCell::default() }
    }

    #[test]
    fn a_head_read_is_the_first_bytes_or_a_shorter_object_never_other_bytes() {
        use crate::core::storage::{Config, Store};
        use futures_executor::block_on;
        let body: Vec<u8> = (0..100u8).collect();
        let head = |how, n| {
            let c = answer(&body, how);
            let got = block_on(Store::new(Config::default()).read_object(&c, "https://h/x.ozx", ByteRange::Head(n)));
            (got.map(|r| r.map(|r| (r.bytes, r.object_size))), c.log.into_inner())
        };
        let (got, log) = head("honest", 10);
        assert_eq!(got.unwrap(), Some(((0..10).collect(), Some(100))));
        assert_eq!(log, [Some(String::from("bytes=0-9"))]);
        assert_eq!(head("honest", 1000).0.unwrap(), Some((body.clone(), Some(100))));
        // Where the browser hides Content-Range, a shorter body is the object's end.
        assert_eq!(head("hidden", 1000).0.unwrap(), Some((body.clone(), Some(100))));
        assert_eq!(head("hidden", 10).0.unwrap(), Some(((0..10).collect(), None)));
        // A server ignoring the range: the whole of a short object, nothing of a long one.
        assert_eq!(head("whole", 1000).0.unwrap(), Some((body.clone(), Some(100))));
        assert_eq!(head("whole", 10).0.unwrap_err().code, ErrorCode::TooLarge);
        assert_eq!(head("empty", 10).0.unwrap(), Some((Vec::new(), Some(0))));
        // A Content-Range that names other bytes: asked once more, then an error.
        let (got, log) = head("lying", 10);
        assert_eq!(got.unwrap_err().code, ErrorCode::CorruptShard);
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn an_archive_start_is_read_beside_its_end() {
        use crate::core::storage::{Config, Store};
        use futures_executor::block_on;
        let big = alloc::vec![0u8; 200 << 10];
        let doc: &[u8] = b"{\"node_type\":\"group\"}";
        let first = zip(&[("zarr.json", doc), ("pad", &big)], "");
        let last = zip(&[("pad", &big), ("zarr.json", doc)], "");
        // Both ends at once, a .zip's as an .ozx's; the document from the start when it lies
        // there, else by range.
        let at = (30 + 3 + big.len() + 30 + 9) as u64;
        let late = format!("bytes={at}-{}", at + doc.len() as u64 - 1);
        for (url, z, mut reads) in [
            ("https://h/i.ozx", &first, alloc::vec!["bytes=-131072", "bytes=0-65535"]),
            ("https://h/i.zip", &first, alloc::vec!["bytes=-131072", "bytes=0-65535"]),
            ("https://h/i.zip", &last, alloc::vec!["bytes=-131072", "bytes=0-65535", late.as_str()]),
        ] {
            let c = answer(z, "honest");
            let store = Store::new(Config::default());
            let archive = Archive::new(url);
            let place = block_on(archive.place(&store, &c, "zarr.json")).unwrap();
            let got = match place {
                Place::Bytes(b) => b.to_vec(),
                Place::Range { offset, len, .. } => {
                    block_on(store.read_object(&c, url, ByteRange::Range { offset, len })).unwrap().unwrap().bytes
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(got, doc);
            let mut log: Vec<String> = c.log.borrow().iter().flatten().cloned().collect();
            log.sort();
            reads.sort();
            assert_eq!(log, reads, "{url}");
        }
    }

    #[test]
    fn a_start_read_that_fails_is_not_retried_and_the_open_goes_on() {
        use crate::core::storage::{Config, Store};
        use futures_executor::block_on;
        let big = alloc::vec![0u8; 200 << 10];
        let z = zip(&[("zarr.json", b"{}"), ("pad", &big)], "");
        let c = answer(&z, "busy-start");
        let store = Store::new(Config::default());
        let place = block_on(Archive::new("https://h/i.zip").place(&store, &c, "zarr.json")).unwrap();
        assert!(matches!(place, Place::Range { offset: 39, len: 2, .. }), "{place:?}");
        let mut log: Vec<String> = c.log.borrow().iter().flatten().cloned().collect();
        log.sort();
        assert_eq!(log, ["bytes=-131072", "bytes=0-65535"]);
    }

    #[test]
    fn a_name_given_twice_is_its_later_entry() {
        let z = zip(&[("b", b"1"), ("a", b"first"), ("c", b"3"), ("a", b"later")], "");
        let (entries, _) = dir(&z).unwrap();
        assert_eq!(entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        let at = entries[0].data.unwrap() as usize;
        assert_eq!(&z[at..at + 5], b"later");
        // A backslash counts as a separator too.
        let (e, _) = dir(&zip(&[("a\\..\\b", b"x")], "")).unwrap();
        assert!(e[0].bad.is_some());
    }

    #[test]
    fn hostile_directories_are_typed_errors() {
        let z = zip(&[("a", b"x")], "");
        let n = z.len();
        // The directory's offset pointing past the end.
        let mut bad = z.clone();
        bad[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(dir(&bad).unwrap_err().code, ErrorCode::CorruptShard);
        // 2^16-1 entries claimed in a tiny directory.
        let mut bad = z.clone();
        bad[n - 12..n - 10].copy_from_slice(&u16::MAX.to_le_bytes());
        assert_eq!(dir(&bad).unwrap_err().code, ErrorCode::CorruptShard);
        // No end record at all.
        assert_eq!(dir(b"not a zip at all, not at all").unwrap_err().code, ErrorCode::CorruptShard);
        // A name leaving the root, an entry overlapping the directory.
        let (e, _) = dir(&zip(&[("../evil", b"x")], "")).unwrap();
        assert!(e[0].bad.as_deref().unwrap().contains("root"));
    }
}
