//! Transport: the bytes of HTTP objects. The [`HttpClient`] seam; byte ranges and the fallbacks
//! real servers need ([`fallback`]); retries ([`retry`]); in-flight sharing ([`dedup`]);
//! coalescing of spans wanted together ([`spans`], [`coalesce`]), handed out as they arrive
//! ([`streamed`]); the request limiter and the
//! budget of bytes in flight ([`limit`]), requests waiting there merged ([`dispatch`]); the
//! byte-bounded cache ([`cache`]) and what holds whole objects ([`wholes`]); the version of
//! every object read ([`versions`]): everything cached is stamped with it and served only while
//! it holds; counters. Knows nothing of what the objects hold: no store kind, no format.
//!
//! May import: `error`, `nd`, `json`, `zstd`, `crc`, `urls`, `bytes`.
//!
//! (The layers, bottom up: error and nd, transport, store, metadata, codec, shard, layout,
//! read, open; each imports only those below it, see `core`.)
pub mod cache;
pub mod coalesce;
mod config;
pub mod dedup;
pub mod dispatch;
mod fallback;
pub mod http;
pub mod limit;
pub mod memory;
pub mod objects;
pub mod range;
mod retry;
mod spans;
mod streamed;
pub mod vecmap;
pub mod versions;
mod whole_reads;
pub mod wholes;

pub use config::{Config, Retry, Stats};
pub use http::{ByteRange, CacheMode, Condition, HttpClient, Method, Request, Response};
pub use versions::{Conditional, Recheck, Versions};
pub use objects::Objects;
pub use range::{within, RangeRead};
pub use wholes::{HeldWhole, LastWhole, Pin};

use cache::Lru;
use dedup::Dedup;
use http::{classify, Status};
use limit::Budget;
use crate::core::error::{Error, ErrorCode, Result};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::any::Any;
use core::cell::{Cell, RefCell};
use core::future::Future;

/// A memo's value being computed, with its size in bytes.
pub type Computed<'a> = core::pin::Pin<Box<dyn Future<Output = Result<(Rc<dyn Any>, usize)>> + 'a>>;

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

/// A key's kind of entry in the page's budget: 0 derived values (indexes, directories),
/// 1 held merged reads, 2 whole objects and absences.
fn kind_of(k: &Key) -> usize {
    match k.1 {
        Slot::Derived(_) => 0,
        Slot::Held(_) => 1,
        Slot::Object => 2,
    }
}

/// Memo keys of the transport's own work ([`Transport::once`] callers use their own).
const CHECK: u64 = 0x7665_7200;

/// Byte reads of HTTP objects, for the nodes of one open (the store above it decides which
/// objects hold which keys).
pub struct Transport {
    config: Config,
    /// Entries stamped with their object's epoch (or, for keys inside layers, the tree's
    /// generation) when what they were made from was read: served only while it is current.
    cache: Rc<RefCell<Lru<Key, (Entry, u64)>>>,
    /// Computations under way, by key and stamp (one under an older stamp is not joined).
    memos: Dedup<(Key, u64), Rc<dyn Any>>,
    /// Range reads under way: a read inside one of them waits for it instead of asking again.
    reads: Dedup<(String, u64, u64), Option<Rc<RangeRead>>>,
    /// Set once the server mishandled a suffix range: go straight to HEAD + range.
    no_suffix: Cell<bool>,
    /// Set once the server answered a ranged request with the whole object: from then on each
    /// object is downloaded whole once, shared by every read waiting on it.
    range_ignored: Cell<bool>,
    wholes: wholes::Wholes,
    /// Bytes of ranged answers in flight, at most `max_body` together (one larger alone).
    budget: Budget,
    stats: Cell<Stats>,
    versions: Rc<Versions>,
    /// The merged reads under way whose spans are handed out as they arrive.
    streamed: RefCell<Vec<Rc<streamed::Streamed>>>,
}

