//! [`Store`]: the bytes of a node's keys, through its layers (each kind placing a key in the
//! object it reads, a range of a range composed by [`inside`]) down to the transport; and
//! [`Below`], what one layer reads through.
use crate::core::error::{Error, Result};
use crate::core::transport::{self, ByteRange, Config, HeldWhole, HttpClient, Objects, Pin, RangeRead, Stats, Transport};
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin as Pinned;
use super::consolidated::Known;
use super::kind::Container;
use super::naming;
use super::place::{inside, Inside};
use super::registry::Layer;
use super::stack::Stack;

/// Byte reads of the keys of one node's store: through its layers to the transport.
pub struct Store {
    transport: Transport,
    pub(super) stack: RefCell<Stack>,
    /// Documents known without a request (a group's consolidated metadata).
    known: RefCell<Option<Rc<Known>>>,
}

/// Where a range of a key is, resolved through the layers.
enum Resolved {
    /// `range` of the transport's object at `url`, whose size is `size` when a layer knows it.
    Object { url: String, range: ByteRange, size: Option<u64> },
    Bytes(RangeRead),
    Missing,
}

type Boxed<'a, T> = Pinned<Box<dyn Future<Output = Result<T>> + 'a>>;

impl Store {
    /// A store of plain objects.
    pub fn new(config: Config) -> Self {
        Store::over(Transport::new(config), Stack::default())
    }

    /// A store reading through `stack` over `transport` (whose versions it then shares).
    pub fn over(mut transport: Transport, mut stack: Stack) -> Self {
        transport.share_last_whole(stack.last_whole.clone());
        match &stack.versions {
            Some(v) => transport.share_versions(v.clone()),
            None => stack.versions = Some(transport.versions()),
        }
        Store { transport, stack: RefCell::new(stack), known: RefCell::new(None) }
    }

    /// The generation of the objects this store reads: it moves on whenever one changes.
    pub fn generation(&self) -> u64 {
        self.transport.versions().generation()
    }

    /// The versions of the objects this store reads.
    pub fn versions(&self) -> Rc<crate::core::transport::Versions> {
        self.transport.versions()
    }

    /// The stamp of the object at `url` as seen through the first `depth` layers: its epoch, or
    /// inside a layer the tree's generation.
    fn stamp_at(&self, depth: usize, url: &str) -> u64 {
        self.transport.stamp(url, self.layer_of(depth, url).is_some())
    }

    /// With `recheck` after a time: ask whether the object at `url` (or, inside layers, the one
    /// the outermost layer reads) changed, when that was last confirmed too long ago.
    pub async fn revalidate<C: HttpClient>(&self, c: &C, url: &str) {
        let outer = self.stack.borrow().layers.first().filter(|l| l.key(url).is_some()).map(|l| l.version_url());
        match outer {
            Some(Some(o)) => self.transport.revalidate(c, &o).await,
            Some(None) => {}
            None => self.transport.revalidate(c, url).await,
        }
    }

