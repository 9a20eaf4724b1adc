//! URL helpers every layer uses: a signed URL's query kept apart from its path, paths joined.
//!
//! May import: nothing.
use alloc::format;
use alloc::string::{String, ToString};

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

/// `s3://bucket/key` and `gs://bucket/key` as their public HTTPS URLs (Neuroglancer's mapping);
/// anything else unchanged.
pub fn public_https(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("gs://") {
        return format!("https://storage.googleapis.com/{rest}");
    }
    if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        return format!("https://{bucket}.s3.amazonaws.com/{key}");
    }
    url.to_string()
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
