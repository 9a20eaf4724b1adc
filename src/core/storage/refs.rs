//! Reference files (kerchunk, VirtualiZarr's JSON; fsspec's `ReferenceFileSystem` spec) as a
//! store over a store, mounted under the file's URL and `/` like a zip archive. Each key holds
//! inline text (`base64:…` for bytes), a whole object (`[url]`) or a byte range of one (`[url,
//! offset, length]`): a range is a [`Place::Range`] of its target, so chunks of one target
//! wanted together merge into one request as a shard's chunks do.
//!
//! The file is read once (within `maxMetadataBytes`) into a sorted index of at most four times
//! that many bytes, held by the mount. Version 0 (a plain map) and 1 (`refs`, `templates`,
//! `gen`). Template text is literal text and `{{ expr }}`, where `expr` is a template's or a
//! `gen` dimension's name, a non-negative integer, or integers combined with `+ - * // %`, unary
//! minus and parentheses (Python's floor division and modulo; overflow and division by zero are
//! errors) — none of the rest of Jinja (filters, calls, `/`, strings). A template may name other
//! templates (expanded in at most 16 passes; a cycle is an error), which fsspec does not do. A
//! `gen` dimension is `{start, stop, step}` (0 and 1 by default) or a list of integers or
//! strings; an entry's keys are counted against the index's limit before any is made.
//!
//! Targets: a relative URL resolves against the reference file's; then the caller's
//! `resolveUrl`, if any; then `s3://` and `gs://` become public HTTPS.
use super::url::public_https;
use super::zip::{key_under, Place};
use super::{parquet, split_url, HttpClient, Objects};
use crate::core::error::{too_large, Error, ErrorCode, Result};
use crate::core::json::{self, Keep, Reference, Value};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;
use core::fmt::{self, Write};

pub use super::url::ResolveUrl;

/// `Ref::url` of inline text, and of inline base64.
const INLINE: u32 = u32::MAX;
const BASE64: u32 = u32::MAX - 1;
/// `Ref::len` of a whole object (`[url]`).
const WHOLE: u64 = u64::MAX;
/// The most bytes one template may expand to.
const MAX_TEXT: usize = 1 << 16;
const REF_BYTES: u64 = core::mem::size_of::<Ref>() as u64;
/// The memo key of the index (the store keys memos by URL too).
const KEY_INDEX: u64 = 0x7265_6600;

/// One key: its name in the pool, and `len` bytes at `offset` of the target whose URL is in the
/// pool at `url` — or, for inline values (`url` INLINE or BASE64), of the pool.
#[derive(Clone, Copy)]
struct Ref {
    key: u32,
    key_len: u32,
    url: u32,
    url_len: u32,
    offset: u64,
    len: u64,
}

/// A reference file's keys, sorted, each once (the last given wins; `gen` after `refs`); their
/// names, URLs and inline values in one pool (at most `MAX_ALLOC` bytes: `u32` positions).
pub struct Index {
    pool: String,
    refs: Vec<Ref>,
    /// A Parquet reference set's record layout (its `refs` are the metadata alone).
    parquet: Option<Records>,
}

/// Where a Parquet reference set keeps its chunks: `record_size` rows per file
/// `<field>/refs.<k>.parq`, row `n` for chunk `n` of the field's grid in C order.
struct Records {
    record_size: u64,
    /// Each array's chunk grid, by its key (the `.zarray`'s directory).
    grids: Vec<(String, Vec<u64>)>,
}

/// A record file's rows as cached: 32 bytes a row, its targets and inline bytes pooled.
#[derive(Default)]
struct Record {
    urls: Vec<String>,
    raw: Vec<u8>,
    slots: Vec<Slot>,
}

/// One row: a target in `urls` (or [`NONE`]), inline bytes in `raw` (at, length; length
/// [`NONE`]: none), the range.
struct Slot {
    url: u32,
    raw: (u32, u32),
    offset: i64,
    size: i64,
}

const NONE: u32 = u32::MAX;

/// The most rows one record file may declare (fsspec writes 10,000 by default).
const MAX_RECORD: u64 = 1 << 20;
/// The memo key of a record file's rows.
const KEY_RECORD: u64 = 0x7265_6601;

impl Index {
    fn get(&self, key: &str) -> Option<&Ref> {
        search(self.refs.len(), &|i| key_of(&self.pool, &self.refs[i]), key).map(|i| &self.refs[i])
    }

    pub fn len(&self) -> usize {
        self.refs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
    }
}

fn text(pool: &str, at: u64, len: u64) -> &str {
    pool.get(at as usize..at.saturating_add(len) as usize).unwrap_or("")
}

fn key_of<'k>(pool: &'k str, r: &Ref) -> &'k str {
    text(pool, r.key.into(), r.key_len.into())
}

/// A key's bytes: what sorting compares (in UTF-8 the same order as the text's, without its
/// char-boundary checks).
fn key_bytes<'k>(pool: &'k str, r: &Ref) -> &'k [u8] {
    let at = r.key as usize;
    pool.as_bytes().get(at..at + r.key_len as usize).unwrap_or_default()
}

type Loading<'a> = core::pin::Pin<Box<dyn core::future::Future<Output = Result<Option<Rc<Index>>>> + 'a>>;

/// A reference file mounted as a store: objects under `prefix` are its keys (shared by the
/// stores of its nodes behind an `Rc`).
pub struct References {
    /// The reference file's URL, its query (a signed URL's token) kept.
    pub url: String,
    /// The file's URL without the query, then `/`.
    pub prefix: String,
    resolve: Option<Rc<dyn ResolveUrl>>,
    /// The index, once read: held for the mount's life, as the byte-bounded cache may let it go
    /// (and reading the file again costs its whole size).
    held: RefCell<Option<Rc<Index>>>,
    pub(super) last_whole: super::objects::LastWhole,
}

impl fmt::Debug for References {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "References({})", self.url)
    }
}

impl PartialEq for References {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
    }
}

/// Whether `url` (before its query and trailing slashes) ends in one of `names`, in any case.
fn named(url: &str, names: &[&str]) -> bool {
    let base = split_url(url).0.to_ascii_lowercase();
    names.iter().any(|n| base.ends_with(n))
}

/// Whether `url` names a reference file (JSON or Parquet).
pub fn named_references(url: &str) -> bool {
    named(url, &[".json", ".parq", ".parquet"])
}

/// A key of a Zarr node's metadata: what a version-0 reference file is recognised by.
fn metadata_key(k: &str) -> bool {
    [".zarray", ".zgroup", ".zattrs", "zarr.json"].iter().any(|m| k.ends_with(m))
}

/// The reference file at `url` to mount: read once; `None` when it is not one (then nothing
/// else is read). `forced` (`store: "references"`): it must be one. A Parquet reference set
/// (`….parq`, `….parquet`: a directory) is read from its `.zmetadata`; its record files when a
/// chunk needs them.
pub async fn detect<S: Objects, C: HttpClient>(
    store: &S,
    c: &C,
    url: &str,
    forced: bool,
    resolve: Option<Rc<dyn ResolveUrl>>,
) -> Result<Option<References>> {
    if !forced && !named_references(url) {
        return Ok(None);
    }
    let refs = References::new(url, resolve);
    let Some(index) = refs.load(store, c, forced).await? else { return Ok(None) };
    *refs.held.borrow_mut() = Some(index);
    Ok(Some(refs))
}

impl References {
    pub fn new(url: &str, resolve: Option<Rc<dyn ResolveUrl>>) -> References {
        let (base, _) = split_url(url);
        let mut prefix = base;
        prefix.push('/');
        References { url: String::from(url), prefix, resolve, held: RefCell::default(), last_whole: Default::default() }
    }