    /// `work` run once for `url` and `key`, however many callers want it at the same time (see
    /// [`Transport::once`]).
    pub fn once<'a, C: HttpClient>(
        &'a self,
        c: &'a C,
        url: &'a str,
        key: Vec<u64>,
        work: &'a dyn Fn() -> transport::Computed<'a>,
    ) -> Pinned<Box<dyn Future<Output = Result<Rc<dyn Any>>> + 'a>> {
        self.transport.once(c, url, key, work)
    }

    /// Whether the object at `url` was last confirmed longer ago than `recheck` allows.
    pub fn stale<C: HttpClient>(&self, c: &C, url: &str) -> bool {
        self.transport.versions().stale(url, c.now())
    }

    pub fn config(&self) -> &Config {
        self.transport.config()
    }
    /// Share the page's budget (see `transport::cache::Pool`).
    pub fn join(&self, pool: &Rc<crate::core::transport::cache::Pool>) {
        self.transport.join(pool)
    }
    pub fn stats(&self) -> Stats {
        self.transport.stats()
    }
    /// Whether the server answered a ranged request with the whole object.
    pub fn range_ignored(&self) -> bool {
        self.transport.range_ignored()
    }
    /// Whether anything about the object at `url` is cached (its index, bytes, absence), as of
    /// its current version.
    pub fn knows(&self, url: &str) -> bool {
        self.transport.knows(url, self.stamp_at(self.depth(), url))
    }
    /// Drop everything cached about the object at `url`.
    pub fn forget(&self, url: &str) {
        self.transport.forget(url)
    }
    /// Hold whole objects for the batch of reads under way until the guard is dropped.
    pub fn pin(&self) -> Pin {
        self.transport.pin()
    }

    /// The layers, outermost first (cloned: cheap).
    pub fn stack(&self) -> Stack {
        self.stack.borrow().clone()
    }

    /// Lay documents known without a request over this store (from now on).
    pub fn set_known(&self, known: Option<Rc<Known>>) {
        *self.known.borrow_mut() = known;
    }
    pub fn known(&self) -> Option<Rc<Known>> {
        self.known.borrow().clone()
    }

    /// The innermost of the first `depth` layers holding `url`, with its key there.
    fn layer_of<'u>(&self, depth: usize, url: &'u str) -> Option<(usize, Layer, &'u str)> {
        let stack = self.stack.borrow();
        (0..depth.min(stack.layers.len())).rev().find_map(|i| Some((i, stack.layers[i].clone(), stack.layers[i].key(url)?)))
    }

    pub(super) fn depth(&self) -> usize {
        self.stack.borrow().layers.len()
    }

    /// Where `range` of `url` is, through the first `depth` layers.
    fn resolve<'a, C: HttpClient>(&'a self, c: &'a C, depth: usize, url: &'a str, range: ByteRange) -> Boxed<'a, Resolved> {
        Box::pin(async move {
            let Some((i, layer, key)) = self.layer_of(depth, url) else {
                return Ok(Resolved::Object { url: String::from(url), range, size: None });
            };
            if let Some(whole) = self.transport.whole_held(url, self.stamp_at(depth, url)) {
                return transport::range::slice(url, &whole, range).map(Resolved::Bytes);
            }
            let place = layer.place(&Below { store: self, depth: i }, c, key).await.map_err(|e| e.at(url))?;
            Ok(match inside(url, place, range)? {
                Inside::Missing => Resolved::Missing,
                Inside::Bytes(b) => Resolved::Bytes(b),
                Inside::Range { url: outer, range, size } => match self.resolve(c, i, &outer, range).await? {
                    Resolved::Object { url, range, size: s } => Resolved::Object { url, range, size: size.or(s) },
                    Resolved::Bytes(b) => Resolved::Bytes(RangeRead { object_size: size.or(b.object_size), bytes: b.bytes }),
                    Resolved::Missing => Resolved::Missing,
                },
            })
        })
    }

    /// `range` of the object at `url` through the first `depth` layers.
    async fn read_at<C: HttpClient>(&self, c: &C, depth: usize, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        match self.resolve(c, depth, url, range).await? {
            Resolved::Missing => Ok(None),
            Resolved::Bytes(b) => Ok(Some(b)),
            Resolved::Object { url: outer, range, size } => {
                let got = self.transport.read(c, &outer, range).await.map_err(|e| e.at(url))?;
                Ok(got.map(|r| RangeRead { object_size: size.or(r.object_size), bytes: r.bytes }))
            }
        }
    }

    /// Read `range` of the object at `url`; `None` when it does not exist.
    pub async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        self.revalidate(c, url).await;
        self.read_at(c, self.depth(), url, range).await
    }

    /// A whole small object (a metadata document) of at most `limit` bytes; `None` when absent.
    pub async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let known = self.known.borrow().as_ref().and_then(|k| k.get(url));
        if let Some(known) = known {
            return Ok(known.map(|d| d.to_vec()));
        }
        if self.layer_of(self.depth(), url).is_some() {
            self.revalidate(c, url).await;
        }
        self.read_document_at(c, self.depth(), url, limit).await
    }

    /// The document at `url` read again from its object (not from a group's consolidated
    /// metadata, nor a copy cached here).
    pub async fn read_document_fresh<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        match self.layer_of(self.depth(), url) {
            None => self.transport.forget(url),
            Some(_) => self.revalidate(c, url).await,
        }
        self.read_document_at(c, self.depth(), url, limit).await
    }

    async fn read_document_at<C: HttpClient>(&self, c: &C, depth: usize, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        if self.layer_of(depth, url).is_none() {
            return self.transport.read_document(c, url, limit).await;
        }
        let got = self.read_at(c, depth, url, ByteRange::Full).await?;
        if let Some(r) = &got {
            if r.bytes.len() as u64 > limit {
                let what = alloc::format!("{url}: the document");
                return Err(crate::core::error::too_large(&what, r.bytes.len() as u64, limit, "maxMetadataBytes"));
            }
        }
        Ok(got.map(|r| r.bytes))
    }

    /// Read many spans (`ByteRange::Range` or `Full`) of keys with as few requests as possible,
    /// handing each to `each` as its bytes arrive (`None`: absent; `early`: see
    /// `Transport::read_spans`). Spans of keys inside layers
    /// become spans of the outermost objects holding them, merged there as any spans are (the
    /// neighbouring entries of a stored zip like a shard's chunks); an error names the key.
    pub async fn read_spans<C: HttpClient>(
        &self,
        c: &C,
        wanted: &[(String, ByteRange)],
        early: bool,
        mut each: impl FnMut(usize, Result<Option<Vec<u8>>>) -> Result<()>,
    ) -> Result<()> {
        if self.depth() == 0 {
            return self.transport.read_spans(c, wanted, early, each).await;
        }
        if let Some((url, _)) = wanted.first() {
            self.revalidate(c, url).await;
        }
        let mut outer: Vec<(String, ByteRange)> = Vec::new();
        let mut from: Vec<usize> = Vec::new();
        for (i, (url, range)) in wanted.iter().enumerate() {
            match self.resolve(c, self.depth(), url, *range).await {
                Ok(Resolved::Object { url: o, range, .. }) => {
                    outer.push((o, range));
                    from.push(i);
                }
                Ok(Resolved::Bytes(b)) => each(i, Ok(Some(b.bytes)))?,
                Ok(Resolved::Missing) => each(i, Ok(None))?,
                Err(e) => each(i, Err(e.at(url)))?,
            }
        }
        self.transport.read_spans(c, &outer, early, |k, got| each(from[k], got.map_err(|e| e.at(&wanted[from[k]].0)))).await
    }

    /// Read the whole object at `url` once and serve every read of it from those bytes while
    /// the guard lives. `None` when that did not work: reads then go their usual way. `most`:
    /// the bytes it plausibly has at most (an HTTP answer running longer is cut there).
    pub async fn hold_whole<C: HttpClient>(&self, c: &C, url: &str, most: Option<u64>) -> Option<HeldWhole> {
        if self.layer_of(self.depth(), url).is_none() {
            return self.transport.hold_whole(c, url, most).await;
        }
        let stamp = self.stamp_at(self.depth(), url);
        if let Some(g) = self.transport.held_again(url, stamp) {
            return Some(g);
        }
        // A key inside a layer: its whole range (or bytes), however large it is — held as of the
        // version its read began with.
        match self.read(c, url, ByteRange::Full).await {
            Ok(Some(r)) if most.is_none_or(|m| r.bytes.len() as u64 <= m) && self.stamp_at(self.depth(), url) == stamp => {
                self.transport.hold(url, r.bytes, stamp)
            }
            _ => None,
        }
    }

    /// A value computed from the object at `url` by an upper layer (a decoded shard index),
    /// cached within the byte budget and computed once however many want it at the same time.
    pub async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        self.memo_at(c, self.depth(), url, key, size, work).await
    }

    /// [`Store::memo`] seen through the first `depth` layers.
    async fn memo_at<C, V, F, Fut>(&self, c: &C, depth: usize, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        self.revalidate(c, url).await;
        let tree = self.layer_of(depth, url).is_some();
        self.transport.memo_at(c, url, tree, key, size, work).await
    }

    /// The innermost layer: the one every node opened through this store is in.
    fn innermost(&self) -> Option<(usize, Layer)> {
        let stack = self.stack.borrow();
        Some((stack.layers.len().checked_sub(1)?, stack.layers.last()?.clone()))
    }

    /// The decoders kept outside the module that its layers need to read keys.
    pub fn decoders(&self) -> Vec<&'static str> {
        self.stack.borrow().layers.iter().flat_map(|l| l.decoders().iter().copied()).collect()
    }

    /// Whether the chunks of its nodes share objects whatever key holds them (see
    /// [`Kind::keys_share_objects`](super::Kind::keys_share_objects)).
    pub fn keys_share_objects(&self) -> bool {
        self.innermost().is_some_and(|(_, l)| l.keys_share_objects())
    }

    /// What holds its nodes (the innermost layer), as the API reports it.
    pub async fn container<C: HttpClient>(&self, c: &C) -> Option<Container> {
        let (i, layer) = self.innermost()?;
        Some(layer.describe(&Below { store: self, depth: i }, c).await)
    }

    /// Put an error's URLs as the pipeline that reads them names them.
    pub fn name_error(&self, e: Error) -> Error {
        naming::name_error(&self.stack.borrow().layers, e)
    }

    /// The URL of an object inside stacked layers as a pipeline (`a.zip|zip:inner.zip|zip:raw`).
    pub fn display(&self, url: &str) -> String {
        naming::display(&self.stack.borrow().layers, url)
    }

    /// The URL of a node inside stacked layers as a pipeline (its root: `a.zip|zip:inner.zip|zip:`).
    pub fn display_node(&self, url: &str) -> String {
        naming::display_node(&self.stack.borrow().layers, url)
    }
}

