//! Range reads of one store's objects, shared by every layout: the HTTP fallbacks, a
//! byte-bounded cache of indexes (and of whole objects a server sent unasked), request
//! sharing and counters.
use super::cache::Lru;
use super::dedup::Dedup;
use super::error::{Error, ErrorCode, Result};
use super::http::{classify, parse_content_range, short, ByteRange, HttpClient, Method, Request, Status};
use super::locate::{ByteSpan, IndexFormat, IndexSpan, ShardIndex};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

#[derive(Clone, Debug)]
pub struct Config {
    /// Bytes of indexes and whole objects kept.
    pub cache_bytes: usize,
    /// S3 answers 403 for a missing key when listing is not allowed.
    pub treat403_as_missing: bool,
    /// Chunks of one object wanted together are read in one request when the bytes between
    /// them are fewer than this…
    pub merge_gap: u64,
    /// …and the request stays within this many bytes.
    pub merge_max: u64,
    /// Requests in flight per origin, when the caller sets it (the binding enforces it).
    pub max_in_flight: Option<usize>,
    /// Milliseconds from some origin, to time decoding (the core has no clock of its own).
    pub clock: Option<fn() -> f64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_bytes: 64 << 20,
            treat403_as_missing: false,
            merge_gap: 256 << 10,
            merge_max: 16 << 20,
            max_in_flight: None,
            clock: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub bytes: u64,
    pub index_hits: u64,
    pub index_fetches: u64,
    /// Chunks read (not counting absent ones).
    pub chunks: u64,
    /// Requests that served more than one chunk.
    pub merged_requests: u64,
    /// Time spent decoding chunks here (with a clock), in milliseconds.
    pub decode_ms: f64,
    /// Chunks served from a kept merged read (no request; also counted in `chunks`).
    pub kept_hits: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Object(String),
    Index(String, u64, u8, IndexSpan),
    /// Bytes of an object from an offset: a merged read whose gaps may hold chunks wanted later.
    Run(String, u64),
}

#[derive(Clone)]
enum Cached {
    Object(Rc<Vec<u8>>),
    /// The object does not exist (404): every later read of it is answered without a request.
    Missing,
    Index(Rc<ShardIndex>),
    Run(Rc<Vec<u8>>),
}

/// Bytes read, with the object's total size when the answer told it.
#[derive(Clone)]
pub struct RangeRead {
    pub bytes: Vec<u8>,
    pub object_size: Option<u64>,
}

pub struct Source {
    config: Config,
    cache: RefCell<Lru<Key, Cached>>,
    inflight: Dedup<Key, Rc<ShardIndex>>,
    /// Range reads under way: a read inside one of them waits for it instead of asking again.
    reads: Dedup<(String, u64, u64), Option<Rc<RangeRead>>>,
    /// Set once the server mishandled a suffix range: go straight to HEAD + range.
    no_suffix: Cell<bool>,
    stats: Cell<Stats>,
}

impl Source {
    pub fn new(config: Config) -> Self {
        Source {
            cache: RefCell::new(Lru::new(config.cache_bytes)),
            config,
            inflight: Dedup::default(),
            reads: Dedup::default(),
            no_suffix: Cell::new(false),
            stats: Cell::new(Stats::default()),
        }
    }

    pub fn stats(&self) -> Stats {
        self.stats.get()
    }

    fn count(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    async fn send<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<String>,
    ) -> Result<super::http::Response> {
        if c.is_aborted() {
            return Err(Error::new(ErrorCode::Aborted, format!("{url}: aborted")));
        }
        let r = c.send(Request { method, url, range }).await.map_err(|e| e.at(url))?;
        self.count(|s| {
            s.requests += 1;
            s.bytes += r.body.len() as u64;
        });
        Ok(r)
    }