    /// The key of an object URL under this reference file.
    pub fn key<'a>(&self, url: &'a str) -> Option<&'a str> {
        key_under(&self.prefix, url)
    }

    /// The index: held since detection, or read once (after the array was rebuilt from its
    /// state) however many reads want it at the same time.
    pub async fn index<S: Objects, C: HttpClient>(&self, store: &S, c: &C) -> Result<Rc<Index>> {
        let held = self.held.borrow().clone();
        if let Some(i) = held {
            return Ok(i);
        }
        // Forced: never `None`.
        let work = || async { self.load(store, c, true).await?.ok_or_else(|| bad(&self.url, &"")) };
        let size = |i: &Rc<Index>| i.pool.len() + i.refs.len() * REF_BYTES as usize;
        let i = store.memo(c, &self.url, alloc::vec![KEY_INDEX], size, work).await?;
        *self.held.borrow_mut() = Some((*i).clone());
        Ok((*i).clone())
    }

    /// The file read and indexed; `None` when absent or not a reference file (unless `forced`).
    /// Boxed: one copy of its state machine, whoever awaits it.
    fn load<'a, S: Objects, C: HttpClient>(&'a self, store: &'a S, c: &'a C, forced: bool) -> Loading<'a> {
        Box::pin(async move {
            let limit = store.max_document();
            if named(&self.url, &[".parq", ".parquet"]) {
                return self.load_parquet(store, c, limit).await;
            }
            let Some(text) = store.read_object_document(c, &self.url, limit).await? else {
                // Forced on a URL with no document: a Parquet set's directory by another name.
                return match forced {
                    true => self.load_parquet(store, c, limit).await.map_err(|e| match e.code {
                        ErrorCode::NotFound => Error::new(
                            ErrorCode::NotFound,
                            format!(
                                "{}: not found (no reference file, nor a Parquet reference set's .zmetadata)",
                                self.url
                            ),
                        ),
                        _ => e,
                    }),
                    false => Ok(None),
                };
            };
            Ok(parse(&text, &self.url, self.resolve.as_deref(), limit, forced)?.map(Rc::new))
        })
    }

    /// The direct children of the node at `path` (name, whether an array), from the keys of
    /// their metadata documents; none before the index is read.
    pub fn children(&self, path: &str) -> Vec<(String, bool)> {
        let Some(index) = self.held.borrow().clone() else { return Vec::new() };
        let path = path.trim_matches('/');
        let prefix = if path.is_empty() { String::new() } else { format!("{path}/") };
        let start = index.refs.partition_point(|r| key_of(&index.pool, r) < prefix.as_str());
        let mut out: Vec<(String, bool)> = Vec::new();
        for r in &index.refs[start..] {
            let Some(rest) = key_of(&index.pool, r).strip_prefix(prefix.as_str()) else { break };
            let Some((name, file)) = rest.split_once('/') else { continue };
            let array = match file {
                ".zarray" => true,
                ".zgroup" => false,
                "zarr.json" if r.url == INLINE => {
                    let doc = json::parse(text(&index.pool, r.offset, r.len).as_bytes());
                    matches!(doc, Ok(Value::Object(m)) if m.get("node_type").and_then(Value::as_str) == Some("array"))
                }
                _ => continue,
            };
            match out.iter_mut().find(|(n, _)| n == name) {
                Some(known) => known.1 |= array,
                None => out.push((String::from(name), array)),
            }
        }
        out
    }

    /// Where key `name` is.
    pub async fn place<S: Objects, C: HttpClient>(&self, store: &S, c: &C, name: &str) -> Result<Place> {
        let index = self.index(store, c).await?;
        let Some(r) = index.get(name) else {
            return match &index.parquet {
                Some(records) => self.record_place(store, c, records, name).await,
                None => Ok(Place::Missing),
            };
        };
        let inline = || text(&index.pool, r.offset, r.len);
        Ok(match r.url {
            INLINE => Place::Bytes(Rc::new(inline().as_bytes().to_vec())),
            BASE64 => {
                // Bytes of this key alone: a chunk that does not decode, not a file that does not open.
                let bytes = json::base64(inline()).ok_or_else(|| {
                    let why = format!("{}: key \"{name}\": bad base64", self.url);
                    Error::new(ErrorCode::CorruptChunk, why)
                })?;
                Place::Bytes(Rc::new(bytes))
            }
            at => {
                let url = text(&index.pool, at.into(), r.url_len.into()).to_string();
                match r.len {
                    WHOLE => Place::Whole(url),
                    len => Place::Range { url, offset: r.offset, len },
                }
            }
        })
    }
}

impl References {
    /// The URL of a file inside a Parquet reference set (the set's query kept).
    fn inside(&self, name: &str) -> String {
        let (base, query) = split_url(&self.url);
        format!("{base}/{name}{query}")
    }

    /// A Parquet reference set's `.zmetadata`: `{"metadata": {key: document}, "record_size": n}`.
    async fn load_parquet<S: Objects, C: HttpClient>(&self, store: &S, c: &C, limit: u64) -> Result<Option<Rc<Index>>> {
        let file = self.inside(".zmetadata");
        let Some(text) = store.read_object_document(c, &file, limit).await? else {
            let why = format!("{}: not found (no .zmetadata of a Parquet reference set)", self.url);
            return Err(Error::new(ErrorCode::NotFound, why));
        };
        // The documents are kept as written (their text), as consolidated metadata's are.
        let keep = |k: &str| match k {
            "metadata" => Keep::Raw,
            "record_size" => Keep::Parse,
            _ => Keep::Skip,
        };
        let top = json::parse_object_with(&text, keep).map_err(|e| bad(&file, &e))?;
        let record_size = top
            .as_ref()
            .and_then(|f| f.object.get("record_size"))
            .and_then(Value::as_u64)
            .filter(|&n| (1..=MAX_RECORD).contains(&n));
        let meta = top.as_ref().and_then(|f| f.raw("metadata")).filter(|m| m.is_object());
        let (Some(record_size), Some(meta)) = (record_size, meta) else {
            return Err(bad(&file, &format_args!("no metadata, or a record_size not in 1..={MAX_RECORD}")));
        };
        let members = json::parse_object_with(meta.as_str().as_bytes(), |_| Keep::Raw).map_err(|e| bad(&file, &e))?;
        let mut b = Builder::new(&file, None, limit);
        let mut grids = Vec::new();
        for (key, raw) in members.iter().flat_map(|m| m.raw_members()) {
            // A document, or (as fsspec also takes them) a string holding one.
            let unquoted = match raw.starts_with('"') {
                true => json::parse(raw.as_bytes()).ok().and_then(|v| v.as_str().map(String::from)),
                false => None,
            };
            let doc = unquoted.as_deref().unwrap_or(raw);
            b.inline(key, INLINE, doc)?;
            if let Some(field) = key.strip_suffix("/.zarray") {
                let v = json::parse(doc.as_bytes()).unwrap_or_default();
                let dims = |k: &str| {
                    v.get(k)
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                };
                let (Some(Some(shape)), Some(Some(chunks))) = (dims("shape"), dims("chunks")) else {
                    return Err(bad(&file, &format_args!("key \"{key}\": no shape and chunks")));
                };
                if shape.len() != chunks.len() || chunks.contains(&0) {
                    return Err(bad(&file, &format_args!("key \"{key}\": shape and chunks disagree")));
                }
                let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
                // fsspec numbers a 0-d array's one chunk as a grid of one.
                grids.push((String::from(field), if grid.is_empty() { alloc::vec![1] } else { grid }));
            }
        }
        let mut index = b.finish()?;
        index.parquet = Some(Records { record_size, grids });
        Ok(Some(Rc::new(index)))
    }

