//! [`Store`]: byte reads of one store's objects — HTTP fallbacks, in-flight sharing, a
//! byte-bounded cache, coalescing of spans wanted together, counters.
use super::cache::Lru;
use super::coalesce::coalesce;
use super::dedup::Dedup;
use super::limit::Budget;
use super::objects::{Objects, RangeRead};
use super::refs::References;
use super::zip::{Archive, Place};
use super::http::{
    classify, parse_content_range, retry_after_ms, short, transient, ByteRange, HttpClient, Method, Request, Response,
    Status,
};
use crate::core::error::{too_large, Error, ErrorCode, Result};
use super::vecmap::VecMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::any::Any;
use core::cell::{Cell, RefCell};
use core::future::Future;
use futures_util::stream::{self, StreamExt};

/// How many requests one batch keeps in flight (the binding's per-origin limit applies too).
const CONCURRENCY: usize = 32;

/// How transient failures are retried: exponential backoff with full jitter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retry {
    /// Tries in all (1: no retry).
    pub attempts: u32,
    /// The first backoff ceiling, doubled at each retry…
    pub base_ms: f64,
    /// …up to this.
    pub max_ms: f64,
    /// A request without an answer or body progress for this long is given up (and retried).
    pub stall_ms: f64,
    /// No retry starts later than this after the first try (with a clock).
    pub budget_ms: f64,
}

impl Default for Retry {
    fn default() -> Self {
        Retry { attempts: 5, base_ms: 200.0, max_ms: 5_000.0, stall_ms: 10_000.0, budget_ms: 30_000.0 }
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Bytes of derived values (shard indexes), whole objects and held merged reads kept.
    pub cache_bytes: usize,
    /// S3 answers 403 for a missing key when listing is not allowed.
    pub treat403_as_missing: bool,
    /// Spans of one object wanted together are read in one request when the bytes between
    /// them are fewer than this…
    pub merge_gap: u64,
    /// …and the request stays within this many bytes.
    pub merge_max: u64,
    /// The most bytes a whole-object answer may have (a ranged one has its range).
    pub max_body: u64,
    /// The most bytes a document read with [`Store::read_document`] may have.
    pub max_document: u64,
    pub retry: Retry,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_bytes: 64 << 20,
            treat403_as_missing: false,
            merge_gap: 256 << 10,
            merge_max: 16 << 20,
            max_body: crate::core::error::MAX_DECODED as u64,
            max_document: crate::core::error::MAX_METADATA as u64,
            retry: Retry::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub requests: u64,
    pub bytes: u64,
    /// Spans served by [`Store::read_spans`] (absent ones not counted).
    pub spans: u64,
    /// Requests that served more than one span.
    pub merged_requests: u64,
    /// Spans served from the held bytes of an earlier merged read (no request; also in `spans`).
    pub held_hits: u64,
    /// Derived values ([`Store::memo`]) found in the cache, and computed.
    pub memo_hits: u64,
    pub memo_fills: u64,
    /// Requests sent again after a transient failure.
    pub retries: u64,
}

/// What the cache holds about one object, keyed by (URL, slot).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    /// The whole object (a server sent it unasked), or the fact that it does not exist.
    Object,
    /// Bytes from an offset: a merged read whose gaps may hold spans wanted later.
    Held(u64),
    /// A value an upper layer computed from the object's bytes, under that layer's key.
    Derived(Vec<u64>),
}

#[derive(Clone)]
enum Entry {
    Object(Rc<Vec<u8>>),
    /// The object does not exist (404): every later read of it is answered without a request.
    Missing,
    Held(Rc<Vec<u8>>),
    Derived(Rc<dyn Any>),
}

type Key = (String, Slot);

pub use super::objects::LastWhole;

/// A store inside an object: the objects under its prefix are found by it.
#[derive(Clone, Debug, PartialEq)]
pub enum Mount {
    /// A zip archive's entries (`.zip`, OME's `.ozx`); shared by the stores of its nodes.
    Zip(Rc<Archive>),
    /// An Icechunk repository's nodes at one snapshot; shared likewise.
    Icechunk(Rc<super::icechunk::Repo>),
    /// A reference file's keys (kerchunk JSON); shared likewise.
    References(Rc<References>),
}

impl Mount {
    /// The key of the object at `url` inside this mount, if it is inside.
    pub fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
        match self {
            Mount::Zip(z) => z.key(url),
            Mount::Icechunk(r) => r.key(url),
            Mount::References(r) => r.key(url),
        }
    }

    /// What its stores share of objects a server sent whole.
    fn last_whole(&self) -> LastWhole {
        match self {
            Mount::Zip(z) => z.last_whole.clone(),
            Mount::Icechunk(r) => r.last_whole.clone(),
            Mount::References(r) => r.last_whole.clone(),
        }
    }
}

/// What holds a store's objects, when it is not a plain one (as the API reports it).
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    /// `"zip"`, `"icechunk"` or `"references"`.
    pub kind: &'static str,
    pub url: String,
    /// A zip archive's comment (an `.ozx` names its OME version there); an Icechunk snapshot's
    /// commit message.
    pub comment: String,
    /// The Icechunk snapshot read (its id), or empty.
    pub snapshot: String,
}

/// Where a range of a mounted object is.
enum Inside {
    Range { url: String, range: ByteRange, size: Option<u64> },
    Bytes(RangeRead),
    Missing,
}

/// One request of a batch: `range` of `url`, serving spans (input index, offset in the
/// answer, length; `None`: the whole answer).
type Job = (String, ByteRange, Vec<(usize, u64, Option<u64>)>);

