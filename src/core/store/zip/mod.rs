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
pub(crate) mod directory;

use super::kind::{Container, Kind, Mounting};
use super::place::Place;
use crate::core::bytes::{u16_le as u16_at, u32_le as u32_at};
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::transport::{ByteRange, HttpClient, Objects};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use directory::{corrupt, find_directory, parse_directory, LOCAL};
pub use directory::{Directory, Entry};

/// Bytes of the first (suffix) read: the end record with the longest comment and the ZIP64
/// records, and a directory of about a thousand entries.
const FIRST_READ: u64 = 128 << 10;
/// Bytes of an archive's start, read beside its end: where RFC-9 puts an `.ozx`'s `zarr.json`
/// documents (the root first, the others breadth-first), and where zarr-python's `ZipStore` and
/// folder zippers walking top-down put a node's.
const HEAD_READ: u64 = 64 << 10;

/// Memo keys of this store's derived values (the store keys them by URL too).
const KEY_INDEX: u64 = 0x7a69_7000;
const KEY_HEADER: u64 = 0x7a69_7001;
const KEY_INFLATED: u64 = 0x7a69_7002;

/// An archive as a layer: the objects under its URL and `/` are its entries.
#[derive(Debug)]
pub struct Archive {
    /// The archive's URL, its query (a signed URL's token) kept.
    url: String,
    /// Its directory, once read: kept here too, for the stores of every node opened in it.
    read: crate::core::store::Kept<Rc<Directory>>,
}

impl Kind for Archive {
    const NAME: &'static str = "zip";

    /// (OME's `.ozx` among them.)
    const EXTENSIONS: &'static [&'static str] = &[".zip", ".ozx"];

    fn sniff(head: &[u8]) -> bool {
        u32_at(head, 0) == Some(LOCAL)
    }

    fn new(url: &str, _how: &Mounting) -> Result<Option<Self>> {
        Ok(Some(Archive { url: String::from(url), read: Default::default() }))
    }

    fn url(&self) -> &str {
        &self.url
    }

    async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
        Archive::place(self, below, c, key).await
    }

    async fn describe<S: Objects, C: HttpClient>(&self, below: &S, c: &C) -> Container {
        let comment = self.directory(below, c).await.map(|d| d.comment.clone()).unwrap_or_default();
        Container { kind: Self::NAME, url: self.url.clone(), comment, version: String::new() }
    }

    fn hint(&self) -> Option<String> {
        self.nodes_hint()
    }
}