    /// Where chunk key `name` of a Parquet reference set is: its row of its record file.
    async fn record_place<S: Objects, C: HttpClient>(
        &self,
        store: &S,
        c: &C,
        records: &Records,
        name: &str,
    ) -> Result<Place> {
        let Some((field, chunk)) = name.rsplit_once('/') else { return Ok(Place::Missing) };
        let Some((_, grid)) = records.grids.iter().find(|(f, _)| f == field) else { return Ok(Place::Missing) };
        let coords: Option<Vec<u64>> = chunk.split('.').map(integer).collect();
        let Some(coords) = coords.filter(|c| c.len() == grid.len() && c.iter().zip(grid).all(|(i, n)| i < n)) else {
            return Ok(Place::Missing);
        };
        // The chunk's number in C order (below the grid's size, which fits: its product did not
        // have to, but each partial product is below it).
        let n = coords.iter().zip(grid).fold(0u64, |n, (i, g)| n.saturating_mul(*g).saturating_add(*i));
        let (record, row) = (n / records.record_size, n % records.record_size);
        let file = self.inside(&format!("{field}/refs.{record}.parq"));
        let limit = store.max_document();
        let rs = records.record_size as usize;
        let work = || async {
            let mut rec = Record::default();
            let Some(bytes) = store.read_object_document(c, &file, limit).await? else { return Ok(rec) };
            let rows = parquet::rows(&file, &bytes, rs, limit as usize)?;
            drop(bytes);
            rec.slots.reserve_exact(rows.len());
            // Targets resolved and kept once per run of rows naming them (a record's rows mostly
            // name one file).
            let mut last: Option<String> = None;
            for r in rows {
                let url = match r.path {
                    None => NONE,
                    Some(p) => {
                        if last.as_deref() != Some(p.as_str()) {
                            let u = resolve_target(&self.url, self.resolve.as_deref(), &p)
                                .map_err(|e| e.at(&format!("{file}: target \"{p}\"")))?;
                            rec.urls.push(u);
                            last = Some(p);
                        }
                        rec.urls.len() as u32 - 1
                    }
                };
                let raw = match r.raw {
                    None => (0, NONE),
                    Some(b) => {
                        if rec.raw.len() + b.len() >= NONE as usize {
                            return Err(too_large(
                                &file,
                                (rec.raw.len() + b.len()) as u64,
                                NONE.into(),
                                "inline bytes of a record",
                            ));
                        }
                        rec.raw.extend_from_slice(&b);
                        ((rec.raw.len() - b.len()) as u32, b.len() as u32)
                    }
                };
                rec.slots.push(Slot { url, raw, offset: r.offset, size: r.size });
            }
            Ok(rec)
        };
        let size = |r: &Record| {
            r.slots.len() * core::mem::size_of::<Slot>()
                + r.raw.len()
                + r.urls.iter().map(|u| 24 + u.len()).sum::<usize>()
        };
        let rec = store.memo(c, &file, alloc::vec![KEY_RECORD], size, work).await?;
        let Some(r) = rec.slots.get(row as usize) else { return Ok(Place::Missing) };
        if r.raw.1 != NONE {
            let (at, len) = (r.raw.0 as usize, r.raw.1 as usize);
            return Ok(Place::Bytes(Rc::new(rec.raw[at..at + len].to_vec())));
        }
        let Some(url) = rec.urls.get(r.url as usize) else { return Ok(Place::Missing) };
        let (Ok(offset), Ok(len)) = (u64::try_from(r.offset), u64::try_from(r.size)) else {
            let why = format!("{file}: row {row} (key \"{name}\"): a negative offset or size");
            return Err(Error::new(ErrorCode::CorruptShard, why));
        };
        Ok(match (offset, len) {
            (0, 0) => Place::Whole(url.clone()),
            (offset, len) => Place::Range { url: url.clone(), offset, len },
        })
    }
}

fn bad(file: &str, what: &dyn fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidMetadata, format!("{file}: bad reference file: {what}"))
}

/// The index of reference file `text` (at URL `file`); `None` when it is not one (`forced`: an
/// error). Its index may take `4 × limit` bytes.
pub fn parse(
    text: &[u8],
    file: &str,
    resolve: Option<&dyn ResolveUrl>,
    limit: u64,
    forced: bool,
) -> Result<Option<Index>> {
    let mut looks = false;
    let keep = |k: &str| {
        looks |= metadata_key(k);
        match k {
            "version" => Keep::Parse,
            "refs" | "templates" | "gen" => Keep::Raw,
            _ => Keep::Skip,
        }
    };
    let fields = match json::parse_object_with(text, keep) {
        Ok(Some(f)) => f,
        // Another JSON document (cut short: reported).
        Ok(None) if !forced => return Ok(None),
        Err(e) if !forced && !e.is_eof() => return Ok(None),
        Ok(None) => return Err(bad(file, &"not a JSON object")),
        Err(e) => return Err(bad(file, &e)),
    };
    let refs = fields.span("refs");
    if !forced && !looks && refs.is_none() {
        return Ok(None);
    }
    let mut b = Builder::new(file, resolve, limit);
    let version = fields.object.get("version");
    if version.is_none() && refs.is_none() {
        // Version 0: the document is the map.
        b.members(text)?;
        return b.finish().map(Some);
    }
    if let Some(v) = version.filter(|v| v.as_u64() != Some(1)) {
        let why = format!("{file}: reference file version {v} is not read (0 and 1 are)");
        return Err(Error::new(ErrorCode::UnsupportedFormat, why));
    }
    let member = |k| fields.span(k).and_then(|s| json::parse(text.get(s)?).ok()).unwrap_or_default();
    b.templates(&member("templates"))?;
    if let Some(span) = refs {
        b.members(text.get(span).unwrap_or_default())?;
    }
    b.gen(&member("gen"))?;
    b.finish().map(Some)
}

/// `target` as a link in the document at `base` resolves: a URL with `://` as it is,
/// `//host/…` on the base's scheme, `/path` on its origin, any other beside the document (`.`
/// and `..` segments are left to `fetch`, whose URL parser resolves them).
pub fn join_url(base: &str, target: &str) -> String {
    if target.contains("://") {
        return target.to_string();
    }
    let base = base.split(['?', '#']).next().unwrap_or(base);
    let origin = super::origin(base);
    let mut url = String::from(match target.as_bytes() {
        [b'/', b'/', ..] => &base[..base.find(':').map_or(0, |i| i + 1)],
        [b'/', ..] => origin,
        _ => &base[..base.rfind('/').filter(|&i| i >= origin.len()).map_or(base.len(), |i| i + 1)],
    });
    if !url.ends_with('/') && !target.starts_with('/') {
        url.push('/');
    }
    url.push_str(target);
    url
}

#[derive(Clone, Copy)]
enum Val<'a> {
    Int(i64),
    Text(&'a str),
}

type Eval<'a> = core::result::Result<Val<'a>, &'static str>;

fn int(v: Val) -> core::result::Result<i64, &'static str> {
    match v {
        Val::Int(n) => Ok(n),
        Val::Text(_) => Err("text in arithmetic"),
    }
}

const OVERFLOW: &str = "overflow or division by zero";

/// `{{ expr }}` evaluated as it is read: sum := product (('+' | '-') product)*; product :=
/// unary (('*' | '//' | '%') unary)*; unary := ('-' | '+') unary | '(' sum ')' | integer | name.
struct Expr<'a> {
    s: &'a [u8],
    i: usize,
    name: &'a dyn Fn(&str) -> Option<Val<'a>>,
}

impl<'a> Expr<'a> {
    fn peek(&mut self) -> Option<u8> {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
        self.s.get(self.i).copied()
    }