pub struct Store {
    config: Config,
    cache: RefCell<Lru<Key, Entry>>,
    memos: Dedup<Key, Rc<dyn Any>>,
    /// Range reads under way: a read inside one of them waits for it instead of asking again.
    reads: Dedup<(String, u64, u64), Option<Rc<RangeRead>>>,
    /// Set once the server mishandled a suffix range: go straight to HEAD + range.
    no_suffix: Cell<bool>,
    /// Set once the server answered a ranged request with the whole object: from then on each
    /// object is downloaded whole once, shared by every read waiting on it.
    range_ignored: Cell<bool>,
    /// Whole-object downloads under way (a server that ignores Range).
    wholes: Dedup<String, Option<Rc<Vec<u8>>>>,
    /// Batches under way ([`Store::pin`]): while any is, whole objects are held whatever the
    /// cache's size, so that no batch downloads one twice.
    pins: Rc<Cell<usize>>,
    pinned: Rc<RefCell<VecMap<String, Rc<Vec<u8>>>>>,
    /// Whole objects read for one object's chunks ([`Store::hold_whole`]), with their holders.
    wholes_held: Rc<RefCell<VecMap<String, (Rc<Vec<u8>>, usize)>>>,
    /// The last whole object a server sent for a ranged read (it ignores Range), kept even above
    /// `cache_bytes` (within `max_body`): reads one after another in the same object would
    /// otherwise each download it whole again.
    last_whole: LastWhole,
    /// Bytes of ranged answers in flight, at most `max_body` together (one larger alone).
    budget: Budget,
    /// A store inside an object (a zip archive): the objects under its prefix are its.
    mount: Option<Mount>,
    /// Documents known without a request (a group's consolidated metadata).
    known: RefCell<Option<Rc<super::Known>>>,
    stats: Cell<Stats>,
}

/// Serves reads of one object from its whole bytes until dropped.
pub struct HeldWhole {
    url: String,
    held: Rc<RefCell<VecMap<String, (Rc<Vec<u8>>, usize)>>>,
}

impl Drop for HeldWhole {
    fn drop(&mut self) {
        let mut held = self.held.borrow_mut();
        if let Some((_, n)) = held.get_mut(&self.url) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.url);
            }
        }
    }
}

/// Holds whole objects for a batch of reads; the last one dropped lets them go.
pub struct Pin {
    pins: Rc<Cell<usize>>,
    pinned: Rc<RefCell<VecMap<String, Rc<Vec<u8>>>>>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.pins.set(self.pins.get().saturating_sub(1));
        if self.pins.get() == 0 {
            self.pinned.borrow_mut().clear();
        }
    }
}

impl Store {
    pub fn new(config: Config) -> Self {
        Store {
            cache: RefCell::new(Lru::new(config.cache_bytes)),
            budget: Budget::new(config.max_body),
            mount: None,
            known: RefCell::new(None),
            config,
            memos: Dedup::default(),
            reads: Dedup::default(),
            no_suffix: Cell::new(false),
            range_ignored: Cell::new(false),
            wholes: Dedup::default(),
            pins: Rc::new(Cell::new(0)),
            pinned: Rc::new(RefCell::new(VecMap::new())),
            wholes_held: Rc::new(RefCell::new(VecMap::new())),
            last_whole: LastWhole::default(),
            stats: Cell::new(Stats::default()),
        }
    }

    /// This store with objects inside another one: a zip archive's entries under its URL.
    pub fn with_mount(mut self, mount: Mount) -> Self {
        self.last_whole = mount.last_whole();
        self.mount = Some(mount);
        self
    }

    pub fn mount(&self) -> Option<&Mount> {
        self.mount.as_ref()
    }

    /// What holds this store's objects (a zip archive), read from what is cached of it.
    pub async fn container<C: HttpClient>(&self, c: &C) -> Option<Container> {
        match self.mount.as_ref()? {
            Mount::Zip(z) => {
                let d = z.directory(self, c).await.ok()?;
                Some(Container { kind: "zip", url: z.url.clone(), comment: d.comment.clone(), snapshot: String::new() })
            }
            Mount::Icechunk(r) => {
                let s = r.snapshot(self, c).await.ok()?;
                Some(Container { kind: "icechunk", url: r.url.clone(), comment: s.message.clone(), snapshot: s.id.clone() })
            }
            Mount::References(r) => {
                Some(Container { kind: "references", url: r.url.clone(), comment: String::new(), snapshot: String::new() })
            }
        }
    }

    /// Lay documents known without a request over this store (from now on).
    pub fn set_known(&self, known: Option<Rc<super::Known>>) {
        *self.known.borrow_mut() = known;
    }

    /// The documents known without a request laid over this store.
    pub fn known(&self) -> Option<Rc<super::Known>> {
        self.known.borrow().clone()
    }