impl Archive {
    /// For a `NotFound` in the archive, once its directory is read: the folders holding Zarr
    /// metadata, shallowest first — `; the archive's nodes: "data.zarr", "data.zarr/a"`.
    fn nodes_hint(&self) -> Option<String> {
        let dir = self.read.any()?;
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

    /// The archive's directory, read once (per version of the archive) and cached.
    pub async fn directory<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Directory>> {
        let stamp = store.stamp(&self.url);
        if let Some(d) = self.read.get(stamp) {
            return Ok(d);
        }
        let d = self.read_directory(store, c).await?;
        self.read.set(stamp, store.stamp(&self.url), d.clone());
        Ok(d)
    }

    async fn read_directory<C: HttpClient>(&self, store: &impl Objects, c: &C) -> Result<Rc<Directory>> {
        let url = self.url.clone();
        let work = || async {
            // The start too, at the same time: the zarr.json documents it holds then cost no
            // round trip of their own, which a cold open would wait for after the directory.
            // Only a hint: a failed read is not an error.
            let end = store.read(c, &url, ByteRange::Tail(FIRST_READ));
            let start = store.read(c, &url, ByteRange::Head(HEAD_READ));
            let (tail, head) = futures_util::future::join(end, start).await;
            let head = head.ok().flatten();
            let tail = tail?.ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{url}: not found (no zip archive here)")))?;
            let size = tail.object_size.unwrap_or(tail.bytes.len() as u64);
            let tail_at = size.saturating_sub(tail.bytes.len() as u64);
            let (cd_offset, cd_size, entries, comment, zip64) = find_directory(&url, &tail.bytes, tail_at, size)?;
            let cd = match cd_offset.checked_sub(tail_at) {
                Some(start) => tail.bytes[start as usize..(start + cd_size) as usize].to_vec(),
                None => store
                    .read(c, &url, ByteRange::Range { offset: cd_offset, len: cd_size })
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
    async fn place<C: HttpClient>(&self, store: &impl Objects, c: &C, name: &str) -> Result<Place> {
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
                        .read(c, &url, ByteRange::Range { offset: header, len: 30 })
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
                None => store.read(c, &url, ByteRange::Range { offset: e.header, len }).await?.map(|r| r.bytes),
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
    use super::directory::tests::zip;
    use super::*;
    use crate::core::store::Store;
    use crate::core::transport::memory::{ObjectServer, Serve};
    use crate::core::transport::{Config, Response};
    use futures_executor::block_on;

    fn server(url: &str, body: &[u8], serve: Serve) -> ObjectServer {
        let s = ObjectServer::new().serving(serve);
        s.put(url, body.to_vec());
        s
    }

    fn ranges(s: &ObjectServer) -> Vec<String> {
        let mut log: Vec<String> = s.ranges().into_iter().flatten().collect();
        log.sort();
        log
    }

    #[test]
    fn a_head_read_is_the_first_bytes_or_a_shorter_object_never_other_bytes() {
        let body: Vec<u8> = (0..100u8).collect();
        let url = "https://h/x.ozx";
        let head = |s: ObjectServer, n| {
            let got = block_on(Store::new(Config::default()).read(&s, url, ByteRange::Head(n)));
            (got.map(|r| r.map(|r| (r.bytes, r.object_size))), s.ranges())
        };
        let (got, log) = head(server(url, &body, Serve::Honest), 10);
        assert_eq!(got.unwrap(), Some(((0..10).collect(), Some(100))));
        assert_eq!(log, [Some(String::from("bytes=0-9"))]);
        assert_eq!(head(server(url, &body, Serve::Honest), 1000).0.unwrap(), Some((body.clone(), Some(100))));
        // Where the browser hides Content-Range, a shorter body is the object's end.
        assert_eq!(head(server(url, &body, Serve::NoContentRange), 1000).0.unwrap(), Some((body.clone(), Some(100))));
        assert_eq!(head(server(url, &body, Serve::NoContentRange), 10).0.unwrap(), Some(((0..10).collect(), None)));
        // A server ignoring the range: the whole of a short object, nothing of a long one.
        assert_eq!(head(server(url, &body, Serve::IgnoreRange), 1000).0.unwrap(), Some((body.clone(), Some(100))));
        assert_eq!(head(server(url, &body, Serve::IgnoreRange), 10).0.unwrap_err().code, ErrorCode::TooLarge);
        let empty = server(url, &[], Serve::Honest);
        assert_eq!(head(empty, 10).0.unwrap(), Some((Vec::new(), Some(0))));
        // A Content-Range that names other bytes: asked once more, then an error.
        let (got, log) = head(server(url, &body, Serve::LyingRange), 10);
        assert_eq!(got.unwrap_err().code, ErrorCode::CorruptShard);
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn an_archive_start_is_read_beside_its_end() {
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
            let s = server(url, z, Serve::Honest);
            let store = Store::new(Config::default());
            let archive = Archive::new(url, &Mounting::default()).unwrap().unwrap();
            let got = match block_on(archive.place(&store, &s, "zarr.json")).unwrap() {
                Place::Bytes(b) => b.to_vec(),
                Place::Range { offset, len, .. } => {
                    block_on(store.read(&s, url, ByteRange::Range { offset, len })).unwrap().unwrap().bytes
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(got, doc);
            reads.sort();
            assert_eq!(ranges(&s), reads, "{url}");
        }
    }

    #[test]
    fn a_start_read_that_fails_is_not_retried_and_the_open_goes_on() {
        let big = alloc::vec![0u8; 200 << 10];
        let z = zip(&[("zarr.json", b"{}"), ("pad", &big)], "");
        let busy = |_: &ObjectServer, r: &crate::core::transport::Request<'_>| {
            r.range.as_deref().is_some_and(|r| r.starts_with("bytes=0-")).then(|| Ok(Response { status: 503, ..Default::default() }))
        };
        let s = ObjectServer::new().with_hook(busy);
        s.put("https://h/i.zip", z);
        let store = Store::new(Config::default());
        let archive = Archive::new("https://h/i.zip", &Mounting::default()).unwrap().unwrap();
        let place = block_on(archive.place(&store, &s, "zarr.json")).unwrap();
        assert!(matches!(place, Place::Range { offset: 39, len: 2, .. }), "{place:?}");
        assert_eq!(ranges(&s), ["bytes=-131072", "bytes=0-65535"]);
    }
}
