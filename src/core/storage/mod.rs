//! Storage: reading bytes of objects over HTTP. Transport only — the [`HttpClient`] trait,
//! byte ranges and the fallbacks real servers need, in-flight sharing, coalescing of spans
//! wanted together, the request limiter, the byte-bounded cache, counters. Knows nothing of
//! arrays, shards or formats.
//!
//! May import: `error`, `nd`, `json`.
//!
//! (The layers, bottom up: error and nd, storage, metadata, codec, shard, layout, read, open;
//! each imports only those below it, see `core`.)
pub mod cache;
pub mod coalesce;
pub mod dedup;
pub mod http;
pub mod limit;
pub mod refs;
mod store;
pub mod url;
pub mod zip;

pub use http::{ByteRange, HttpClient, Method, RangeRead, Request, Response};
pub use store::{Config, Mount, Retry, Stats, Store};

use crate::core::error::Result;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::any::Any;
use core::future::Future;

/// What a store inside an object (a zip archive, a reference file) needs of the [`Store`] holding
/// it (which implements this: a trait, so that the store and its mounts do not import each other).
pub trait Objects {
    /// `maxDecodedBytes` and `maxMetadataBytes`, as the store applies them.
    fn max_body(&self) -> u64;
    fn max_document(&self) -> u64;
    /// [`Store::read_object`].
    async fn read_object<C: HttpClient>(&self, c: &C, url: &str, range: ByteRange) -> Result<Option<RangeRead>>;
    /// [`Store::read_object_document`].
    async fn read_object_document<C: HttpClient>(&self, c: &C, url: &str, limit: u64) -> Result<Option<Vec<u8>>>;
    /// [`Store::memo`].
    async fn memo<C, V, F, Fut>(
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
        Fut: Future<Output = Result<V>>;
}

/// `https://h/a.zarr?sig=1` → (`https://h/a.zarr`, `?sig=1`): keys go before the query (a
/// signed URL's token), which every request keeps.
pub fn split_url(url: &str) -> (String, String) {
    let (base, query) = match url.find(['?', '#']) {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    (String::from(base.trim_end_matches('/')), String::from(query))
}

/// `base` + `/path` (slashes around `path` trimmed; nothing added for an empty path).
pub fn join(base: &str, path: &str) -> String {
    let path = path.trim_matches('/');
    if path.is_empty() {
        String::from(base)
    } else {
        format!("{base}/{path}")
    }
}

/// `a/b` joined with `c/d` as relative paths (for children of a group).
pub fn join_paths(a: &str, b: &str) -> String {
    let (a, b) = (a.trim_matches('/'), b.trim_matches('/'));
    match (a.is_empty(), b.is_empty()) {
        (true, _) => String::from(b),
        (_, true) => String::from(a),
        _ => format!("{a}/{b}"),
    }
}

/// `https://host:port` of a URL (the whole URL when it has no path).
pub fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(split_url("https://h/a.zarr/?sig=1"), ("https://h/a.zarr".into(), "?sig=1".into()));
        assert_eq!(join("https://h/a", "/b/c/"), "https://h/a/b/c");
        assert_eq!(join("https://h/a", ""), "https://h/a");
        assert_eq!(join_paths("/a/", "b"), "a/b");
        assert_eq!(join_paths("", "/b"), "b");
        assert_eq!(origin("https://h:8/a/b"), "https://h:8");
        assert_eq!(origin("mem://x"), "mem://x");
    }
}