    /// The mount holding `url`, and the object's key in it.
    fn mounted<'a>(&self, url: &'a str) -> Option<(&Mount, &'a str)> {
        let m = self.mount.as_ref()?;
        Some((m, m.key(url)?))
    }

    /// Where the object at `url` of a mounted store is, with the range read of it.
    async fn place<C: HttpClient>(&self, c: &C, mount: &Mount, key: &str) -> Result<Place> {
        match mount {
            Mount::Zip(z) => z.place(self, c, key).await,
            Mount::Icechunk(r) => r.place(self, c, key).await,
            Mount::References(r) => r.place(self, c, key).await,
        }
    }

    /// `range` of a mounted object at `place`: the range of the object holding it, or its bytes.
    fn inside(url: &str, place: Place, range: ByteRange) -> Result<Inside> {
        let (offset, len) = match (&place, range) {
            (Place::Missing, _) => return Ok(Inside::Missing),
            (Place::Bytes(b), r) => return slice_whole(url, b, r).map(Inside::Bytes),
            (Place::Whole(outer), range) => return Ok(Inside::Range { url: outer.clone(), range, size: None }),
            (Place::Range { offset, len, .. }, ByteRange::Full) => (*offset, *len),
            (Place::Range { offset, len: size, .. }, ByteRange::Range { offset: o, len }) => {
                if o.checked_add(len).is_none_or(|e| e > *size) {
                    return Err(short(url, &format!("bytes {o}..{} lie beyond the end of the {size}-byte object", o.saturating_add(len))));
                }
                (offset + o, len)
            }
            (Place::Range { offset, len: size, .. }, ByteRange::Suffix(n)) => {
                if n > *size {
                    return Err(short(url, &format!("object has {size} bytes, fewer than the last {n} asked for")));
                }
                (offset + size - n, n)
            }
            (Place::Range { offset, len: size, .. }, ByteRange::Tail(n)) => {
                let n = n.min(*size);
                (offset + size - n, n)
            }
            (Place::Range { offset, len: size, .. }, ByteRange::Head(n)) => (*offset, n.min(*size)),
        };
        let Place::Range { url: outer, len: size, .. } = place else { return Ok(Inside::Missing) };
        Ok(Inside::Range { url: outer, range: ByteRange::Range { offset, len }, size: Some(size) })
    }

    /// Hold whole objects for the batch of reads under way until the guard is dropped.
    pub fn pin(&self) -> Pin {
        self.pins.set(self.pins.get() + 1);
        Pin { pins: self.pins.clone(), pinned: self.pinned.clone() }
    }

    /// Read the whole object at `url` with one plain GET and serve every read of it from
    /// those bytes while the guard lives (not cached beyond it). `None` when that did not work
    /// (absent, too large, failed): reads then go their usual way and meet the cause there.
    /// `most`: the bytes the object plausibly has at most; an answer running longer is cut
    /// there (and the reads go their usual way).
    pub async fn hold_whole<C: HttpClient>(&self, c: &C, url: &str, most: Option<u64>) -> Option<HeldWhole> {
        let guard = |bytes: Option<Rc<Vec<u8>>>| {
            let mut held = self.wholes_held.borrow_mut();
            match (held.get_mut(url), bytes) {
                (Some((_, n)), _) => *n += 1,
                (None, Some(b)) => {
                    held.insert(url.to_string(), (b, 1));
                }
                (None, None) => return None,
            }
            Some(HeldWhole { url: url.to_string(), held: self.wholes_held.clone() })
        };
        if self.wholes_held.borrow().contains_key(url) {
            return guard(None);
        }
        if let Some(w) = self.whole_held(url) {
            return guard(Some(w));
        }
        if self.mounted(url).is_some() {
            // An entry of a mounted store: its whole range (or bytes), however large it is.
            return match self.read(c, url, ByteRange::Full).await {
                Ok(Some(r)) if most.is_none_or(|m| r.bytes.len() as u64 <= m) => guard(Some(Rc::new(r.bytes))),
                _ => None,
            };
        }
        let got = match most {
            Some(n) if n < self.config.max_body => {
                let r = self.send_limited(c, Method::Get, url, None, Some((n, "the object's plausible size"))).await;
                r.and_then(|r| match classify(url, r.status, self.config.treat403_as_missing)? {
                    Status::Missing => Ok(None),
                    Status::Whole | Status::Partial => Ok(Some(RangeRead { object_size: Some(r.body.len() as u64), bytes: r.body })),
                    Status::Refused => Err(http_error(url, r.status)),
                })
            }
            _ => self.fetch(c, url, ByteRange::Full).await,
        };
        match got {
            Ok(Some(f)) => guard(Some(Rc::new(f.bytes))),
            Ok(None) => {
                self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Missing, url.len() + 64);
                None
            }
            Err(_) => None,
        }
    }

    /// Whether the server answered a ranged request with the whole object.
    pub fn range_ignored(&self) -> bool {
        self.range_ignored.get()
    }

    /// The whole object at `url` when it is held (cached, or pinned for a batch).
    fn whole_held(&self, url: &str) -> Option<Rc<Vec<u8>>> {
        if let Some(Entry::Object(w)) = self.cache.borrow_mut().get(&(url.to_string(), Slot::Object)) {
            return Some(w);
        }
        if let Some((w, _)) = self.wholes_held.borrow().get(url) {
            return Some(w.clone());
        }
        if let Some((u, w)) = &*self.last_whole.borrow() {
            if u == url {
                return Some(w.clone());
            }
        }
        self.pinned.borrow().get(url).cloned()
    }

    /// The whole object at `url`, downloaded once however many reads want it at the same time
    /// (for a server that ignores Range).
    async fn whole<C: HttpClient>(&self, c: &C, url: &str) -> Result<Option<Rc<Vec<u8>>>> {
        if let Some(w) = self.whole_held(url) {
            return Ok(Some(w));
        }
        let work = || async {
            match self.fetch(c, url, ByteRange::Full).await? {
                None => Ok(None),
                Some(f) => Ok(Some(self.keep(url, f.bytes))),
            }
        };
        self.wholes.run(url.to_string(), || c.is_aborted(), work).await
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn stats(&self) -> Stats {
        self.stats.get()
    }

    fn count(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    /// Whether anything about the object at `url` is cached (its index, bytes, absence).
    pub fn knows(&self, url: &str) -> bool {
        let lo = (url.to_string(), Slot::Object);
        self.cache.borrow().keys_from(&lo).next().is_some_and(|k| k.0 == url) || self.whole_held(url).is_some()
    }

    /// Drop everything cached about the object at `url` (its bytes, derived values).
    pub fn forget(&self, url: &str) {
        let lo = (url.to_string(), Slot::Object);
        let mut cache = self.cache.borrow_mut();
        let keys: Vec<Key> = cache.keys_from(&lo).take_while(|k| k.0 == url).cloned().collect();
        keys.iter().for_each(|k| cache.remove(k));
        let mut last = self.last_whole.borrow_mut();
        if last.as_ref().is_some_and(|(u, _)| u == url) {
            *last = None;
        }
    }

    /// A request whose answer may not exceed `maxDecodedBytes` (nor a merged read's size):
    /// a ranged request too, as a server that ignores Range answers with the whole object.
    /// `asked`: the bytes a ranged request asks for (a 206 may carry no more), reserved from
    /// the budget of answers in flight while it runs.
    async fn send<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<(String, u64)>,
        cap: Option<u64>,
    ) -> Result<Response> {
        // `cap`: a read that is only a hint stops there even on a 200 (a server ignoring Range).
        let limit = cap.unwrap_or(u64::MAX).min(self.config.max_body).min(crate::core::error::MAX_ALLOC);
        let (range, asked) = match range {
            Some((r, n)) => (Some(r), Some(n)),
            None => (None, None),
        };
        let _reserved = match asked {
            Some(n) => Some(self.budget.reserve(n).await),
            None => None,
        };
        // A hint is sent once: its retries would hold up the reads beside it.
        let r = self.send_retried(c, method, url, range, Some(limit), asked, cap.is_some()).await?;
        let n = r.body.len() as u64;
        if n > limit {
            return Err(too_large(&format!("{url}: the answer"), n, limit, "maxDecodedBytes"));
        }
        if let Some(a) = asked.filter(|&a| r.status == 206 && n > a) {
            return Err(short(url, &format!("a partial answer of {n} bytes to a request for {a}")));
        }
        Ok(r)
    }

    /// A request whose body may not exceed `limit` (bytes, and the option that sets them).
    async fn send_limited<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<String>,
        limit: Option<(u64, &str)>,
    ) -> Result<Response> {
        let r = self.send_retried(c, method, url, range, limit.map(|l| l.0), None, false).await?;
        if let Some((l, option)) = limit {
            let n = r.body.len() as u64;
            if n > l {
                return Err(too_large(&format!("{url}: the answer"), n, l, option));
            }
        }
        Ok(r)
    }

    /// One request, retried on network errors (stalls and bodies cut short included) and on
    /// transient statuses (408, 429, 5xx) with exponential backoff and full jitter, honouring
    /// `Retry-After`, within the attempts and the time budget; an abort ends it at once. After
    /// the last try, a transient status is returned for the caller to report, an error as is.
    async fn send_retried<C: HttpClient>(
        &self,
        c: &C,
        method: Method,
        url: &str,
        range: Option<String>,
        limit: Option<u64>,
        asked: Option<u64>,
        once: bool,
    ) -> Result<Response> {
        let policy = self.config.retry;
        let start = c.now();
        let mut attempt = 0u32;
        loop {
            if c.is_aborted() {
                return Err(Error::new(ErrorCode::Aborted, format!("{url}: aborted")));
            }
            let deadline = start.map(|t0| t0 + policy.budget_ms + policy.stall_ms);
            let req =
                Request { method, url, range: range.clone(), limit, asked, stall_ms: Some(policy.stall_ms), deadline };
            let got = c.send(req).await.map_err(|e| e.at(url));
            if let Ok(r) = &got {
                self.count(|s| {
                    s.requests += 1;
                    s.bytes += r.body.len() as u64;
                });
            } else {
                self.count(|s| s.requests += 1);
            }
            // A body shorter than its Content-Length was cut short in transit.
            let got = got.and_then(|r| match r.content_length {
                Some(n) if method == Method::Get && (r.body.len() as u64) < n && r.status < 300 => Err(Error::new(
                    ErrorCode::Network,
                    format!("{url}: truncated body: {} of {n} bytes arrived", r.body.len()),
                )),
                _ => Ok(r),
            });
            let wait = match &got {
                Err(e) if e.code == ErrorCode::Network => None,
                Ok(r) if transient(r.status) => r.retry_after.as_deref().and_then(retry_after_ms).or(Some(0.0)),
                _ => return got,
            };
            attempt += 1;
            // Full jitter: anywhere up to the exponential ceiling; Retry-After as a floor.
            let ceiling = (policy.base_ms * f64::from(1u32 << (attempt - 1).min(20))).min(policy.max_ms);
            let delay = (c.random() * ceiling).max(wait.unwrap_or(0.0));
            let late = match (start, c.now()) {
                (Some(t0), Some(t)) => t + delay - t0 > policy.budget_ms,
                _ => false,
            };
            if attempt >= policy.attempts || late || once {
                return match got {
                    Err(e) => Err(Error::new(e.code, format!("{} (after {attempt} tries)", e.message))),
                    ok => ok,
                };
            }
            self.count(|s| s.retries += 1);
            c.sleep(delay).await;
        }
    }

    /// A whole small object (a metadata document) of at most `limit` bytes; `None` when absent.
    pub async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let known = self.known.borrow().as_ref().and_then(|k| k.get(url));
        if let Some(known) = known {
            return Ok(known.map(|d| d.to_vec()));
        }
        if self.mounted(url).is_some() {
            let got = self.read(c, url, ByteRange::Full).await?;
            if let Some(r) = &got {
                if r.bytes.len() as u64 > limit {
                    return Err(too_large(&format!("{url}: the document"), r.bytes.len() as u64, limit, "maxMetadataBytes"));
                }
            }
            return Ok(got.map(|r| r.bytes));
        }
        self.read_object_document(c, url, limit).await
    }

    /// [`Store::read_document`] of an object itself (not a mounted one).
    pub async fn read_object_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let cached = self.cache.borrow_mut().get(&(url.to_string(), Slot::Object));
        match cached {
            Some(Entry::Object(whole)) => return Ok(Some(whole.to_vec())),
            Some(Entry::Missing) => return Ok(None),
            _ => {}
        }
        let r = self.send_limited(c, Method::Get, url, None, Some((limit, "maxMetadataBytes"))).await?;
        match classify(url, r.status, self.config.treat403_as_missing)? {
            Status::Missing => {
                self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Missing, url.len() + 64);
                Ok(None)
            }
            Status::Whole | Status::Partial => Ok(Some(r.body)),
            Status::Refused => Err(http_error(url, r.status)),
        }
    }

    /// Read `range` of the object at `url`; `None` when the object does not exist.
    pub async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        let Some((mount, key)) = self.mounted(url) else { return self.read_object(c, url, range).await };
        if let Some(whole) = self.whole_held(url) {
            return slice_whole(url, &whole, range).map(Some);
        }
        let place = self.place(c, mount, key).await.map_err(|e| e.at(url))?;
        match Store::inside(url, place, range)? {
            Inside::Missing => Ok(None),
            Inside::Bytes(b) => Ok(Some(b)),
            Inside::Range { url: outer, range, size } => {
                let got = self.read_object(c, &outer, range).await.map_err(|e| e.at(url))?;
                Ok(got.map(|r| RangeRead { object_size: size.or(r.object_size), bytes: r.bytes }))
            }
        }
    }

    /// Read `range` of the object at `url` itself (not a mounted one); `None` when absent.
    pub async fn read_object<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        let cached = self.cache.borrow_mut().get(&(url.to_string(), Slot::Object));
        if let Some(Entry::Missing) = cached {
            return Ok(None);
        }
        if let Some(whole) = self.whole_held(url) {
            return slice_whole(url, &whole, range).map(Some);
        }
        if self.range_ignored.get() {
            return match self.whole(c, url).await? {
                Some(w) => slice_whole(url, &w, range).map(Some),
                None => {
                    self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Missing, url.len() + 64);
                    Ok(None)
                }
            };
        }
        if let ByteRange::Range { offset, len } = range {
            if let Some(bytes) = self.held(url, offset, len) {
                return Ok(Some(RangeRead { bytes, object_size: None }));
            }
            self.check_len(url, offset, len)?;
        }
        let got = match range {
            ByteRange::Range { offset, len } if len > 0 => self.shared_range(c, url, offset, len).await?,
            _ => self.fetch(c, url, range).await?,
        };
        if got.is_none() {
            // One 404 per object, however many of its indexes or spans are wanted.
            self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Missing, url.len() + 64);
        }
        Ok(got)
    }

    /// Read many spans (`ByteRange::Range` or `Full`) of one or more objects with as few
    /// requests as possible, handing each to `each` as its bytes arrive (`None`: the object
    /// does not exist). Spans already held need no request; spans inside a read under way wait
    /// for it; the rest are sorted and merged per object across gaps below `merge_gap` into
    /// requests of at most `merge_max` bytes, whose unasked bytes are held for later. An error
    /// from `each` stops the batch.
    pub async fn read_spans<C: HttpClient>(
        &self,
        c: &C,
        wanted: &[(String, ByteRange)],
        mut each: impl FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        if self.mount.is_some() {
            // Spans of mounted objects become spans of the objects holding them (neighbouring
            // entries of a stored zip merge like a shard's chunks); held bytes are answered here.
            let mut outer: Vec<(String, ByteRange)> = Vec::new();
            let mut from: Vec<usize> = Vec::new();
            for (i, (url, range)) in wanted.iter().enumerate() {
                let Some((mount, key)) = self.mounted(url) else {
                    outer.push((url.clone(), *range));
                    from.push(i);
                    continue;
                };
                if let Some(whole) = self.whole_held(url) {
                    each(i, slice_whole(url, &whole, *range).map(|r| Some(r.bytes)))?;
                    continue;
                }
                let inside = match self.place(c, mount, key).await {
                    Ok(place) => Store::inside(url, place, *range),
                    Err(e) => Err(e.at(url)),
                };
                match inside {
                    Ok(Inside::Range { url: o, range, .. }) => {
                        outer.push((o, range));
                        from.push(i);
                    }
                    Ok(Inside::Bytes(b)) => each(i, Ok(Some(b.bytes)))?,
                    Ok(Inside::Missing) => each(i, Ok(None))?,
                    Err(e) => each(i, Err(e))?,
                }
            }
            // Errors name the mounted object too (the archive or reference file, and the key).
            return self.read_object_spans(c, &outer, |k, got| each(from[k], got.map_err(|e| e.at(&wanted[from[k]].0))))
                .await;
        }
        self.read_object_spans(c, wanted, each).await
    }

    /// [`Store::read_spans`] of objects themselves (none of them mounted).
    async fn read_object_spans<C: HttpClient>(
        &self,
        c: &C,
        wanted: &[(String, ByteRange)],
        mut each: impl FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        let mut by_url: VecMap<&str, Vec<usize>> = VecMap::new();
        for (i, (url, _)) in wanted.iter().enumerate() {
            by_url.get_or_insert_with(url.as_str(), Vec::new).push(i);
        }
        let mut jobs: Vec<Job> = Vec::new();
        for (url, items) in by_url.into_vec() {
            let mut spans: Vec<(usize, u64, u64)> = Vec::new();
            let mut held = Vec::new();
            for i in items {
                match wanted[i].1 {
                    ByteRange::Range { offset, len } => match self.held(url, offset, len) {
                        Some(bytes) => held.push((i, bytes)),
                        None => match self.check_len(url, offset, len) {
                            Ok(()) => spans.push((i, offset, len)),
                            Err(e) => each(i, Err(e))?,
                        },
                    },
                    whole => jobs.push((url.into(), whole, alloc::vec![(i, 0, None)])),
                }
            }
            let n = held.len() as u64;
            self.count(|s| {
                s.spans += n;
                s.held_hits += n;
            });
            for (i, bytes) in held {
                each(i, Ok(Some(bytes)))?;
            }
            // Spans inside a read under way (an earlier batch's merged run) wait for it alone:
            // merged with others into a wider range, they would be sent again.
            spans.retain(|&(i, offset, len)| {
                if !self.reading(url, offset, len) {
                    return true;
                }
                jobs.push((url.into(), ByteRange::Range { offset, len }, alloc::vec![(i, 0, Some(len))]));
                false
            });
            if self.range_ignored.get() && !spans.is_empty() {
                // The server sends whole objects anyway: one download serves every span of it.
                let members = spans.iter().map(|&(i, offset, len)| (i, offset, Some(len))).collect();
                jobs.push((url.into(), ByteRange::Full, members));
                continue;
            }
            let offsets: Vec<(u64, u64)> = spans.iter().map(|s| (s.1, s.2)).collect();
            let free = |a, b| !self.reading_any(url, a, b);
            let merge_max = self.config.merge_max.min(self.config.max_body);
            for run in coalesce(&offsets, self.config.merge_gap, merge_max, &free) {
                let members = run.members.iter().map(|&(k, at)| (spans[k].0, at, Some(offsets[k].1))).collect();
                jobs.push((url.into(), ByteRange::Range { offset: run.offset, len: run.len }, members));
            }
        }
        let mut fetches = stream::iter(jobs.into_iter().map(|(url, range, members)| async move {
            let got = self.read(c, &url, range).await;
            (url, range, got, members)
        }))
        .buffer_unordered(CONCURRENCY);
        while let Some((url, range, got, members)) = fetches.next().await {
            let fetched = match got {
                Ok(Some(f)) => f,
                // The object went missing (or the read failed): every span of it says so.
                Ok(None) => {
                    members.iter().try_for_each(|m| each(m.0, Ok(None)))?;
                    continue;
                }
                Err(e) => {
                    members.iter().try_for_each(|m| each(m.0, Err(e.clone())))?;
                    continue;
                }
            };
            let n = members.len() as u64;
            self.count(|s| {
                s.spans += n;
                s.merged_requests += u64::from(n > 1);
            });
            let single =
                members.len() == 1 && members[0].1 == 0 && members[0].2.is_none_or(|n| n == fetched.bytes.len() as u64);
            let bytes = Rc::new(fetched.bytes);
            if let ByteRange::Range { offset, len } = range {
                let asked: u64 = members.iter().filter_map(|m| m.2).sum();
                if asked < len {
                    // The gaps may hold spans asked for a moment later (a viewer's next tiles).
                    self.hold(&url, offset, bytes.clone());
                }
            }
            let mut whole = Some(bytes);
            for (i, at, len) in members {
                let piece = match (single, len) {
                    // The answer is this span: hand the buffer over (no copy unless held).
                    (true, _) | (_, None) => whole
                        .take()
                        .map(|b| Rc::try_unwrap(b).unwrap_or_else(|kept| (*kept).clone()))
                        .unwrap_or_default(),
                    (false, Some(n)) => match whole.as_ref().and_then(|b| b.get(at as usize..(at + n) as usize)) {
                        Some(p) => p.to_vec(),
                        None => {
                            each(i, Err(short(&url, "short read")))?;
                            continue;
                        }
                    },
                };
                each(i, Ok(Some(piece)))?;
            }
        }
        Ok(())
    }

    /// A value computed from the object at `url` by an upper layer (a decoded shard index),
    /// under that layer's `key`: cached within the byte budget (`size` of it), and computed
    /// once however many callers want it at the same time.
    pub async fn memo<C, V, F, Fut>(
        &self,
        c: &C,
        url: &str,
        key: Vec<u64>,
        size: fn(&V) -> usize,
        work: F,
    ) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        let key: Key = (url.to_string(), Slot::Derived(key));
        let cached = self.cache.borrow_mut().get(&key);
        if let Some(Entry::Derived(v)) = cached {
            if let Ok(v) = v.downcast::<V>() {
                self.count(|s| s.memo_hits += 1);
                return Ok(v);
            }
        }
        let compute = || async {
            let v = work().await?;
            self.count(|s| s.memo_fills += 1);
            let n = size(&v);
            let v: Rc<dyn Any> = Rc::new(v);
            self.cache.borrow_mut().put(key.clone(), Entry::Derived(v.clone()), n);
            Ok(v)
        };
        let v = self.memos.run(key.clone(), || c.is_aborted(), compute).await?;
        v.downcast::<V>()
            .map_err(|_| Error::new(ErrorCode::CorruptShard, format!("{url}: cached value of another type")))
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
                let r = self.send(c, Method::Get, url, None, None).await?;
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
            ByteRange::Range { offset, len } => self.read_range(c, url, offset, len, false).await,
            ByteRange::Suffix(0) | ByteRange::Tail(0) | ByteRange::Head(0) => {
                Ok(Some(RangeRead { bytes: Vec::new(), object_size: None }))
            }
            ByteRange::Suffix(n) => self.read_suffix(c, url, n, false).await,
            ByteRange::Tail(n) => self.read_suffix(c, url, n, true).await,
            ByteRange::Head(n) => self.read_range(c, url, 0, n, true).await,
        }
    }

    /// The last `n` bytes: a suffix range, or (for servers that mishandle those) HEAD for the
    /// size, then an explicit range. `at_most`: the whole object when it is shorter.
    async fn read_suffix<C: HttpClient>(&self, c: &C, url: &str, n: u64, at_most: bool) -> Result<Option<RangeRead>> {
        let whole_range = if at_most { ByteRange::Tail(n) } else { ByteRange::Suffix(n) };
        let mut wrong = 0;
        while !self.no_suffix.get() {
            let r = self.send(c, Method::Get, url, Some((format!("bytes=-{n}"), n)), None).await?;
            match classify(url, r.status, self.config.treat403_as_missing)? {
                Status::Missing => return Ok(None),
                Status::Whole => return self.keep_whole(url, r.body, whole_range).map(Some),
                Status::Partial => {
                    if let Some((a, b, Some(total))) = r.content_range.as_deref().and_then(parse_content_range) {
                        if total < n && !at_most {
                            return Err(short(
                                url,
                                &format!("object has {total} bytes, fewer than the last {n} asked for"),
                            ));
                        }
                        // The last `n` bytes, or (a tail) the whole of a shorter object.
                        let want = n.min(total);
                        let end = b.checked_add(1);
                        if end == Some(total)
                            && end.and_then(|e| e.checked_sub(a)) == Some(want)
                            && r.body.len() as u64 == want
                        {
                            return Ok(Some(RangeRead { bytes: r.body, object_size: Some(total) }));
                        }
                        // Asked once more, then an error: never data.
                        wrong += 1;
                        if wrong >= 2 {
                            return Err(short(url, "suffix range answer does not match the request (twice)"));
                        }
                        self.count(|s| s.retries += 1);
                        continue;
                    }
                    // 206 without a readable Content-Range: where those bytes sit is unknown.
                }
                Status::Refused => {}
            }
            self.no_suffix.set(true);
        }
        let h = self.send(c, Method::Head, url, None, None).await?;
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
        if size < n && !at_most {
            return Err(short(url, &format!("object has {size} bytes, fewer than the last {n} asked for")));
        }
        let n = n.min(size);
        if n == 0 {
            return Ok(Some(RangeRead { bytes: Vec::new(), object_size: Some(size) }));
        }
        let f = self.read_range(c, url, size - n, n, false).await?;
        Ok(f.map(|f| RangeRead { bytes: f.bytes, object_size: Some(size) }))
    }

    /// `len` bytes at `offset`; `at_most` (a head read, at 0): fewer when the object ends sooner,
    /// the answer's length its end unless a visible `Content-Range` says otherwise.
    async fn read_range<C: HttpClient>(&self, c: &C, url: &str, offset: u64, len: u64, at_most: bool) -> Result<Option<RangeRead>> {
        let last = offset.checked_add(len - 1).ok_or_else(|| short(url, "range overflows"))?;
        let range = if at_most { ByteRange::Head(len) } else { ByteRange::Range { offset, len } };
        // An answer that is not the range asked for is asked for once more, then an error:
        // never data.
        let mut tries = 0;
        loop {
            tries += 1;
            let r = self.send(c, Method::Get, url, Some((format!("bytes={offset}-{last}"), len)), at_most.then_some(len)).await?;
            let wrong = match classify(url, r.status, self.config.treat403_as_missing)? {
                Status::Missing => return Ok(None),
                Status::Whole => return self.keep_whole(url, r.body, range).map(Some),
                Status::Partial => {
                    // A Content-Range the client can see must name exactly the bytes asked for
                    // (where a browser hides it, the body's length is all there is to check).
                    let got = r.body.len() as u64;
                    let end = if at_most && got < len { got } else { len };
                    let cr = r.content_range.as_deref().map(|v| (v, parse_content_range(v)));
                    match cr {
                        Some((v, None)) => format!("malformed Content-Range \"{v}\""),
                        Some((_, Some((a, b, total))))
                            // Counted from `offset`: no sum that could overflow.
                            if a != offset
                                || b.checked_sub(a).and_then(|d| d.checked_add(1)) != Some(end)
                                || total.is_some_and(|t| t.checked_sub(offset).is_none_or(|r| r < end || (end < len && r != end))) =>
                        {
                            format!("asked for bytes {offset}-{last}, the answer says {a}-{b}/{}", total.map_or("*".into(), |t| t.to_string()))
                        }
                        _ if got != end || got == 0 => format!("asked for {len} bytes at {offset}, got {got}"),
                        _ => {
                            let size = cr.and_then(|c| c.1).and_then(|c| c.2).or((end < len).then_some(end));
                            return Ok(Some(RangeRead { bytes: r.body, object_size: size }));
                        }
                    }
                }
                // An empty object has no first byte to give.
                Status::Refused if r.status == 416 && at_most => {
                    return Ok(Some(RangeRead { bytes: Vec::new(), object_size: Some(0) }))
                }
                Status::Refused if r.status == 416 => {
                    return Err(short(url, &format!("bytes {offset}-{last} lie beyond the end of the object")))
                }
                Status::Refused => return Err(http_error(url, r.status)),
            };
            if tries >= 2 {
                return Err(short(url, &format!("{wrong} (twice)")));
            }
            self.count(|s| s.retries += 1);
        }
    }

    /// A span longer than `maxDecodedBytes` is not asked for (an index entry claiming a
    /// terabyte would otherwise be one request downloading until the limit).
    fn check_len(&self, url: &str, offset: u64, len: u64) -> Result<()> {
        if len <= self.config.max_body {
            return Ok(());
        }
        let what = format!("{url}: the {len}-byte span at {offset}");
        Err(too_large(&what, len, self.config.max_body, "maxDecodedBytes"))
    }

    /// A 200 answer to a ranged request: the server ignores Range. Slice it, and keep it for
    /// later reads of this object.
    fn keep_whole(&self, url: &str, body: Vec<u8>, range: ByteRange) -> Result<RangeRead> {
        self.range_ignored.set(true);
        let f = slice_whole(url, &body, range)?;
        self.keep(url, body);
        Ok(f)
    }

    /// Keep a whole object: in the cache within its budget, and for the batches under way.
    fn keep(&self, url: &str, body: Vec<u8>) -> Rc<Vec<u8>> {
        let n = body.len();
        let body = Rc::new(body);
        self.cache.borrow_mut().put((url.to_string(), Slot::Object), Entry::Object(body.clone()), n);
        if self.pins.get() > 0 {
            self.pinned.borrow_mut().insert(url.to_string(), body.clone());
        }
        *self.last_whole.borrow_mut() = Some((url.to_string(), body.clone()));
        body
    }

    /// Hold the answer to a merged read (`bytes` from `offset`) whose gaps hold bytes nobody
    /// asked for yet: a later read inside it needs no request.
    fn hold(&self, url: &str, offset: u64, bytes: Rc<Vec<u8>>) {
        let n = bytes.len();
        self.cache.borrow_mut().put((url.to_string(), Slot::Held(offset)), Entry::Held(bytes), n);
    }

    /// Whether a range read under way covers `len` bytes at `offset` of `url`.
    fn reading(&self, url: &str, offset: u64, len: u64) -> bool {
        let end = offset.saturating_add(len);
        self.reads.any(|(u, start, n)| u == url && *start <= offset && end <= start.saturating_add(*n))
    }

    /// Whether a range read under way holds any of the bytes `[a, b)` of `url`.
    fn reading_any(&self, url: &str, a: u64, b: u64) -> bool {
        self.reads.any(|(u, start, n)| u == url && *start < b && a < start.saturating_add(*n))
    }

    /// `len` bytes at `offset` of `url` from a held merged read, if one holds them. Held reads
    /// may overlap (a later, smaller one inside an earlier one): any starting up to `merge_max`
    /// before `offset` may cover it.
    fn held(&self, url: &str, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let lo = (url.to_string(), Slot::Held(offset.saturating_sub(self.config.merge_max)));
        let hi = (url.to_string(), Slot::Held(offset));
        let covers = |k: &Key, v: &Entry| match (&k.1, v) {
            (Slot::Held(start), Entry::Held(b)) => start.saturating_add(b.len() as u64) >= end,
            _ => false,
        };
        let (key, value) = self.cache.borrow_mut().find_below(&lo, &hi, covers)?;
        let ((_, Slot::Held(start)), Entry::Held(bytes)) = (key, value) else { return None };
        let from = usize::try_from(offset - start).ok()?;
        Some(bytes.get(from..from.checked_add(usize::try_from(len).ok()?)?)?.to_vec())
    }
}