    /// Read `range` of the object at `url`; `None` when the object does not exist.
    pub async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        let cached = self.cache.borrow_mut().get(&Key::Object(url.to_string()));
        match cached {
            Some(Cached::Object(whole)) => return slice_whole(url, &whole, range).map(Some),
            Some(Cached::Missing) => return Ok(None),
            _ => {}
        }
        if let ByteRange::Range { offset, len } = range {
            if let Some(bytes) = self.kept(url, offset, len) {
                return Ok(Some(RangeRead { bytes, object_size: None }));
            }
        }
        let got = match range {
            ByteRange::Range { offset, len } if len > 0 => self.shared_range(c, url, offset, len).await?,
            _ => self.fetch(c, url, range).await?,
        };
        if got.is_none() {
            // One 404 per object, however many of its indexes or chunks are wanted.
            self.cache.borrow_mut().put(Key::Object(url.to_string()), Cached::Missing, url.len() + 64);
        }
        Ok(got)
    }

    /// A range read, or a share of one under way that covers it.
    async fn shared_range<C: HttpClient>(&self, c: &C, url: &str, offset: u64, len: u64) -> Result<Option<RangeRead>> {
        let end = offset.saturating_add(len);
        let key = (url.to_string(), offset, len);
        let covers = |k: &(String, u64, u64)| k.0 == url && k.1 <= offset && end <= k.1.saturating_add(k.2);
        let work = || async {
            let r = self.fetch(c, url, ByteRange::Range { offset, len }).await?;
            Ok(r.map(Rc::new))
        };
        let ((_, start, _), got) = self.reads.run_covered(key, covers, || c.is_aborted(), work).await?;
        let Some(f) = got else { return Ok(None) };
        if start == offset && f.bytes.len() as u64 == len {
            return Ok(Some(Rc::try_unwrap(f).unwrap_or_else(|shared| (*shared).clone())));
        }
        // Another read's answer: our part of it.
        let from = (offset - start) as usize;
        match f.bytes.get(from..from + len as usize) {
            Some(piece) => Ok(Some(RangeRead { bytes: piece.to_vec(), object_size: f.object_size })),
            None => Err(short(url, "shared read is shorter than its range")),
        }
    }

    async fn fetch<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        match range {
            ByteRange::Full => {
                let r = self.send(c, Method::Get, url, None).await?;
                match classify(url, r.status, self.config.treat403_as_missing)? {
                    Status::Missing => Ok(None),
                    Status::Whole | Status::Partial => {
                        let n = r.body.len() as u64;
                        Ok(Some(RangeRead { bytes: r.body, object_size: Some(n) }))
                    }
                    Status::Refused => Err(http_error(url, r.status)),
                }
            }
            ByteRange::Range { len: 0, .. } => Ok(Some(RangeRead { bytes: Vec::new(), object_size: None })),
            ByteRange::Range { offset, len } => self.read_range(c, url, offset, len).await,
            ByteRange::Suffix(n) => {
                if !self.no_suffix.get() {
                    let r = self.send(c, Method::Get, url, Some(format!("bytes=-{n}"))).await?;
                    match classify(url, r.status, self.config.treat403_as_missing)? {
                        Status::Missing => return Ok(None),
                        Status::Whole => return self.keep_whole(url, r.body, range).map(Some),
                        Status::Partial => {
                            if let Some((a, b, Some(total))) = r.content_range.as_deref().and_then(parse_content_range)
                            {
                                if total < n {
                                    return Err(short(url, &format!("object has {total} bytes, its index needs {n}")));
                                }
                                let end = b.checked_add(1);
                                if end != Some(total)
                                    || end.and_then(|e| e.checked_sub(a)) != Some(n)
                                    || r.body.len() as u64 != n
                                {
                                    return Err(short(url, "suffix range answer does not match the request"));
                                }
                                return Ok(Some(RangeRead { bytes: r.body, object_size: Some(total) }));
                            }
                            // 206 without a readable Content-Range: where those bytes sit is unknown.
                        }
                        Status::Refused => {}
                    }
                    self.no_suffix.set(true);
                }
                // Fallback: learn the size, then ask for an explicit range.
                let h = self.send(c, Method::Head, url, None).await?;
                match classify(url, h.status, self.config.treat403_as_missing)? {
                    Status::Missing => return Ok(None),
                    Status::Whole | Status::Partial => {}
                    Status::Refused => return Err(http_error(url, h.status)),
                }
                let size = h.content_length.ok_or_else(|| {
                    Error::new(
                        ErrorCode::HttpError,
                        format!("{url}: server refuses suffix ranges and its HEAD answer has no Content-Length; not fetching the whole object"),
                    )
                })?;
                if size < n {
                    return Err(short(url, &format!("object has {size} bytes, its index needs {n}")));
                }
                let f = self.read_range(c, url, size - n, n).await?;
                Ok(f.map(|f| RangeRead { bytes: f.bytes, object_size: Some(size) }))
            }
        }
    }

    async fn read_range<C: HttpClient>(&self, c: &C, url: &str, offset: u64, len: u64) -> Result<Option<RangeRead>> {
        let last = offset
            .checked_add(len - 1)
            .ok_or_else(|| Error::new(ErrorCode::CorruptShard, format!("{url}: range overflows")))?;
        let r = self.send(c, Method::Get, url, Some(format!("bytes={offset}-{last}"))).await?;
        match classify(url, r.status, self.config.treat403_as_missing)? {
            Status::Missing => Ok(None),
            Status::Whole => self.keep_whole(url, r.body, ByteRange::Range { offset, len }).map(Some),
            Status::Partial => {
                let cr = r.content_range.as_deref().and_then(parse_content_range);
                if let Some((a, _, _)) = cr {
                    if a != offset {
                        return Err(short(url, &format!("asked for bytes from {offset}, got from {a}")));
                    }
                }
                if r.body.len() as u64 != len {
                    return Err(short(url, &format!("asked for {len} bytes at {offset}, got {}", r.body.len())));
                }
                Ok(Some(RangeRead { bytes: r.body, object_size: cr.and_then(|c| c.2) }))
            }
            Status::Refused if r.status == 416 => {
                Err(short(url, &format!("bytes {offset}-{last} lie beyond the end of the object")))
            }
            Status::Refused => Err(http_error(url, r.status)),
        }
    }

    /// A 200 answer to a ranged request: slice it, and keep it for later reads of this object.
    fn keep_whole(&self, url: &str, body: Vec<u8>, range: ByteRange) -> Result<RangeRead> {
        let f = slice_whole(url, &body, range)?;
        let n = body.len();
        self.cache.borrow_mut().put(Key::Object(url.to_string()), Cached::Object(Rc::new(body)), n);
        Ok(f)
    }

    /// The decoded index holding `entry` in `region` at level `depth`: cached, and fetched
    /// once however many callers want it at the same time.
    pub async fn index<C: HttpClient>(
        &self,
        c: &C,
        url: &str,
        region: ByteSpan,
        depth: u8,
        (format, entry): (&dyn IndexFormat, u64),
    ) -> Result<Rc<ShardIndex>> {
        let span = format.span(entry);
        let key = Key::Index(url.to_string(), region.offset, depth, span);
        if let Some(Cached::Index(i)) = self.cache.borrow_mut().get(&key) {
            self.count(|s| s.index_hits += 1);
            return Ok(i);
        }
        let work = || async {
            let fetched = match (span, region.len) {
                (IndexSpan::Tail(n), None) => self.read(c, url, ByteRange::Suffix(n)).await?,
                (span, len) => {
                    let range = resolve(url, span, region.offset, len)?;
                    self.read(c, url, range).await?
                }
            };
            self.count(|s| s.index_fetches += 1);
            let index = match fetched {
                None => ShardIndex::missing(),
                Some(f) => {
                    let known = ByteSpan { offset: region.offset, len: region.len.or(f.object_size) };
                    format.decode(entry, &f.bytes, known).map_err(|e| e.at(url))?
                }
            };
            let index = Rc::new(index);
            self.cache.borrow_mut().put(key.clone(), Cached::Index(index.clone()), index.nbytes());
            Ok(index)
        };
        self.inflight.run(key.clone(), || c.is_aborted(), work).await
    }

    /// Follow `levels` (index format, key in that index) from the whole object down to one
    /// chunk: its region, or `None` when the object or the chunk is absent.
    pub async fn locate<C: HttpClient>(
        &self,
        c: &C,
        url: &str,
        levels: &[(&dyn IndexFormat, u64)],
    ) -> Result<Option<ByteSpan>> {
        let mut region = ByteSpan::WHOLE;
        for (depth, &(format, key)) in levels.iter().enumerate() {
            let index = self.index(c, url, region, depth as u8, (format, key)).await?;
            match index.lookup(key) {
                None => return Ok(None),
                Some((offset, len)) => region = ByteSpan { offset, len: Some(len) },
            }
        }
        Ok(Some(region))
    }

    /// Keep the answer to a merged read (`bytes` from `offset`) whose gaps hold bytes nobody
    /// asked for yet: a later read inside it needs no request.
    pub(crate) fn keep_run(&self, url: &str, offset: u64, bytes: Rc<Vec<u8>>) {
        let n = bytes.len();
        self.cache.borrow_mut().put(Key::Run(url.to_string(), offset), Cached::Run(bytes), n);
    }

    /// Whether a range read under way covers `len` bytes at `offset` of `url` (reading them
    /// then waits for it).
    pub(crate) fn reading(&self, url: &str, offset: u64, len: u64) -> bool {
        let end = offset.saturating_add(len);
        self.reads.any(|(u, start, n)| u == url && *start <= offset && end <= start.saturating_add(*n))
    }

    /// Whether a range read under way holds any of the bytes `[a, b)` of `url`.
    pub(crate) fn reading_any(&self, url: &str, a: u64, b: u64) -> bool {
        self.reads.any(|(u, start, n)| u == url && *start < b && a < start.saturating_add(*n))
    }

    /// `len` bytes at `offset` of `url` from a kept run, if one holds them. Runs may overlap (a
    /// later, smaller one inside an earlier one): any run starting up to `merge_max` before
    /// `offset` may cover it.
    pub(crate) fn kept(&self, url: &str, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let lo = Key::Run(url.to_string(), offset.saturating_sub(self.config.merge_max));
        let hi = Key::Run(url.to_string(), offset);
        let covers = |k: &Key, v: &Cached| match (k, v) {
            (Key::Run(_, start), Cached::Run(b)) => start.saturating_add(b.len() as u64) >= end,
            _ => false,
        };
        let (key, value) = self.cache.borrow_mut().find_below(&lo, &hi, covers)?;
        let (Key::Run(_, start), Cached::Run(bytes)) = (key, value) else { return None };
        let from = usize::try_from(offset - start).ok()?;
        Some(bytes.get(from..from.checked_add(usize::try_from(len).ok()?)?)?.to_vec())
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Run `f`, adding its duration to the decode time when there is a clock.
    pub(crate) fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let Some(now) = self.config.clock else { return f() };
        let t0 = now();
        let r = f();
        let dt = now() - t0;
        self.count(|s| s.decode_ms += dt);
        r
    }

    /// Count chunks served from kept merged reads.
    pub(crate) fn count_kept(&self, n: usize) {
        self.count(|s| {
            s.chunks += n as u64;
            s.kept_hits += n as u64;
        });
    }

    /// Count a request that served `n` chunks.
    pub(crate) fn count_chunks(&self, n: usize) {
        self.count(|s| {
            s.chunks += n as u64;
            if n > 1 {
                s.merged_requests += 1;
            }
        });
    }
}

