//! The read path: an [`Array`] of any format — its description, its layout, the store it reads
//! through — and one entry point, [`Array::read`], for chunks and regions: plan, locate every
//! chunk (indexes shared and cached), read their spans together (merged by the store), decode.
//!
//! May import: `error`, `nd`, `json`, `transport`, `store`, `metadata`, `codec`, `shard`, `layout`.
pub mod assemble;
pub mod chunk;
pub mod plan;

pub use chunk::{Chunk, Element, Got, Strings};

use crate::core::codec::{Decoded, Decoders};
use crate::core::error::{checked_bytes, err, too_large, Error, ErrorCode, Result};
use crate::core::json::{self, Value};
use crate::core::layout::{build, Layout};
use crate::core::metadata::{describe, ArrayMetadata, DataType, Documents, Format, Grid};
use crate::core::nd::c_strides;
use crate::core::shard::{locate, ByteSpan, IndexFormat};
use crate::core::store::{Container, Store};
use crate::core::transport::{self, ByteRange, HttpClient, Transport};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use assemble::Assembly;
use core::cell::{Cell, RefCell};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use plan::{Plan, Sel, Want};

/// The memo key of a check of the metadata (see [`Array::verify`]).
const VERIFY: u64 = 0x7665_7201;

/// How many chunks a read locates at once.
const CONCURRENCY: usize = 32;

/// Counters of an array's reads (shared by the scales of one volume).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub store: transport::Stats,
    /// Time spent decoding here (with a clock), in milliseconds.
    pub decode_ms: f64,
}

pub struct Array {
    /// Base URL (no trailing slash, no query); keys are appended to it.
    base: String,
    /// The array's own URL, as reported (the base, except in layouts keyed from a store root).
    url: String,
    /// The query string (a signed URL's token), kept on every request.
    query: String,
    meta: ArrayMetadata,
    layout: Box<dyn Layout>,
    store: Rc<Store>,
    docs: Documents,
    /// Milliseconds from some origin, to time decoding (the core has no clock of its own).
    clock: Option<fn() -> f64>,
    decode_ms: Rc<Cell<f64>>,
    /// The most bytes one decoded chunk, fill or region may take (`maxDecodedBytes`).
    max_decoded: usize,
    /// The decoders kept outside this module, for codecs that need one.
    decoders: Option<Rc<dyn Decoders>>,
    /// The archive holding the array, if one does (as reported).
    container: Option<Container>,
    /// The URL of its metadata document (`zarr.json`, `.zarray`, `info`; empty: unknown), read
    /// again when an object it reads changed: its shape, type and codecs must still be these.
    meta_url: String,
    /// The generation and time (the client's clock) the metadata was last found unchanged at.
    verified: Cell<(u64, Option<f64>)>,
    /// The metadata was found changed: every read fails so (a new open reads the new version).
    outdated: RefCell<Option<Error>>,
}

impl Array {
    /// The array `docs` describe, its keys under `base` (plus `query`), read through `store`.
    pub fn new(base: String, query: String, docs: Documents, store: Rc<Store>) -> Result<Self> {
        let meta = describe(&docs)?;
        let layout = build(&meta)?;
        let decode_ms = Rc::new(Cell::new(0.0));
        let max_decoded = crate::core::error::MAX_DECODED;
        let (decoders, container) = (None, None);
        let url = store.display_node(&base);
        let verified = Cell::new((store.generation(), None));
        Ok(Array {
            url,
            base,
            query,
            meta,
            layout,
            store,
            docs,
            clock: None,
            decode_ms,
            max_decoded,
            decoders,
            container,
            meta_url: String::new(),
            verified,
            outdated: RefCell::new(None),
        })
    }

    /// Its metadata document was read at `url` (see [`Array::verify`]).
    pub fn with_meta_url(mut self, url: &str) -> Self {
        self.meta_url = String::from(url);
        self
    }

    /// Refuse decoded chunks, fills and regions above `bytes` (default 512 MiB).
    pub fn with_max_decoded(mut self, bytes: usize) -> Self {
        self.max_decoded = bytes;
        self
    }

    /// Report `container` as what holds the array.
    pub fn with_container(mut self, container: Option<Container>) -> Self {
        self.container = container;
        self
    }