/// A store seen from one of its layers: the objects of the layers below it.
pub struct Below<'a> {
    pub(super) store: &'a Store,
    pub(super) depth: usize,
}

impl Objects for Below<'_> {
    fn max_body(&self) -> u64 {
        self.store.config().max_body
    }
    fn max_document(&self) -> u64 {
        self.store.config().max_document
    }
    fn stamp(&self, url: &str) -> u64 {
        self.store.stamp_at(self.depth, url)
    }
    fn described_by(&self, target: &str, by: &str) {
        self.store.versions().described_by(target, by)
    }
    fn immutable(&self, prefix: &str) {
        self.store.versions().immutable(prefix)
    }
    async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        self.store.read_at(c, self.depth, url, range).await
    }
    async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let read: Boxed<'_, Option<Vec<u8>>> = Box::pin(self.store.read_document_at(c, self.depth, url, limit));
        read.await
    }
    async fn memo<C, V, F, Fut>(&self, c: &C, url: &str, key: Vec<u64>, size: fn(&V) -> usize, work: F) -> Result<Rc<V>>
    where
        C: HttpClient,
        V: Any,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V>>,
    {
        self.store.memo_at(c, self.depth, url, key, size, work).await
    }
}

/// The store itself, as a kind reads what lies beneath it (in tests: a kind over a store).
impl Objects for Store {
    fn max_body(&self) -> u64 {
        self.config().max_body
    }
    fn max_document(&self) -> u64 {
        self.config().max_document
    }
    fn stamp(&self, url: &str) -> u64 {
        self.stamp_at(self.depth(), url)
    }
    fn described_by(&self, target: &str, by: &str) {
        self.versions().described_by(target, by)
    }
    fn immutable(&self, prefix: &str) {
        self.versions().immutable(prefix)
    }
    async fn read<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>> {
        Store::read(self, c, url, range).await
    }
    async fn read_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        Store::read_document(self, c, url, limit).await
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