fn http_error(url: &str, status: u16) -> Error {
    Error::new(ErrorCode::HttpError, format!("{url}: HTTP {status}")).with_status(status)
}

/// The absolute byte range of an index span inside a region.
fn resolve(url: &str, span: IndexSpan, offset: u64, len: Option<u64>) -> Result<ByteRange> {
    let too_small = |need: u64| Err(short(url, &format!("a {need}-byte index does not fit in the {len:?}-byte shard")));
    Ok(match (span, len) {
        (IndexSpan::Whole, None) => ByteRange::Full,
        (IndexSpan::Whole, Some(l)) => ByteRange::Range { offset, len: l },
        (IndexSpan::Head(n), l) => {
            if l.is_some_and(|l| l < n) {
                return too_small(n);
            }
            ByteRange::Range { offset, len: n }
        }
        (IndexSpan::Tail(n), Some(l)) => {
            if l < n {
                return too_small(n);
            }
            ByteRange::Range { offset: offset + l - n, len: n }
        }
        (IndexSpan::Tail(n), None) => ByteRange::Suffix(n),
        (IndexSpan::At { offset: o, len: n }, l) => {
            let end = o.checked_add(n);
            if end.is_none() || l.is_some_and(|l| end.is_some_and(|e| e > l)) {
                return too_small(o.saturating_add(n));
            }
            ByteRange::Range { offset: offset.saturating_add(o), len: n }
        }
    })
}

fn slice_whole(url: &str, whole: &[u8], range: ByteRange) -> Result<RangeRead> {
    let size = whole.len() as u64;
    let (a, b) = match range {
        ByteRange::Full => (0, size),
        ByteRange::Range { offset, len } => (offset, offset.saturating_add(len)),
        ByteRange::Suffix(n) => {
            if n > size {
                return Err(short(url, &format!("object has {size} bytes, its index needs {n}")));
            }
            (size - n, size)
        }
    };
    if b > size {
        return Err(short(url, &format!("bytes {a}..{b} lie beyond the end of the {size}-byte object")));
    }
    Ok(RangeRead { bytes: whole[a as usize..b as usize].to_vec(), object_size: Some(size) })
}
