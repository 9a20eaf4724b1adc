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
mod build;
mod index;
mod records;
mod template;
#[cfg(test)]
mod tests;

use super::kind::{Container, Kind, Mounting, ResolveUrl};
use super::place::Place;
use crate::core::error::{Error, ErrorCode, Result};
use crate::core::json::{self, Value};
use crate::core::transport::{HttpClient, Objects};
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use build::{bad, parse};
use index::{key_of, text, Index, BASE64, INLINE, KEY_INDEX, REF_BYTES, WHOLE};

pub use build::join_url;

type Loading<'a> = core::pin::Pin<Box<dyn core::future::Future<Output = Result<Option<Rc<Index>>>> + 'a>>;

/// A reference file as a layer: the objects under its URL and `/` are its keys (shared by the
/// stores of its nodes behind an `Rc`).
pub struct References {
    /// The reference file's URL, its query (a signed URL's token) kept.
    url: String,
    resolve: Option<Rc<dyn ResolveUrl>>,
    /// The decoders kept outside the module: `parquet` reads a Parquet set's record files.
    decoders: Option<Rc<dyn crate::core::external::Decoders>>,
    /// The index, once read: held for the layer's life (per version of the file), as the
    /// byte-bounded cache may let it go (and reading the file again costs its whole size).
    held: crate::core::store::Kept<Rc<Index>>,
}

/// Whether `url` (before its query and trailing slashes) ends in one of `names`, in any case.
fn named(url: &str, names: &[&str]) -> bool {
    let base = crate::core::urls::split_url(url).0.to_ascii_lowercase();
    names.iter().any(|n| base.ends_with(n))
}

impl Kind for References {
    const NAME: &'static str = "references";

    /// JSON (`.json`) or Parquet (`.parq`, `.parquet`).
    fn named(url: &str) -> bool {
        named(url, &[".json", ".parq", ".parquet"])
    }

    fn new(url: &str, how: &Mounting) -> Result<Option<Self>> {
        Ok(Some(References { url: String::from(url), resolve: how.resolve.clone(), decoders: how.decoders.clone(), held: Default::default() }))
    }

    /// Read once; `None` when it is not one (then nothing else is read). Forced (`store:
    /// "references"`): it must be one. A Parquet reference set (`….parq`, `….parquet`: a
    /// directory) is read from its `.zmetadata`; its record files when a chunk needs them.
    async fn detect<S: Objects, C: HttpClient>(below: &S, c: &C, url: &str, how: &Mounting) -> Result<Option<Self>> {
        if !how.forced && !Self::named(url) {
            return Ok(None);
        }
        let refs = References { url: String::from(url), resolve: how.resolve.clone(), decoders: how.decoders.clone(), held: Default::default() };
        let stamp = below.stamp(url);
        let Some(index) = refs.load(below, c, how.forced).await? else { return Ok(None) };
        refs.held.set(stamp, below.stamp(url), index);
        Ok(Some(refs))
    }

    fn url(&self) -> &str {
        &self.url
    }

    async fn place<S: Objects, C: HttpClient>(&self, below: &S, c: &C, key: &str) -> Result<Place> {
        References::place(self, below, c, key).await
    }

    async fn describe<S: Objects, C: HttpClient>(&self, _below: &S, _c: &C) -> Container {
        Container { kind: Self::NAME, url: self.url.clone(), comment: String::new(), version: String::new() }
    }

    fn children(&self, path: &str) -> Option<Vec<(String, bool)>> {
        Some(References::children(self, path))
    }

    fn decoders(&self) -> &'static [&'static str] {
        match self.held.any() {
            Some(i) if i.parquet.is_some() => &["parquet"],
            _ => &[],
        }
    }

    fn keys_share_objects(&self) -> bool {
        true
    }
}

impl References {
    /// The index: held since detection, or read once (after the array was rebuilt from its
    /// state) however many reads want it at the same time.
    pub async fn index<S: Objects, C: HttpClient>(&self, store: &S, c: &C) -> Result<Rc<Index>> {
        let stamp = store.stamp(&self.url);
        if let Some(i) = self.held.get(stamp) {
            return Ok(i);
        }
        // Forced: never `None`.
        let work = || async { self.load(store, c, true).await?.ok_or_else(|| bad(&self.url, &"")) };
        let size = |i: &Rc<Index>| i.pool.len() + i.refs.len() * REF_BYTES as usize;
        let i = store.memo(c, &self.url, alloc::vec![KEY_INDEX], size, work).await?;
        self.held.set(stamp, store.stamp(&self.url), (*i).clone());
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
            let Some(text) = store.read_document(c, &self.url, limit).await? else {
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
    fn children(&self, path: &str) -> Vec<(String, bool)> {
        let Some(index) = self.held.any() else { return Vec::new() };
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
    async fn place<S: Objects, C: HttpClient>(&self, store: &S, c: &C, name: &str) -> Result<Place> {
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
                store.described_by(&url, &self.url);
                match r.len {
                    WHOLE => Place::Whole(url),
                    len => Place::Range { url, offset: r.offset, len },
                }
            }
        })
    }
}