impl Objects for Store {
    fn max_body(&self) -> u64 {
        self.config.max_body
    }
    fn max_document(&self) -> u64 {
        self.config.max_document
    }
    async fn read_object<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        Store::read_object(self, c, url, range).await
    }
    async fn read_object_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        Store::read_object_document(self, c, url, limit).await
    }
    async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        Store::memo(self, c, url, key, size, work).await
    }
}

fn http_error(url: &str, status: u16) -> Error {
    Error::new(ErrorCode::HttpError, format!("{url}: HTTP {status}")).with_status(status)
}

fn slice_whole(url: &str, whole: &[u8], range: ByteRange) -> Result<RangeRead> {
    let size = whole.len() as u64;
    let (a, b) = match range {
        ByteRange::Full => (0, size),
        ByteRange::Range { offset, len } => (offset, offset.saturating_add(len)),
        ByteRange::Suffix(n) => {
            if n > size {
                return Err(short(url, &format!("object has {size} bytes, fewer than the last {n} asked for")));
            }
            (size - n, size)
        }
        ByteRange::Tail(n) => (size - n.min(size), size),
        ByteRange::Head(n) => (0, n.min(size)),
    };
    if b > size {
        return Err(short(url, &format!("bytes {a}..{b} lie beyond the end of the {size}-byte object")));
    }
    Ok(RangeRead { bytes: whole[a as usize..b as usize].to_vec(), object_size: Some(size) })
}