    /// Operators binding at least as tightly as `level` (0: `+ -`, 1: `* // %`), left to right.
    fn binary(&mut self, level: u8, depth: u32) -> Eval<'a> {
        let mut a = self.operand(level, depth)?;
        loop {
            let (op, n) = match (self.peek(), self.s.get(self.i + 1)) {
                (Some(c @ (b'+' | b'-')), _) if level == 0 => (c, 1),
                (Some(c @ (b'*' | b'%')), _) if level == 1 => (c, 1),
                (Some(b'/'), Some(b'/')) if level == 1 => (b'/', 2),
                _ => return Ok(a),
            };
            self.i += n;
            let (x, y) = (int(a)?, int(self.operand(level, depth)?)?);
            // Python's `//` and `%` round down.
            let r = x.checked_rem(y);
            let down = r.is_some_and(|r| r != 0 && (r < 0) != (y < 0));
            let v = match op {
                b'+' => x.checked_add(y),
                b'-' => x.checked_sub(y),
                b'*' => x.checked_mul(y),
                b'/' => x.checked_div(y).map(|q| q - i64::from(down)),
                _ => r.map(|r| if down { r + y } else { r }),
            };
            a = Val::Int(v.ok_or(OVERFLOW)?);
        }
    }

    fn operand(&mut self, level: u8, depth: u32) -> Eval<'a> {
        match level {
            0 => self.binary(1, depth),
            _ => self.unary(depth),
        }
    }

    fn unary(&mut self, depth: u32) -> Eval<'a> {
        if depth > 32 {
            return Err("nested too deeply");
        }
        match self.peek() {
            Some(c @ (b'-' | b'+')) => {
                self.i += 1;
                let x = int(self.unary(depth + 1)?)?;
                Ok(Val::Int(if c == b'-' { x.checked_neg().ok_or(OVERFLOW)? } else { x }))
            }
            Some(b'(') => {
                self.i += 1;
                let v = self.binary(0, depth + 1)?;
                if self.peek() != Some(b')') {
                    return Err("a `(` is not closed");
                }
                self.i += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_alphanumeric() || c == b'_' => {
                let at = self.i;
                while self.s.get(self.i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                    self.i += 1;
                }
                let word = core::str::from_utf8(&self.s[at..self.i]).unwrap_or("");
                match c.is_ascii_digit() {
                    true => integer(word).and_then(|n| i64::try_from(n).ok()).map(Val::Int).ok_or("a bad integer"),
                    false => (self.name)(word).ok_or("an unknown name"),
                }
            }
            _ => Err("a missing operand"),
        }
    }
}

/// A `gen` dimension: a range (start, step, count) or a list of values.
enum Dim<'v> {
    Range(i64, i64, u64),
    List(&'v [Value]),
}

impl<'v> Dim<'v> {
    fn parse(v: &'v Value) -> Option<Dim<'v>> {
        if let Some(list) = v.as_array() {
            return Some(Dim::List(list));
        }
        let int = |k: &str, default: Option<i64>| v.get(k).map_or(default, Value::as_i64);
        let (start, stop, step) = (int("start", Some(0))?, int("stop", None)?, int("step", Some(1))?);
        let (span, by) = (stop.abs_diff(start), step.unsigned_abs());
        let n = match step {
            0 => return None,
            _ if (stop > start) != (step > 0) || span == 0 => 0,
            _ => span / by + u64::from(span % by != 0),
        };
        Some(Dim::Range(start, step, n))
    }

    fn len(&self) -> u64 {
        match self {
            Dim::Range(_, _, n) => *n,
            Dim::List(l) => l.len() as u64,
        }
    }

    fn at(&self, k: u64) -> Option<Val<'v>> {
        match self {
            // Within the range, so it fits: wrapping arithmetic gives it exactly.
            Dim::Range(start, step, _) => Some(Val::Int(start.wrapping_add(step.wrapping_mul(k as i64)))),
            Dim::List(l) => match l.get(k as usize)? {
                Value::String(s) => Some(Val::Text(s)),
                v => v.as_i64().map(Val::Int),
            },
        }
    }
}

struct Builder<'f> {
    file: &'f str,
    resolve: Option<&'f dyn ResolveUrl>,
    /// The most bytes the index may take, and what it takes so far.
    limit: u64,
    bytes: u64,
    pool: String,
    refs: Vec<Ref>,
    /// The last target as written, and where it is, resolved, in the pool (a file's keys come
    /// together).
    last: Option<(String, (u32, u32))>,
    /// Template names, sorted, and their text expanded.
    tnames: Vec<String>,
    tvalues: Vec<String>,
}

