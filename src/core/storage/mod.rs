//! Storage: reading bytes of objects over HTTP. Transport only — the [`HttpClient`] trait,
//! byte ranges and the fallbacks real servers need, in-flight sharing, coalescing of spans
//! wanted together, the request limiter, the byte-bounded cache, counters; stores inside
//! objects (zip archives, Icechunk repositories). Knows nothing of arrays, shards or formats.
//!
//! May import: `error`, `nd`, `json`, `zstd`, `crc`.
//!
//! (The layers, bottom up: error and nd, storage, metadata, codec, shard, layout, read, open;
//! each imports only those below it, see `core`.)
pub mod cache;
pub mod coalesce;
pub mod dedup;
pub mod flatbuf;
pub mod http;
pub mod icechunk;
pub mod known;
pub mod limit;
pub mod objects;
pub mod parquet;
pub mod refs;
mod store;
pub mod url;
pub mod vecmap;
pub mod zip;

pub use http::{ByteRange, HttpClient, Method, Request, Response};
pub use known::Known;
pub use objects::{Objects, RangeRead};
pub use store::{Config, Container, Mount, Retry, Stats, Store};

use alloc::format;
use alloc::string::String;

/// The `N` bytes at `at` of `b` (for a little-endian number), or `None` past its end: the bounded
/// read the stores that parse binary indexes (zip directories, flatbuffers) share.
pub(crate) fn le<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
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