impl Transport {
    pub fn new(config: Config) -> Self {
        Transport {
            versions: Rc::new(Versions::new(config.recheck, config.conditional)),
            cache: Lru::shared(config.cache_bytes, kind_of),
            budget: Budget::new(config.max_body),
            config,
            memos: Dedup::default(),
            reads: Dedup::default(),
            no_suffix: Cell::new(false),
            range_ignored: Cell::new(false),
            wholes: wholes::Wholes::default(),
            stats: Cell::new(Stats::default()),
            streamed: RefCell::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Share `pool`'s budget with the other caches in it from now on.
    pub fn join(&self, pool: &Rc<cache::Pool>) {
        Lru::join(&self.cache, pool);
    }

    /// The versions this transport checks answers against (shared with the transports of the
    /// nodes opened from one another).
    pub fn versions(&self) -> Rc<Versions> {
        self.versions.clone()
    }

    /// Check answers against `versions` (a parent's) from now on.
    pub fn share_versions(&mut self, versions: Rc<Versions>) {
        self.versions = versions;
    }

    /// The current stamp of `url`: its epoch, or for a key inside a layer (`tree`) the tree's
    /// generation.
    pub fn stamp(&self, url: &str, tree: bool) -> u64 {
        if tree {
            self.versions.generation()
        } else {
            self.versions.epoch(url)
        }
    }

    /// The cache's entry at `key` if its stamp is `stamp` (an older one is dropped).
    fn cached(&self, key: &Key, stamp: u64) -> Option<Entry> {
        let mut cache = self.cache.borrow_mut();
        match cache.get(key)? {
            (e, s) if s == stamp => Some(e),
            _ => {
                cache.remove(key);
                None
            }
        }
    }

    /// Cache `entry` at `key`, made from what was read under `stamp`, if that is still current.
    fn put(&self, key: Key, entry: Entry, stamp: u64, tree: bool, size: usize) {
        if self.stamp(&key.0, tree) == stamp {
            self.cache.borrow_mut().put(key, (entry, stamp), size);
        }
    }

    /// With `recheck` after a time: when what is known of the object at `url` was last
    /// confirmed too long ago, ask once (`HEAD`; shared by the reads wanting it) whether it is
    /// still that version. A change found is recorded (what was derived from it is dropped);
    /// a server that does not answer `HEAD` leaves the cached bytes of the object to be read
    /// again instead.
    pub async fn revalidate<C: HttpClient>(&self, c: &C, url: &str) {
        if !self.versions.stale(url, c.now()) {
            return;
        }
        let work = || -> Computed<'_> {
            Box::pin(async move {
                let r = self.send(c, http::Method::Head, url, None, None).await;
                if let Ok(r) = &r {
                    self.count(|s| s.revalidations += 1);
                    if classify(url, r.status, self.config.treat403_as_missing).is_ok() {
                        return Ok((Rc::new(()) as Rc<dyn Any>, 0));
                    }
                }
                // (A change was recorded by the answer; otherwise the cached bytes go.)
                if r.as_ref().err().is_none_or(|e| e.code != ErrorCode::Changed) {
                    self.forget(url);
                }
                Ok((Rc::new(()) as Rc<dyn Any>, 0))
            })
        };
        // One check of the version confirmed at that time, however many reads want it.
        let at = self.versions.checked(url).map_or(0, f64::to_bits);
        let _ = self.once(c, url, alloc::vec![CHECK, at], &work).await;
    }

    /// `work` run once for `url` and `key` (not counted among the memos), however many callers
    /// want it at the same time; its value cached like a memo's.
    pub fn once<'a, C: HttpClient>(
        &'a self,
        c: &'a C,
        url: &'a str,
        key: Vec<u64>,
        work: &'a dyn Fn() -> Computed<'a>,
    ) -> core::pin::Pin<Box<dyn Future<Output = Result<Rc<dyn Any>>> + 'a>> {
        self.memo_any(c, url, false, key, work, false)
    }

    pub fn stats(&self) -> Stats {
        let cache = self.cache.borrow();
        Stats { cached_bytes: cache.bytes() as u64, evictions: cache.evicted(), ..self.stats.get() }
    }

    fn count(&self, f: impl FnOnce(&mut Stats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    /// Whether the server answered a ranged request with the whole object.
    pub fn range_ignored(&self) -> bool {
        self.range_ignored.get()
    }

    /// Whether anything about the object at `url` is cached under `stamp` (its index, bytes,
    /// absence).
    pub fn knows(&self, url: &str, stamp: u64) -> bool {
        let lo = (url.to_string(), Slot::Object);
        let cached = self.cache.borrow().entries_from(&lo).take_while(|(k, _)| k.0 == url).any(|(_, (_, s))| *s == stamp);
        cached || self.whole_held(url, stamp).is_some()
    }

    /// Drop everything cached about the object at `url` (its bytes, derived values).
    pub fn forget(&self, url: &str) {
        let lo = (url.to_string(), Slot::Object);
        let mut cache = self.cache.borrow_mut();
        let keys: Vec<Key> = cache.keys_from(&lo).take_while(|k| k.0 == url).cloned().collect();
        keys.iter().for_each(|k| cache.remove(k));
        self.forget_whole(url);
    }

    /// The object at `url` does not exist (as read under `stamp`): one 404 per object, however
    /// many of its indexes or spans are wanted.
    fn missing(&self, url: &str, stamp: u64) {
        self.put((url.to_string(), Slot::Object), Entry::Missing, stamp, false, url.len() + 64);
    }

    /// A whole small object (a metadata document) of at most `limit` bytes; `None` when absent.
    pub async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        // A copy confirmed too long ago is read again (one GET: no HEAD first).
        if self.versions.stale(url, c.now()) {
            self.forget(url);
        }
        let stamp = self.stamp(url, false);
        match self.cached(&(url.to_string(), Slot::Object), stamp) {
            Some(Entry::Object(whole)) => return Ok(Some(whole.to_vec())),
            Some(Entry::Missing) => return Ok(None),
            _ => {}
        }
        let r = self.send_limited(c, http::Method::Get, url, None, Some((limit, "maxMetadataBytes"))).await?;
        match classify(url, r.status, self.config.treat403_as_missing)? {
            Status::Missing => {
                self.missing(url, stamp);
                Ok(None)
            }
            Status::Whole | Status::Partial => Ok(Some(r.body)),
            Status::Refused => Err(http::http_error(url, r.status)),
        }
    }

    /// Read `range` of the object at `url`; `None` when it does not exist.
    pub async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        self.revalidate(c, url).await;
        let stamp = self.stamp(url, false);
        if let Some(Entry::Missing) = self.cached(&(url.to_string(), Slot::Object), stamp) {
            return Ok(None);
        }
        if let Some(whole) = self.whole_held(url, stamp) {
            return range::slice(url, &whole, range).map(Some);
        }
        if self.range_ignored.get() {
            return match self.whole(c, url).await? {
                Some(w) => range::slice(url, &w, range).map(Some),
                None => {
                    self.missing(url, stamp);
                    Ok(None)
                }
            };
        }
        if let ByteRange::Range { offset, len } = range {
            if let Some(bytes) = self.held_range(url, offset, len, stamp) {
                return Ok(Some(RangeRead { bytes, object_size: None }));
            }
            self.check_len(url, offset, len)?;
        }
        let got = match range {
            ByteRange::Range { offset, len } if len > 0 => self.shared_range(c, url, offset, len).await?,
            _ => self.fetch(c, url, range).await?,
        };
        if got.is_none() {
            self.missing(url, stamp);
        }
        Ok(got)
    }

    /// A value computed from the object at `url` by an upper layer (a decoded shard index),
    /// under that layer's `key`: cached within the byte budget (`size` of it), and computed
    /// once however many callers want it at the same time.
    pub async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        self.revalidate(c, url).await;
        self.memo_at(c, url, false, key, size, work).await
    }

    /// [`memo`](Self::memo) of a value stamped as `tree` says (see [`Transport::stamp`]).
    pub async fn memo_at<C, V, F, Fut>(&self, c: &C, url: &str, tree: bool, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        let work = || -> Computed<'_> {
            let f = work();
            Box::pin(async move {
                let v = f.await?;
                let n = size(&v);
                Ok((Rc::new(v) as Rc<dyn Any>, n))
            })
        };
        let v = self.memo_any(c, url, tree, key, &work, true).await?;
        v.downcast::<V>().map_err(|_| Error::new(ErrorCode::CorruptShard, format!("{url}: cached value of another type")))
    }

    /// [`memo`](Self::memo) apart from the value's type: one function for every kind of value
    /// (the module carries it once, not once per type).
    #[inline(never)]
    fn memo_any<'a, C: HttpClient>(
        &'a self,
        c: &'a C,
        url: &'a str,
        tree: bool,
        key: Vec<u64>,
        work: &'a dyn Fn() -> Computed<'a>,
        counted: bool,
    ) -> core::pin::Pin<Box<dyn Future<Output = Result<Rc<dyn Any>>> + 'a>> {
        Box::pin(async move {
            let key: Key = (url.to_string(), Slot::Derived(key));
            let stamp = self.stamp(url, tree);
            if let Some(Entry::Derived(v)) = self.cached(&key, stamp) {
                self.count(|s| s.memo_hits += u64::from(counted));
                return Ok(v);
            }
            let compute = || async {
                let (v, n) = work().await?;
                self.count(|s| s.memo_fills += u64::from(counted));
                // (Not kept when its object changed meanwhile: it may mix two versions.)
                self.put(key.clone(), Entry::Derived(v.clone()), stamp, tree, n);
                Ok(v)
            };
            self.memos.run((key.clone(), stamp), || c.is_aborted(), compute).await
        })
    }
}

impl Objects for Transport {
    fn max_body(&self) -> u64 {
        self.config.max_body
    }
    fn max_document(&self) -> u64 {
        self.config.max_document
    }
    fn stamp(&self, url: &str) -> u64 {
        Transport::stamp(self, url, false)
    }
    fn described_by(&self, target: &str, by: &str) {
        self.versions.described_by(target, by)
    }
    fn immutable(&self, prefix: &str) {
        self.versions.immutable(prefix)
    }
    async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        Transport::read(self, c, url, range).await
    }
    async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        Transport::read_document(self, c, url, limit).await
    }
    async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        Transport::memo(self, c, url, key, size, work).await
    }
}