impl<'f> Builder<'f> {
    /// An empty index of `file`, within four times `limit` (`maxMetadataBytes`).
    fn new(file: &'f str, resolve: Option<&'f dyn ResolveUrl>, limit: u64) -> Builder<'f> {
        Builder {
            file,
            resolve,
            limit: limit.saturating_mul(4).min(crate::core::error::MAX_ALLOC),
            bytes: 0,
            pool: String::new(),
            refs: Vec::new(),
            last: None,
            tnames: Vec::new(),
            tvalues: Vec::new(),
        }
    }

    fn bad_key(&self, key: &str, what: &dyn fmt::Display) -> Error {
        bad(self.file, &format_args!("key \"{key}\": {what}"))
    }

    fn grow(&mut self, n: usize) -> Result<()> {
        self.bytes = self.bytes.saturating_add(n as u64);
        if self.bytes > self.limit {
            let what = format!("{}: its index", self.file);
            return Err(too_large(&what, self.bytes, self.limit, "4 × maxMetadataBytes"));
        }
        Ok(())
    }

    /// `text` into the pool: where it is.
    fn put(&mut self, text: &str) -> Result<(u32, u32)> {
        self.grow(text.len())?;
        let at = self.pool.len() as u32;
        self.pool.push_str(text);
        Ok((at, text.len() as u32))
    }

    fn push(&mut self, key: &str, (url, url_len): (u32, u32), offset: u64, len: u64) -> Result<()> {
        self.grow(REF_BYTES as usize)?;
        let (key, key_len) = self.put(key)?;
        self.refs.push(Ref { key, key_len, url, url_len, offset, len });
        Ok(())
    }

    fn inline(&mut self, key: &str, kind: u32, value: &str) -> Result<()> {
        let (at, len) = self.put(value)?;
        self.push(key, (kind, 0), at.into(), len.into())
    }

    /// The members of a map of references.
    fn members(&mut self, text: &[u8]) -> Result<()> {
        let mut failed = None;
        let mut each = |k: &str, r: Reference| {
            let done = match r {
                Reference::Text(s) => match s.strip_prefix("base64:") {
                    Some(b) => self.inline(k, BASE64, b),
                    None => self.inline(k, INLINE, &s),
                },
                Reference::Target(url, range) => self.reference(k, &url, range.map(|(o, n)| (Some(o), Some(n)))),
                Reference::Other(v) => self.value(k, v),
            };
            match done {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        };
        let object = json::for_each_reference(text, &mut each).map_err(|e| bad(self.file, &e))?;
        match failed {
            Some(e) => Err(e),
            None if !object => Err(bad(self.file, &"`refs` is not an object")),
            None => Ok(()),
        }
    }

    fn value(&mut self, key: &str, v: Value) -> Result<()> {
        let (list, url) = match v {
            Value::String(s) => {
                return match s.strip_prefix("base64:") {
                    Some(b) => self.inline(key, BASE64, b),
                    None => self.inline(key, INLINE, &s),
                }
            }
            Value::Array(a) if matches!(a.len(), 1 | 3) && a[0].is_string() => {
                let url = a[0].as_str().unwrap_or_default().to_string();
                (a, url)
            }
            _ => return Err(self.bad_key(key, &"not text, [url] or [url, offset, length]")),
        };
        self.reference(key, &url, (list.len() == 3).then(|| (list[1].as_u64(), list[2].as_u64())))
    }

    /// Key `key`: all of `url`, or `length` bytes at `offset` of it.
    fn reference(&mut self, key: &str, url: &str, range: Option<(Option<u64>, Option<u64>)>) -> Result<()> {
        let target = self.target(url, key)?;
        let (offset, len) = match range {
            None => (0, WHOLE),
            Some((Some(o), Some(n))) if o.checked_add(n).is_some_and(|e| e < WHOLE) => (o, n),
            _ => return Err(self.bad_key(key, &"no byte range")),
        };
        self.push(key, target, offset, len)
    }

    /// `text` with each `{{ expr }}` replaced by its value, into `out`; names are `vars` (a `gen`
    /// entry's dimensions), then templates.
    fn render(&self, text: &str, vars: &[(&str, Val)], out: &mut String) -> Result<()> {
        out.clear();
        let fail = |why: &str| bad(self.file, &format_args!("{why} in \"{text}\""));
        let name = |n: &str| match vars.iter().find(|v| v.0 == n) {
            Some(v) => Some(v.1),
            None => search(self.tnames.len(), &|i| &self.tnames[i], n).map(|i| Val::Text(&self.tvalues[i])),
        };
        let mut rest = text;
        while let Some(i) = twice(rest, b'{') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let j = twice(after, b'}').ok_or_else(|| fail("an unclosed {{"))?;
            let mut e = Expr { s: &after.as_bytes()[..j], i: 0, name: &name };
            match e.binary(0, 0).map_err(fail)? {
                _ if e.peek().is_some() => return Err(fail("an unsupported expression")),
                // Writing to a String does not fail.
                Val::Int(n) => drop(write!(out, "{n}")),
                Val::Text(t) => out.push_str(t),
            }
            if out.len() > MAX_TEXT {
                return Err(fail("expands past 65536 bytes"));
            }
            rest = &after[j + 2..];
        }
        out.push_str(rest);
        Ok(())
    }

    /// The templates, expanded: one naming others in as many passes as they nest (16 at most;
    /// a cycle never ends).
    fn templates(&mut self, v: &Value) -> Result<()> {
        let given: Vec<(&String, &Value)> = match v {
            Value::Object(m) => m.iter().collect(),
            Value::Null => Vec::new(),
            _ => return Err(bad(self.file, &"`templates` is not an object")),
        };
        // Sorted by name, for lookups (a name given twice: either).
        for i in crate::core::nd::order(given.len(), &|a, b| given[a].0 < given[b].0) {
            let t = given[i].1.as_str().ok_or_else(|| bad(self.file, &"a template is not text"))?;
            self.tnames.push(given[i].0.clone());
            self.tvalues.push(t.to_string());
        }
        let mut out = String::new();
        for _ in 0..16 {
            let mut again = false;
            for t in 0..self.tvalues.len() {
                if self.tvalues[t].contains("{{") {
                    self.render(&self.tvalues[t], &[], &mut out)?;
                    core::mem::swap(&mut self.tvalues[t], &mut out);
                    again = true;
                }
            }
            if !again {
                return Ok(());
            }
        }
        Err(bad(self.file, &"templates in a cycle"))
    }

    /// The target written as `written` (for `key`), resolved, in the pool. Resolved once per run
    /// of keys naming it (a file's keys come together).
    fn target(&mut self, written: &str, key: &str) -> Result<(u32, u32)> {
        if let Some((w, t)) = &self.last {
            if w == written {
                return Ok(*t);
            }
        }
        let mut url = String::new();
        self.render(written, &[], &mut url)?;
        let url = resolve_target(self.file, self.resolve, &url)
            .map_err(|e| Error::new(e.code, format!("{}: key \"{key}\": {}", self.file, e.message)))?;
        self.grow(written.len())?;
        let t = self.put(&url)?;
        self.last = Some((written.to_string(), t));
        Ok(t)
    }

    /// `gen` entries, each the keys `[url]` or `[url, offset, length]` its templates give for
    /// every combination of its dimensions — counted before they are made.
    fn gen(&mut self, v: &Value) -> Result<()> {
        let list = match v {
            Value::Array(list) => &list[..],
            Value::Null => &[],
            _ => return Err(bad(self.file, &"`gen` is not a list")),
        };
        for (g, entry) in list.iter().enumerate() {
            let fail = || bad(self.file, &format_args!("`gen` entry {g}: bad dimensions, key, url, offset or length"));
            let mut dims = Vec::new();
            let mut count: u64 = 1;
            for (name, d) in entry.get("dimensions").and_then(Value::as_object).into_iter().flatten() {
                let d = Dim::parse(d).ok_or_else(fail)?;
                count = count.saturating_mul(d.len());
                dims.push((name.as_str(), d));
            }
            if count.saturating_mul(REF_BYTES) > self.limit.saturating_sub(self.bytes) {
                let why = format!("{}: `gen` makes {count} keys, above 4 × maxMetadataBytes", self.file);
                return Err(Error::new(ErrorCode::TooLarge, why));
            }
            let text = |k: &str| match entry.get(k) {
                Some(Value::String(s)) => Some(s.as_str()),
                Some(Value::Number(n)) => Some(n.as_str()),
                _ => None,
            };
            let fields = match ["key", "url", "offset", "length"].map(text) {
                [Some(k), Some(u), None, None] => alloc::vec![k, u],
                [Some(k), Some(u), Some(o), Some(n)] => alloc::vec![k, u, o, n],
                _ => return Err(fail()),
            };
            let mut at = alloc::vec![0u64; dims.len()];
            let mut out = alloc::vec![String::new(); fields.len()];
            let mut vars = Vec::new();
            for _ in 0..count {
                vars.clear();
                for (k, (name, d)) in dims.iter().enumerate() {
                    vars.push((*name, d.at(at[k]).ok_or_else(fail)?));
                }
                for (k, f) in fields.iter().enumerate() {
                    self.render(f, &vars, &mut out[k])?;
                }
                let range = (out.len() == 4).then(|| (integer(out[2].trim()), integer(out[3].trim())));
                self.reference(&out[0], &out[1], range)?;
                // The next combination: the last dimension fastest (Python's itertools.product).
                for d in (0..at.len()).rev() {
                    at[d] += 1;
                    if at[d] < dims[d].1.len() {
                        break;
                    }
                    at[d] = 0;
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Index> {
        let Builder { pool, refs, .. } = self;
        let keys: Vec<&[u8]> = refs.iter().map(|r| key_bytes(&pool, r)).collect();
        let order = crate::core::nd::order(refs.len(), &|a, b| keys[a] < keys[b]);
        let mut sorted: Vec<Ref> = Vec::with_capacity(refs.len());
        let mut last: Option<usize> = None;
        for i in order {
            // Stable: of equal keys the last given wins.
            if last.is_some_and(|l| keys[l] == keys[i]) {
                sorted.pop();
            }
            sorted.push(refs[i]);
            last = Some(i);
        }
        drop(keys);
        Ok(Index { pool, refs: sorted, parquet: None })
    }
}

/// A target URL (templates expanded) as fetched: a relative one against the reference file's
/// URL, then the caller's resolver, then `s3://` and `gs://` as public HTTPS.
fn resolve_target(file: &str, resolve: Option<&dyn ResolveUrl>, url: &str) -> Result<String> {
    let mut url = join_url(file, url);
    if let Some(r) = resolve {
        url = r.resolve(&url)?;
    }
    let url = public_https(&url);
    if url.starts_with("file:") {
        return Err(Error::new(ErrorCode::UnsupportedFormat, "a local file (see resolveUrl)"));
    }
    Ok(url)
}

/// Where `c` first stands twice in a row (`{{`, `}}`): a byte scan, where `str::find` builds a
/// substring searcher per call (a third of expanding a large `gen` at opt-level "z").
fn twice(s: &str, c: u8) -> Option<usize> {
    s.as_bytes().windows(2).position(|w| w[0] == c && w[1] == c)
}

/// A non-negative decimal integer, and nothing else.
fn integer(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, c| match c {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(c - b'0')),
        _ => None,
    })
}

/// Where `key` is among `n` sorted keys, `at(i)` the i-th.
fn search<'k>(n: usize, at: &dyn Fn(usize) -> &'k str, key: &str) -> Option<usize> {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match at(mid).cmp(key) {
            core::cmp::Ordering::Less => lo = mid + 1,
            core::cmp::Ordering::Greater => hi = mid,
            core::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::storage::{ByteRange, Config, Method, Mount, Request, Response, Store};
    use alloc::collections::BTreeMap;
    use alloc::vec;
    use futures_executor::block_on;

    const FILE: &str = "https://h/d/refs.json";

    /// Objects in memory, served with ranges (416 past the end), 404 when absent; every request logged.
    #[derive(Default)]
    struct Mem {
        files: BTreeMap<String, Vec<u8>>,
        log: RefCell<Vec<(String, Option<String>)>>,
    }

    impl Mem {
        fn with(files: &[(&str, &[u8])]) -> Mem {
            let files = files.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect();
            Mem { files, log: RefCell::default() }
        }
        fn requests(&self) -> Vec<(String, Option<String>)> {
            self.log.borrow().clone()
        }
    }

    /// Pending once: requests overlap as over a network.
    struct YieldOnce(bool);
    impl core::future::Future for YieldOnce {
        type Output = ();
        fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<()> {
            if self.0 {
                return core::task::Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            core::task::Poll::Pending
        }
    }

    impl HttpClient for Mem {
        async fn send(&self, req: Request<'_>) -> Result<Response> {
            self.log.borrow_mut().push((req.url.to_string(), req.range.clone()));
            YieldOnce(false).await;
            let Some(body) = self.files.get(req.url) else { return Ok(Response { status: 404, ..Default::default() }) };
            let size = body.len() as u64;
            if req.method == Method::Head {
                return Ok(Response { status: 200, content_length: Some(size), ..Default::default() });
            }
            let Some((a, b)) = req.range.as_deref().and_then(|r| r.strip_prefix("bytes=")?.split_once('-')) else {
                return Ok(Response {
                    status: 200,
                    content_length: Some(size),
                    body: body.clone(),
                    ..Default::default()
                });
            };
            let (a, b): (u64, u64) = match a.is_empty() {
                true => (size.saturating_sub(b.parse().unwrap()), size - 1),
                false => (a.parse().unwrap(), b.parse::<u64>().unwrap().min(size - 1)),
            };
            if a >= size {
                return Ok(Response { status: 416, ..Default::default() });
            }
            let body = body[a as usize..=b as usize].to_vec();
            let content_range = Some(format!("bytes {a}-{b}/{size}"));
            Ok(Response {
                status: 206,
                content_range,
                content_length: Some(body.len() as u64),
                body,
                ..Default::default()
            })
        }
    }

    fn index(text: &str) -> Result<Index> {
        index_with(text, None, 16 << 20)
    }

    fn index_with(text: &str, resolve: Option<&dyn ResolveUrl>, limit: u64) -> Result<Index> {
        Ok(parse(text.as_bytes(), FILE, resolve, limit, true)?.unwrap())
    }

    /// What a key holds, as text: `url@offset+len`, `url` (whole), `inline:…`, `base64:…`.
    fn show(i: &Index, key: &str) -> Option<String> {
        let r = i.get(key)?;
        let url = text(&i.pool, r.url.into(), r.url_len.into());
        Some(match r.url {
            INLINE => format!("inline:{}", text(&i.pool, r.offset, r.len)),
            BASE64 => format!("base64:{}", text(&i.pool, r.offset, r.len)),
            _ if r.len == WHOLE => url.to_string(),
            _ => format!("{url}@{}+{}", r.offset, r.len),
        })
    }

    fn code(r: Result<Index>) -> ErrorCode {
        r.err().map(|e| e.code).expect("an error")
    }

    #[test]
    fn version_0_is_a_plain_map() {
        let i = index(r#"{".zgroup": "{}", "a/0": ["x.h5", 10, 5], "a/1": ["s3://b/k.nc"], "a/2": "base64:AAEC", "a/.zarray": "{\"x\":1}"}"#)
            .unwrap();
        assert_eq!(i.len(), 5);
        assert_eq!(show(&i, "a/0").unwrap(), "https://h/d/x.h5@10+5");
        assert_eq!(show(&i, "a/1").unwrap(), "https://b.s3.amazonaws.com/k.nc");
        assert_eq!(show(&i, "a/2").unwrap(), "base64:AAEC");
        assert_eq!(show(&i, "a/.zarray").unwrap(), "inline:{\"x\":1}");
        assert!(i.get("a/3").is_none() && i.get("").is_none());
    }

    #[test]
    fn version_1_templates_and_gen() {
        // The fixture refs_gen.json, and a template naming another.
        let text = r#"{"version": 1, "templates": {"u": "{{dir}}/grid_u16.raw", "dir": "gs://bk/p"},
          "refs": {"grid/0.0": ["{{u}}", 0, 160], "grid/2.1": "later gen entries win"},
          "gen": [{"key": "grid/{{i}}.{{j}}", "url": "{{u}}", "offset": "{{(i * 3 + j) * 160}}", "length": "160",
                   "dimensions": {"i": {"start": 0, "stop": 3}, "j": [1, 2]}},
                  {"key": "grid/{{ i }}.0", "url": "{{u}}", "offset": "{{i * 3 * 160}}", "length": 160,
                   "dimensions": {"i": {"start": 1, "stop": 3, "step": 1}}},
                  {"key": "v/{{name}}/{{t}}", "url": "f{{t}}.nc", "dimensions": {"name": ["tas", "pr"], "t": {"start": 4, "stop": 0, "step": -2}}}]}"#;
        let i = index(text).unwrap();
        let u = "https://storage.googleapis.com/bk/p/grid_u16.raw";
        assert_eq!(i.len(), 9 + 4);
        for (key, at) in
            [("0.0", 0), ("0.1", 1), ("0.2", 2), ("1.0", 3), ("1.1", 4), ("1.2", 5), ("2.0", 6), ("2.1", 7), ("2.2", 8)]
        {
            assert_eq!(show(&i, &format!("grid/{key}")).unwrap(), format!("{u}@{}+160", at * 160), "{key}");
        }
        assert_eq!(show(&i, "v/pr/2").unwrap(), "https://h/d/f2.nc");
        assert_eq!(show(&i, "v/tas/4").unwrap(), "https://h/d/f4.nc");
        assert!(i.get("v/tas/0").is_none(), "stop is excluded");
        // A target once per run of keys naming it: `{{u}}` in refs, its text in gen, then
        // f4, f2, f4, f2.
        let mut urls: Vec<u32> = i.refs.iter().filter(|r| r.url < BASE64).map(|r| r.url).collect();
        urls.sort();
        urls.dedup();
        assert_eq!(urls.len(), 6);
    }

    #[test]
    fn expressions() {
        let value = |expr: &str| -> core::result::Result<String, Error> {
            let text = format!(
                r#"{{"version": 1, "gen": [{{"key": "k", "url": "{{{{{expr}}}}}", "dimensions": {{"i": [7], "j": [-3]}}}}]}}"#
            );
            let i = index(&text)?;
            Ok(show(&i, "k").unwrap().trim_start_matches("https://h/d/").to_string())
        };
        assert_eq!(value("1 + 2 * 3").unwrap(), "7");
        assert_eq!(value("(1 + 2) * 3").unwrap(), "9");
        assert_eq!(value("i // 2").unwrap(), "3");
        assert_eq!(value("-i // 2").unwrap(), "-4", "floor division rounds down");
        assert_eq!(value("i % -3").unwrap(), "-2", "modulo takes the divisor's sign");
        assert_eq!(value("j % 5").unwrap(), "2");
        assert_eq!(value("- - i").unwrap(), "7");
        assert_eq!(value("+i - 10 - 2").unwrap(), "-5", "left to right");
        assert_eq!(value("i*i*i % 100").unwrap(), "43");
        assert_eq!(value("((((i))))").unwrap(), "7");
        assert_eq!(value("i * 0 + 0 * j").unwrap(), "0");
        assert_eq!(value("-9223372036854775807 - 1").unwrap(), "-9223372036854775808");
        assert_eq!(value("2 * (3 + 4) % 5 - j // 2").unwrap(), "6", "(14 % 5) - (-3 // 2) = 4 + 2");
        for bad in [
            "i / 2",
            "i ** 2",
            "i | string",
            "9223372036854775807 + 1",
            "-9223372036854775807 - 2",
            "99999999999999999999",
            "i // 0",
            "i % 0",
            "k",
            "",
            "(i",
            "i)",
            "'a'",
            "i.j",
            "u ~ i",
        ] {
            let e = value(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMetadata, "{bad}: {e:?}");
            assert!(e.message.contains(FILE), "{}", e.message);
        }
        let deep = format!("{}i{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(value(&deep).unwrap_err().code, ErrorCode::InvalidMetadata);
        // A template's text is text: no arithmetic on it.
        let text = r#"{"version": 1, "templates": {"a": "x"}, "refs": {"k": ["{{a + 1}}"]}}"#;
        assert_eq!(code(index(text)), ErrorCode::InvalidMetadata);
    }

    #[test]
    fn urls_resolve_against_the_reference_file() {
        let b = "https://h/a/b/refs.json?sig=1";
        assert_eq!(join_url(b, "x.h5"), "https://h/a/b/x.h5");
        // Dot segments are fetch's to resolve (tests/js/containers.test.mjs: the server sees them resolved).
        assert_eq!(join_url(b, "../x.h5?t=1"), "https://h/a/b/../x.h5?t=1");
        assert_eq!(join_url(b, "/root/x.h5"), "https://h/root/x.h5");
        assert_eq!(join_url(b, "//cdn/x.h5"), "https://cdn/x.h5");
        assert_eq!(join_url(b, "s3://bucket/x.h5"), "s3://bucket/x.h5");
        assert_eq!(join_url(b, "sub/"), "https://h/a/b/sub/");
        assert_eq!(join_url("https://h", "x"), "https://h/x");
        // The caller's resolver sees relative targets resolved, s3:// as written; what it
        // returns is then mapped.
        #[derive(Debug)]
        struct Mine;
        impl ResolveUrl for Mine {
            fn resolve(&self, url: &str) -> Result<String> {
                match url.strip_prefix("s3://") {
                    Some(rest) => Ok(format!("https://minio.local/{rest}")),
                    None if url.contains("fail") => Err(Error::new(ErrorCode::InvalidSelection, "no signer for it")),
                    None if url.starts_with("https://h/") => Ok(url.replace("/d/", "/signed/") + "?sig=2"),
                    None => Ok(url.to_string()),
                }
            }
        }
        let text = r#"{"a": ["s3://b/x.nc", 0, 1], "b": ["y.h5"], "c": ["gs://g/z"]}"#;
        let i = index_with(text, Some(&Mine), 1 << 20).unwrap();
        assert_eq!(show(&i, "a").unwrap(), "https://minio.local/b/x.nc@0+1");
        assert_eq!(show(&i, "b").unwrap(), "https://h/signed/y.h5?sig=2");
        assert_eq!(show(&i, "c").unwrap(), "https://storage.googleapis.com/g/z");
        let e = code_and(index_with(r#"{"a": ["fail.h5"]}"#, Some(&Mine), 1 << 20));
        assert!(e.code == ErrorCode::InvalidSelection && e.message.contains(FILE), "{e:?}");
        // A local file cannot be read.
        let e = code_and(index(r#"{"a": ["file:///tmp/x.h5", 0, 4]}"#));
        assert!(e.code == ErrorCode::UnsupportedFormat && e.message.contains("resolveUrl"), "{e:?}");
    }

    #[test]
    fn hostile_files_are_typed_errors_naming_the_file_and_key() {
        let cases: &[(&str, ErrorCode, &str)] = &[
            (r#"{"a/0": ["x", -1, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 0, -10]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 1.5, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 18446744073709551615, 1]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 18446744073709551616, 1]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 9223372036854775808, 9223372036854775808]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": ["x", 0]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": [1, 0, 10]}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": null}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": 17}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"a/0": {"url": "x"}}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"version": 1, "refs": {"a/0": true}}"#, ErrorCode::InvalidMetadata, "a/0"),
            (r#"{"version": 1, "refs": []}"#, ErrorCode::InvalidMetadata, "not an object"),
            (r#"{"version": 2, "refs": {}}"#, ErrorCode::UnsupportedFormat, "version 2"),
            (
                r#"{"version": 1, "templates": {"a": "{{b}}", "b": "x{{c}}", "c": "{{a}}"}, "refs": {}}"#,
                ErrorCode::InvalidMetadata,
                "cycle",
            ),
            (r#"{"version": 1, "templates": {"a": "{{a}}"}, "refs": {}}"#, ErrorCode::InvalidMetadata, "cycle"),
            (r#"{"version": 1, "templates": {"a": 1}, "refs": {}}"#, ErrorCode::InvalidMetadata, "template"),
            (r#"{"version": 1, "refs": {"k": ["{{nope}}"]}}"#, ErrorCode::InvalidMetadata, "nope"),
            (r#"{"version": 1, "refs": {"k": ["{{u"]}}"#, ErrorCode::InvalidMetadata, "unclosed"),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "offset": "0", "dimensions": {"i": [1]}}]}"#,
                ErrorCode::InvalidMetadata,
                "`gen` entry 0",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "offset": "{{-i}}", "length": "1", "dimensions": {"i": [1]}}]}"#,
                ErrorCode::InvalidMetadata,
                "k1",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k", "url": "x", "dimensions": {"i": {"start": 0, "stop": 5, "step": 0}}}]}"#,
                ErrorCode::InvalidMetadata,
                "`gen` entry 0",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "x", "dimensions": {"i": [null]}}]}"#,
                ErrorCode::InvalidMetadata,
                "`gen` entry 0",
            ),
            (r#"{"version": 1, "gen": {}}"#, ErrorCode::InvalidMetadata, "gen"),
            // 10⁹ keys: refused before any is made.
            (
                r#"{"version": 1, "gen": [{"key": "k/{{i}}.{{j}}", "url": "x", "offset": "{{i}}", "length": "1",
                   "dimensions": {"i": {"stop": 1000000}, "j": {"stop": 1000}}}]}"#,
                ErrorCode::TooLarge,
                "1000000000 keys",
            ),
            // Far beyond u64: saturates, still refused.
            (
                r#"{"version": 1, "gen": [{"key": "k", "url": "x", "dimensions": {"i": {"start": -9223372036854775808, "stop": 9223372036854775807},
                   "j": {"start": -9223372036854775808, "stop": 9223372036854775807}}}]}"#,
                ErrorCode::TooLarge,
                "gen",
            ),
            // A template doubling at each step.
            (
                r#"{"version": 1, "templates": {"a": "{{b}}{{b}}", "b": "{{c}}{{c}}", "c": "{{d}}{{d}}", "d": "{{e}}{{e}}", "e": "{{f}}{{f}}",
                   "f": "{{g}}{{g}}", "g": "{{h}}{{h}}", "h": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, "refs": {}}"#,
                ErrorCode::InvalidMetadata,
                "65536",
            ),
            (r#"{"a": "b""#, ErrorCode::InvalidMetadata, "EOF"),
            (r#"[1, 2]"#, ErrorCode::InvalidMetadata, "not a JSON object"),
        ];
        for (text, want, names) in cases {
            let e = code_and(index(text));
            assert_eq!(e.code, *want, "{text}: {e:?}");
            assert!(e.message.contains(FILE) && e.message.contains(names), "{text}: {}", e.message);
        }
    }

    fn code_and(r: Result<Index>) -> Error {
        r.err().expect("an error")
    }

    #[test]
    fn the_index_is_bounded() {
        // 4 × the document limit: a file of many tiny keys, or a gen just under the key count.
        let text = format!("{{{}\"z\": \"\"}}", (0..2000).map(|k| format!("\"{k}\": \"\", ")).collect::<String>());
        assert_eq!(code(index_with(&text, None, 16 << 10)), ErrorCode::TooLarge);
        assert_eq!(index_with(&text, None, 64 << 10).unwrap().len(), 2001);
        let gen = r#"{"version": 1, "gen": [{"key": "a-long-key-prefix-to-grow-the-pool/{{i}}", "url": "x", "dimensions": {"i": {"stop": 1500}}}]}"#;
        let e = code_and(index_with(gen, None, 16 << 10));
        assert!(e.code == ErrorCode::TooLarge && e.message.contains("maxMetadataBytes"), "{e:?}");
    }

    #[test]
    fn detection_reads_the_document_once() {
        let store = Store::new(Config::default());
        let c = Mem::with(&[
            ("https://h/v0.json", br#"{"a/.zarray": "{}", "a/0": ["x", 0, 1]}"#),
            ("https://h/other.json", br#"{"version": 1, "name": "a package"}"#),
            ("https://h/cut.json", br#"{"refs": {"a"#),
        ]);
        let found = block_on(detect(&store, &c, "https://h/v0.json", false, None)).unwrap().unwrap();
        assert_eq!(found.prefix, "https://h/v0.json/");
        assert!(block_on(detect(&store, &c, "https://h/other.json", false, None)).unwrap().is_none());
        assert!(block_on(detect(&store, &c, "https://h/absent.json", false, None)).unwrap().is_none());
        assert!(block_on(detect(&store, &c, "https://h/x.zarr", false, None)).unwrap().is_none());
        assert_eq!(c.requests().len(), 3, "one request per .json document, none for another URL");
        let forced = block_on(detect(&store, &c, "https://h/other.json", true, None)).unwrap().unwrap();
        assert!(forced.held.borrow().as_ref().is_some_and(|i| i.is_empty()), "a version-1 file without refs is empty");
        let code = |url: &str, forced| block_on(detect(&store, &c, url, forced, None)).unwrap_err().code;
        assert_eq!(code("https://h/cut.json", false), ErrorCode::InvalidMetadata);
        assert_eq!(code("https://h/absent.json", true), ErrorCode::NotFound);
        // A Parquet reference set is a directory: its .zmetadata is read (the query kept).
        let before = c.requests().len();
        assert_eq!(code("https://h/refs.parquet/", false), ErrorCode::NotFound);
        assert_eq!(code("https://h/refs.parq?x=1", true), ErrorCode::NotFound);
        let asked: Vec<String> = c.requests()[before..].iter().map(|r| r.0.clone()).collect();
        assert_eq!(asked, ["https://h/refs.parquet/.zmetadata", "https://h/refs.parq/.zmetadata?x=1"]);
        // Too large for maxMetadataBytes: named.
        let small = Store::new(Config { max_document: 10, ..Config::default() });
        let e = block_on(detect(&small, &c, "https://h/v0.json", true, None)).unwrap_err();
        assert!(e.code == ErrorCode::TooLarge && e.message.contains("https://h/v0.json"), "{e:?}");
    }

    /// A store with `text` mounted at [`FILE`], and targets beside it.
    fn mounted(text: &str, targets: &[(&str, &[u8])]) -> (Store, Mem) {
        let mut files = vec![(FILE, text.as_bytes())];
        files.extend_from_slice(targets);
        let store = Store::new(Config::default()).with_mount(Mount::References(Rc::new(References::new(FILE, None))));
        (store, Mem::with(&files))
    }

    fn spans(store: &Store, c: &Mem, keys: &[&str]) -> Vec<Result<Option<Vec<u8>>>> {
        let wanted: Vec<(String, ByteRange)> = keys.iter().map(|k| (format!("{FILE}/{k}"), ByteRange::Full)).collect();
        let mut out: Vec<Result<Option<Vec<u8>>>> = keys.iter().map(|_| Ok(None)).collect();
        block_on(store.read_spans(c, &wanted, |i, got| {
            out[i] = got;
            Ok(())
        }))
        .unwrap();
        out
    }

    #[test]
    fn chunks_of_one_target_are_one_request_inline_ones_none() {
        let text = r#"{"a/0": ["t.bin", 2, 3], "a/1": ["t.bin", 6, 2], "a/2": "hi", "a/3": "base64:aGk=", "a/4": ["t.bin"],
                       "a/5": ["gone.bin", 0, 4], "a/6": ["t.bin", 9, 4], "a/7": "base64:a*b", "a/8": "base64:aGkx2"}"#;
        let (store, c) = mounted(text, &[("https://h/d/t.bin", b"0123456789")]);
        let got = spans(&store, &c, &["a/0", "a/1", "a/2", "a/3", "missing"]);
        let bytes: Vec<Option<Vec<u8>>> = got.into_iter().map(|g| g.unwrap()).collect();
        assert_eq!(
            bytes,
            [Some(b"234".to_vec()), Some(b"67".to_vec()), Some(b"hi".to_vec()), Some(b"hi".to_vec()), None]
        );
        let sent = c.requests();
        assert_eq!(sent.len(), 2, "the reference file, then one merged range: {sent:?}");
        assert_eq!(sent[1], ("https://h/d/t.bin".to_string(), Some("bytes=2-7".to_string())));
        // Inline keys need no request, ever.
        assert!(spans(&store, &c, &["a/2", "a/3"]).iter().all(|g| g.as_ref().is_ok_and(Option::is_some)));
        assert_eq!(c.requests().len(), 2);
        // A whole target; a range of a parent's subrange.
        assert_eq!(
            block_on(store.read(&c, &format!("{FILE}/a/4"), ByteRange::Range { offset: 1, len: 2 }))
                .unwrap()
                .unwrap()
                .bytes,
            b"12"
        );
        assert_eq!(block_on(store.read_document(&c, &format!("{FILE}/a/0"), 100)).unwrap().unwrap(), b"234");
        // A missing target is a missing chunk.
        assert!(spans(&store, &c, &["a/5"])[0].as_ref().unwrap().is_none());
        // Past the target's end: the server's 416, naming the reference file, the key and the target.
        let e = spans(&store, &c, &["a/6"]).remove(0).unwrap_err();
        assert_eq!(e.code, ErrorCode::CorruptShard);
        assert!(e.message.contains(&format!("{FILE}/a/6")) && e.message.contains("t.bin"), "{}", e.message);
        // Bad base64: that chunk alone fails.
        for key in ["a/7", "a/8"] {
            let e = spans(&store, &c, &[key]).remove(0).unwrap_err();
            assert!(e.code == ErrorCode::CorruptChunk && e.message.contains(FILE) && e.message.contains(key), "{e:?}");
        }
        assert_eq!(c.requests().iter().filter(|r| r.0 == FILE).count(), 1, "the reference file is read once");
    }

    #[test]
    fn reads_at_once_before_the_index_is_held_share_one_read_of_the_file() {
        let (store, c) = mounted(r#"{"a/0": "x", "a/1": "y"}"#, &[]);
        let (a, b) = (format!("{FILE}/a/0"), format!("{FILE}/a/1"));
        let both = futures_util::future::join(store.read_document(&c, &a, 10), store.read_document(&c, &b, 10));
        let (a, b) = block_on(both);
        assert_eq!((a.unwrap().unwrap(), b.unwrap().unwrap()), (b"x".to_vec(), b"y".to_vec()));
        assert_eq!(c.requests().len(), 1);
    }

    #[test]
    fn a_bad_reference_file_fails_every_read_and_the_store_stays_usable() {
        let (store, c) = mounted(r#"{"version": 1, "refs": {"a/0": ["x", -1, 2]}}"#, &[]);
        let e = spans(&store, &c, &["a/0"]).remove(0).unwrap_err();
        assert!(e.code == ErrorCode::InvalidMetadata && e.message.contains(FILE), "{e:?}");
        let e = block_on(store.read_document(&c, &format!("{FILE}/.zgroup"), 100)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidMetadata);
        assert!(block_on(store.read_document(&c, "https://h/d/elsewhere", 100)).unwrap().is_none());
    }
}