    /// The archive holding the array, if one does.
    pub fn container(&self) -> Option<&Container> {
        self.container.as_ref()
    }

    /// Decode with `decoders` the codecs that need an external decoder (see [`Array::decoders`]).
    pub fn with_decoders(mut self, decoders: Option<Rc<dyn Decoders>>) -> Self {
        self.decoders = decoders;
        self
    }

    /// The external decoders (see [`crate::core::codec::external`]) reading this array needs,
    /// for every scale of a multi-scale volume (another scale opens without a request).
    pub fn decoders(&self) -> Vec<&'static str> {
        let mut names = self.layout.decoders();
        names.extend(self.store.decoders());
        if let crate::core::metadata::Storage::Precomputed { volume, .. } = &self.meta.storage {
            for s in &volume.scales {
                if let Ok(other) = self.with_scale(s.key.clone()) {
                    names.extend(other.layout.decoders());
                }
            }
        }
        let mut names = crate::core::nd::sorted(names.clone(), &|a, b| names[a] < names[b]);
        names.dedup();
        names
    }

    /// Time decoding with `clock` (milliseconds).
    pub fn with_clock(mut self, clock: Option<fn() -> f64>) -> Self {
        self.clock = clock;
        self
    }

    /// Another scale of the same multi-scale volume (Neuroglancer precomputed), built from the
    /// metadata already read: no request; caches and counters are shared.
    pub fn with_scale(&self, scale: String) -> Result<Array> {
        if self.meta.format != Format::Precomputed {
            return err(ErrorCode::InvalidSelection, format!("{}: only precomputed volumes have scales", self.url));
        }
        let docs = Documents { scale: Some(scale), ..self.docs.clone() };
        let mut a = Array::new(self.base.clone(), self.query.clone(), docs, self.store.clone())?;
        a.url = self.url.clone();
        a.clock = self.clock;
        a.decode_ms = self.decode_ms.clone();
        a.max_decoded = self.max_decoded;
        a.decoders = self.decoders.clone();
        a.container = self.container.clone();
        a.meta_url = self.meta_url.clone();
        Ok(a)
    }

    /// What rebuilds this array without a request ([`Array::from_state`]): where its keys
    /// live, the URL it reports and its documents without their attributes (the caller has
    /// them from the first build; a rebuilt array's are empty), as JSON.
    pub fn state(&self) -> String {
        let mut out = String::from("{\"base\":");
        json::write_str(&mut out, &self.base);
        out.push_str(",\"query\":");
        json::write_str(&mut out, &self.query);
        out.push_str(",\"url\":");
        json::write_str(&mut out, &self.url);
        out.push_str(",\"meta\":");
        json::write_str(&mut out, &self.meta_url);
        // The layers it reads through, as a pipeline that mounts them again without a request.
        out.push_str(",\"store\":");
        json::write_str(&mut out, &self.store.stack_text());
        // An object, not a string in a string: the documents are escaped once.
        out.push_str(",\"documents\":");
        self.docs.for_decoding().write(&mut out);
        out.push('}');
        out
    }

    /// The array [`Array::state`] described, read through a new store of `config` (inside the
    /// same archive, reference file or repository, if it was; `resolve` maps the targets of the
    /// latter two).
    pub fn from_state(
        state: &str,
        config: transport::Config,
        how: &crate::core::store::Mounting,
    ) -> Result<Array> {
        let bad = || Error::new(ErrorCode::InvalidMetadata, "not an array's state");
        let Ok(Value::Object(mut v)) = json::parse(state.as_bytes()) else { return Err(bad()) };
        let docs = Documents::from_value(v.remove("documents").ok_or_else(bad)?)?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from).ok_or_else(bad);
        let stack = v.get("store").and_then(Value::as_str).unwrap_or("");
        let store = Rc::new(Store::remount(stack, Transport::new(config), how)?);
        let meta = v.get("meta").and_then(Value::as_str).unwrap_or("");
        Ok(Array::new(text("base")?, text("query")?, docs, store)?.at(text("url")?).with_meta_url(meta))
    }

    /// Report `url` as the array's URL (keys stay relative to the base).
    pub fn at(mut self, url: String) -> Self {
        self.url = self.store.display_node(&url);
        self
    }

    pub fn url(&self) -> &str {
        &self.url
    }
    /// What the array was built from.
    pub fn documents(&self) -> &Documents {
        &self.docs
    }
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.meta
    }
    pub fn dtype(&self) -> DataType {
        self.meta.data_type
    }
    /// The read-chunk grid: what chunk coordinates index.
    pub fn grid(&self) -> &Grid {
        self.layout.grid()
    }
    /// The storage object's chunk shape when chunks are sharded on a regular grid.
    pub fn shard_shape(&self) -> Option<Vec<u64>> {
        self.layout.shard_shape()
    }
    /// Whether decoding a chunk is real work (see [`Layout::costly_decode`]).
    pub fn costly_decode(&self) -> bool {
        self.layout.costly_decode()
    }
    /// Whether the server answered a ranged request with the whole object.
    pub fn range_ignored(&self) -> bool {
        self.store.range_ignored()
    }

    /// The array's cache shares `pool`'s budget from now on.
    pub fn join(&self, pool: &Rc<transport::cache::Pool>) {
        self.store.join(pool)
    }

    pub fn stats(&self) -> Stats {
        Stats { store: self.store.stats(), decode_ms: self.decode_ms.get() }
    }

    /// The stamp of the version of the object holding read chunk `coords` (see
    /// `transport::versions`), for a cache of decoded chunks kept above.
    pub fn chunk_stamp(&self, coords: &[u64]) -> u64 {
        match self.layout.locate(coords) {
            Ok(at) => crate::core::transport::Objects::stamp(&*self.store, &self.key_url(&at.key)),
            Err(_) => self.store.generation(),
        }
    }

    /// The URL of the storage object at `key`.
    pub fn key_url(&self, key: &str) -> String {
        format!("{}/{}{}", self.base, key, self.query)
    }

    /// The document a store kind gives at `key` under this array on demand (a TIFF tag's value
    /// at `tags/<tag>`, whatever its size), or `None`; within `maxMetadataBytes`.
    pub async fn read_document<C: HttpClient>(&self, c: &C, key: &str) -> Result<Option<Vec<u8>>> {
        let url = self.key_url(key);
        self.store.read_document(c, &url, self.store.config().max_document).await.map_err(|e| self.store.name_error(e))
    }

    /// The plan of a read (see [`Want`]).
    pub fn plan(&self, want: Want) -> Result<Plan> {
        match want {
            Want::Chunks(list) => Plan::chunks(self.grid(), list),
            Want::Region(sel) => Plan::region(self.grid(), sel, self.dtype().size(), self.max_decoded),
        }
        .map_err(|e| e.at(&self.url))
    }

    /// Decode the stored bytes of read chunk `coords`.
    pub fn decode(&self, coords: &[u64], bytes: Vec<u8>) -> Result<Decoded> {
        let decoders = self.decoders.as_deref();
        let Some(now) = self.clock else { return self.layout.decode(coords, bytes, decoders) };
        let t0 = now();
        let r = self.layout.decode(coords, bytes, decoders);
        self.decode_ms.set(self.decode_ms.get() + (now() - t0));
        r
    }

    /// A decoded read chunk as the API returns it: its shape clipped to the array.
    pub fn chunk_of(&self, coords: &[u64], d: Decoded) -> Chunk {
        Chunk { bytes: d.bytes, shape: self.grid().clipped(coords), stride: d.strides, heap: d.heap }
    }

    /// Refuse a chunk of `shape` above `maxDecodedBytes`, before anything is allocated for it.
    fn check_size(&self, coords: &[u64], shape: &[u64]) -> Result<usize> {
        let n = checked_bytes(shape, self.dtype().size() as u64)?;
        if n > self.max_decoded {
            let what = format!("{}: chunk {} decoded", self.url, crate::core::error::List(coords));
            return Err(too_large(&what, n as u64, self.max_decoded as u64, "maxDecodedBytes"));
        }
        Ok(n)
    }

    /// An absent chunk: the fill value.
    pub fn fill_chunk(&self, coords: &[u64]) -> Result<Chunk> {
        let shape = self.grid().clipped(coords);
        let n = self.check_size(coords, &shape)? / self.dtype().size().max(1);
        let fill = &self.meta.fill_value;
        Ok(Chunk { bytes: fill.try_repeat(n)?, stride: c_strides(&shape), shape, heap: fill.heap.clone() })
    }

    /// The object URL of chunk `coords` and the chunk's span in it (`None`: absent).
    async fn locate<C: HttpClient>(&self, c: &C, coords: &[u64]) -> Result<(String, Option<ByteSpan>)> {
        let at = self.layout.locate(coords).map_err(|e| e.at(&self.url))?;
        let url = self.key_url(&at.key);
        let levels: Vec<(&dyn IndexFormat, u64)> = at.levels.iter().map(|(f, k)| (&**f, *k)).collect();
        let span = locate(&self.store, c, &url, &levels).await.inspect_err(|e| self.distrust(&url, e.code))?;
        Ok((url, span))
    }

    /// An error that shows the server sent inconsistent bytes drops what is cached of the
    /// object, so that a healed server is read afresh rather than the damage kept.
    fn distrust(&self, url: &str, code: ErrorCode) {
        if matches!(code, ErrorCode::CorruptShard | ErrorCode::CorruptChunk | ErrorCode::ChecksumMismatch) {
            self.store.forget(url);
        }
    }

    /// Decoding chunk `coords` elsewhere (a worker, which knows no URL) failed with `code`
    /// (`None`: not one of the core's): as for a decode here, what is cached of the chunk's
    /// object is dropped when the error shows its bytes inconsistent. Returns the object's URL,
    /// for the error to name.
    pub fn failed_elsewhere(&self, coords: &[u64], code: Option<ErrorCode>) -> String {
        match self.layout.locate(coords) {
            Ok(at) => {
                let url = self.key_url(&at.key);
                if let Some(code) = code {
                    self.distrust(&url, code);
                }
                self.store.display(&url)
            }
            Err(_) => self.url.clone(),
        }
    }

    /// Read the pieces of `plan`, handing each to `each` as its bytes arrive: decoded here
    /// when `decode`, else as stored (for a decoder elsewhere). Chunks are grouped by the object
    /// holding them; each object's chunks are located (its index read once, shared) and then
    /// their spans read together, merged by the store — objects in parallel, so that one
    /// object's data flows while another's index is still on its way. An error from `each`
    /// stops the read.
    pub async fn read<C: HttpClient>(
        &self,
        c: &C,
        plan: &Plan,
        decode: bool,
        mut each: impl FnMut(usize, Result<Got>) -> Result<()>,
    ) -> Result<()> {
        // One copy of the read path per client, whatever the callback (wasm size).
        self.read_with(c, plan, decode, &mut each).await
    }

    async fn read_with<C: HttpClient>(
        &self,
        c: &C,
        plan: &Plan,
        decode: bool,
        each: &mut dyn FnMut(usize, Result<Got>) -> Result<()>,
    ) -> Result<()> {
        // The metadata read again first when an object changed since it was last found
        // unchanged, or (under `recheck` after a time) when that was too long ago.
        let (generation, at) = self.verified.get();
        let late = match (self.store.versions().recheck, c.now(), at) {
            (transport::Recheck::After(ms), Some(now), Some(at)) => now - at > ms,
            (transport::Recheck::After(_), now, None) => {
                self.verified.set((generation, now));
                false
            }
            _ => false,
        };
        if late || generation != self.store.generation() || self.outdated.borrow().is_some() {
            self.verify(c, late).await.map_err(|e| self.store.name_error(e))?;
        }
        // A server that ignores Range sends whole objects: this batch downloads each once.
        let _pin = self.store.pin();
        let each = RefCell::new(each);
        // Errors name keys inside layers as the pipeline reading them does.
        let emit = |i: usize, got: Result<Got>| (each.borrow_mut())(i, got.map_err(|e| self.store.name_error(e)));
        let shared = self.store.keys_share_objects();
        let grid = self.grid();
        // (object URL, piece), grouped by object below.
        let mut keyed: Vec<(String, usize)> = Vec::new();
        for (i, p) in plan.pieces.iter().enumerate() {
            if !grid.contains(&p.coords) {
                let why = format!("{}: chunk {} is outside the chunk grid {}", self.url, crate::core::error::List(&p.coords), crate::core::error::List(&grid.count()));
                emit(i, Err(Error::new(ErrorCode::InvalidSelection, why)))?;
                continue;
            }
            // A chunk above the limit is refused before its bytes are asked for.
            if let Err(e) = self.check_size(&p.coords, &grid.full(&p.coords)) {
                emit(i, Err(e))?;
                continue;
            }
            match self.layout.locate(&p.coords) {
                // Chunks whose keys share objects (a reference file's: ranges of a few targets) read
                // together, so that those of one target merge.
                Ok(_) if shared && self.layout.chunks_in_object(&p.coords).is_none() => keyed.push((self.url.clone(), i)),
                Ok(at) => keyed.push((self.key_url(&at.key), i)),
                Err(e) => emit(i, Err(e.at(&self.url)))?,
            }
        }
        // The pieces of each object together, objects in URL order (pieces in plan order).
        let by = crate::core::nd::order(keyed.len(), &|a, b| keyed[a].0 < keyed[b].0);
        let mut objects: Vec<(String, Vec<usize>)> = Vec::new();
        for k in by {
            let (url, i) = (&keyed[k].0, keyed[k].1);
            match objects.last_mut() {
                Some((u, members)) if u == url => members.push(i),
                _ => objects.push((url.clone(), alloc::vec![i])),
            }
        }
        let reads = objects.into_iter().map(|(url, members)| self.read_object(c, plan, decode, url, members, &emit));
        stream::iter(reads).buffer_unordered(CONCURRENCY).try_collect::<Vec<()>>().await.map(drop)
    }

    /// The most bytes a whole object holding the chunks `members` plausibly has: twice their
    /// decoded size and an index's worth (stored chunks are rarely larger than decoded ones);
    /// `None` for variable-length elements. Past it, a plain GET of the object stops, and its
    /// chunks are read by range as usual: a hostile answer costs no more than this.
    fn plausible_object_bytes(&self, members: &[usize], plan: &Plan) -> Option<u64> {
        if self.dtype().is_variable() {
            return None;
        }
        let item = self.dtype().size() as u64;
        let mut total = 1u64 << 20;
        for &i in members {
            let n = self.grid().full(&plan.pieces[i].coords).iter().try_fold(item, |n, &d| n.checked_mul(d))?;
            total = total.checked_add(n.checked_mul(2)?)?;
        }
        Some(total)
    }

    /// The chunks `members` of `plan`, all in the object at `url`: located, then read together
    /// — each of one version of the object, as its index or directory is (see
    /// `transport::versions`). A chunk whose read met a change of its object (inside an archive
    /// or file: of any object the tree reads) is not handed over but read again, once the
    /// array's metadata is found unchanged; for a region, every chunk of the object is (those handed over before the
    /// change may be of the old version). A second change during one read: `Changed`.
    async fn read_object<C: HttpClient>(
        &self,
        c: &C,
        plan: &Plan,
        decode: bool,
        url: String,
        members: Vec<usize>,
        emit: &impl Fn(usize, Result<Got>) -> Result<()>,
    ) -> Result<()> {
        let mut todo = members.clone();
        for attempt in 0..2 {
            if attempt > 0 {
                // What says where its bytes are, if it is to be confirmed (a reference file
                // older than a target): before the read, not during it.
                self.store.revalidate(c, &url).await;
            }
            // The stamp of what this object's chunks are read from: a plain object's own epoch
            // (a change of another shard is not this one's), else the tree's generation.
            let stamp = || crate::core::transport::Objects::stamp(&*self.store, &url);
            let since = stamp();
            let deferred: RefCell<Vec<usize>> = RefCell::new(Vec::new());
            let last: RefCell<Option<Error>> = RefCell::new(None);
            let gate = |i: usize, got: Result<Got>| {
                // A region read again: an absent chunk is written as the fill value (the old
                // version's values may be in its place).
                let got = match got {
                    Ok(Got::Absent) if attempt > 0 && plan.region.is_some() => self
                        .fill_chunk(&plan.pieces[i].coords)
                        .map(|f| Got::Decoded(Decoded { bytes: f.bytes, strides: f.stride, heap: f.heap })),
                    got => got,
                };
                let changed = matches!(&got, Err(e) if e.code == ErrorCode::Changed);
                if changed || stamp() != since {
                    if let (true, Err(e)) = (changed, &got) {
                        *last.borrow_mut() = Some(e.clone());
                    }
                    deferred.borrow_mut().push(i);
                    return Ok(());
                }
                emit(i, got)
            };
            self.read_members(c, plan, decode, url.clone(), &todo, &gate).await?;
            let deferred = deferred.into_inner();
            if deferred.is_empty() {
                return Ok(());
            }
            let last = last.into_inner();
            let failed = match attempt {
                0 => self.verify(c, false).await.err(),
                _ => Some(twice(&self.store.display(&url), last)),
            };
            if let Some(e) = failed {
                return deferred.into_iter().try_for_each(|i| emit(i, Err(e.clone())));
            }
            todo = if plan.region.is_some() { members.clone() } else { deferred };
        }
        Ok(())
    }

    /// The array's metadata read again (after a change: `force` false, once per generation;
    /// under `recheck` after a time: `force`): an error when it no longer describes this array
    /// (its shape, data type, chunks or codecs; attributes aside) — reading it needs a new open.
    pub async fn verify<C: HttpClient>(&self, c: &C, force: bool) -> Result<()> {
        if let Some(e) = self.outdated.borrow().clone() {
            return Err(e);
        }
        if self.meta_url.is_empty() {
            return Ok(());
        }
        let generation = self.store.generation();
        if !force && self.verified.get().0 == generation {
            return Ok(());
        }
        let work = || -> transport::Computed<'_> {
            Box::pin(async move {
                let url = &self.meta_url;
                let limit = self.store.config().max_document;
                // (A change of the document itself is seen as it is read: read it once more.)
                let mut seen = String::new();
                let doc = match self.store.read_document_fresh(c, url, limit).await {
                    Err(e) if e.code == ErrorCode::Changed => {
                        seen = e.message;
                        self.store.read_document_fresh(c, url, limit).await?
                    }
                    got => got?,
                };
                let changed = match doc {
                    Some(doc) => Documents { doc, ..self.docs.clone() }.for_decoding() != self.docs.for_decoding(),
                    // Known only from a group's consolidated metadata: nothing to compare with.
                    None => self.store.known().and_then(|k| k.get(url)).is_none(),
                };
                if changed {
                    // (`seen`: the document's two versions, when its answer showed them.)
                    let seen = seen.split_once("changed while open ").map_or(String::new(), |(_, v)| format!(" {v}"));
                    let why = format!("{url}: the array's metadata changed while it was open{seen} (its shape, data type, chunks or codecs); open it again to read the new version");
                    let e = Error::new(ErrorCode::Changed, why);
                    *self.outdated.borrow_mut() = Some(e.clone());
                    return Err(e);
                }
                self.verified.set((self.store.generation().max(generation), c.now()));
                Ok((Rc::new(()) as Rc<dyn core::any::Any>, 0))
            })
        };
        // One check per generation (and time), however many reads want it.
        let at = c.now().filter(|_| force).map_or(0, f64::to_bits);
        self.store.once(c, &self.meta_url, alloc::vec![VERIFY, generation, at], &work).await.map(drop)
    }

    /// The chunks `members` of `plan`, all in the object at `url`: located, then read together.
    async fn read_members<C: HttpClient>(
        &self,
        c: &C,
        plan: &Plan,
        decode: bool,
        url: String,
        members: &[usize],
        emit: &impl Fn(usize, Result<Got>) -> Result<()>,
    ) -> Result<()> {
        // Every chunk of a shard wanted and nothing known of it yet: one plain GET of the whole
        // object (no Range header: no CORS preflight, no index round trip first); its index
        // and chunks are cut from it. (With its index known, one ranged read serves as well.)
        let first = &plan.pieces[members[0]].coords;
        let whole = self.layout.chunks_in_object(first) == Some(members.len() as u64)
            && !self.store.range_ignored()
            && !self.store.knows(&url);
        let _held = match whole {
            true => self.store.hold_whole(c, &url, self.plausible_object_bytes(&members, plan)).await,
            false => None,
        };
        let located: Vec<(usize, Result<(String, Option<ByteSpan>)>)> =
            stream::iter(members.iter().map(|&i| async move { (i, self.locate(c, &plan.pieces[i].coords).await) }))
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
        let at: Vec<usize> = located.iter().map(|(i, _)| *i).collect();
        let located = crate::core::nd::sorted(located, &|a, b| at[a] < at[b]);
        let mut wanted: Vec<(String, ByteRange)> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (i, r) in located {
            match r {
                Err(e) => emit(i, Err(e))?,
                Ok((_, None)) => emit(i, Ok(Got::Absent))?,
                Ok((at, Some(span))) => {
                    wanted.push((at, span.range()));
                    owner.push(i);
                }
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let mut seen = alloc::vec![false; wanted.len()];
        // An error from `emit` stops the read and is the read's result (it is not a failure
        // of the spans still unread, to be handed to `emit` in turn).
        let mut stopped: Option<Error> = None;
        let r = self
            .store
            // A region's chunks decoded as they arrive (its result waits for all of them);
            // chunks asked for one by one come as their read ends: handed out early, they would
            // make a caller keeping a few in flight ask for the next ones one at a time.
            .read_spans(c, &wanted, plan.region.is_some(), |k, got| {
                seen[k] = true;
                let (i, url) = (owner[k], &wanted[k].0);
                let got = match got {
                    Ok(None) => Ok(Got::Absent),
                    Ok(Some(bytes)) if decode => {
                        let r = self.decode(&plan.pieces[i].coords, bytes).map(Got::Decoded).map_err(|e| e.at(url));
                        r.inspect_err(|e| self.distrust(url, e.code))
                    }
                    Ok(Some(bytes)) => Ok(Got::Encoded(bytes)),
                    Err(e) => Err(e),
                };
                emit(i, got).inspect_err(|e| stopped = Some(e.clone()))
            })
            .await;
        if let Some(e) = stopped {
            return Err(e);
        }
        let failure = match r {
            Err(e) => e,
            Ok(()) => Error::new(ErrorCode::CorruptShard, "chunk was never read"),
        };
        for (k, done) in seen.into_iter().enumerate() {
            if !done {
                emit(owner[k], Err(failure.clone()))?;
            }
        }
        Ok(())
    }
}

/// `Changed`: the object at `url` changed again while a read resolved a first change.
fn twice(url: &str, last: Option<Error>) -> Error {
    let seen = last.map(|e| format!(" ({})", e.message)).unwrap_or_default();
    Error::new(ErrorCode::Changed, format!("{url}: changed twice during one read{seen}; read it again"))
}

/// One chunk, decoded (a shorthand for [`read`](Array::read) of one chunk).
pub async fn read_chunk<C: HttpClient>(a: &Array, c: &C, coords: &[u64]) -> Result<Chunk> {
    let plan = a.plan(Want::Chunks(&[coords.to_vec()]))?;
    let mut out = None;
    a.read(c, &plan, true, |_, got| {
        out = Some(got);
        Ok(())
    })
    .await?;
    match out {
        Some(Ok(Got::Decoded(d))) => Ok(a.chunk_of(coords, d)),
        Some(Ok(_)) => a.fill_chunk(coords),
        Some(Err(e)) => Err(e),
        None => Err(Error::new(ErrorCode::CorruptShard, "chunk was never read")),
    }
}

/// A region, assembled from every chunk it touches (a shorthand for [`read`](Array::read)
/// of a region plan into an [`Assembly`]).
pub async fn read_region<C: HttpClient>(a: &Array, c: &C, sel: &[Sel]) -> Result<Chunk> {
    let plan = a.plan(Want::Region(sel))?;
    let mut out = Assembly::new(&plan, &a.meta.fill_value, a.dtype()).map_err(|e| e.at(&a.url))?;
    a.read(c, &plan, true, |i, got| match got? {
        Got::Decoded(d) => {
            let coords = &plan.pieces[i].coords;
            out.put(i, &d).map_err(|e| e.at(&format!("{} chunk {}", a.url, crate::core::error::List(coords))))
        }
        _ => Ok(()),
    })
    .await?;
    out.finish()
}
