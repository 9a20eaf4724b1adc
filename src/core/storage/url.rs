//! URLs as viewer users paste them: `s3://` and `gs://` (public HTTPS endpoints, as
//! Neuroglancer maps them), the format prefixes `zarr://`, `zarr2://`, `zarr3://`,
//! `precomputed://`, and Neuroglancer's pipeline syntax `url|zip:inner/path|zarr3:` (a store
//! inside an archive, then the format and a path in it) and `url|icechunk:@branch.main/path`
//! (`@tag.v1`, `@<snapshot id>`; no `@`: branch `main`).
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::{String, ToString};

/// What a pasted URL says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pasted {
    /// The object or store URL, over HTTP(S) (or the caller's scheme, untouched).
    pub url: String,
    /// A zip archive at `url`, and the path inside it (`|zip:` or a `.zip`/`.ozx` URL).
    pub zip: Option<String>,
    /// The format the URL names (`zarr`, `zarr2`, `zarr3`, `precomputed`).
    pub format: Option<&'static str>,
    /// A node path the URL names after its format (`|zarr3:group/a`) or repository.
    pub path: String,
    /// An Icechunk repository at `url`, at this version as written (`|icechunk:@tag.v1/`:
    /// `tag.v1`; empty: none written).
    pub icechunk: Option<String>,
}

/// The caller's resolver of the URLs a store names (the `resolveUrl` option): a reference file's
/// targets, an Icechunk repository's virtual chunks.
pub trait ResolveUrl: crate::core::error::TestDebug {
    /// The URL to fetch for `url` (templates expanded, a relative one already resolved against
    /// the file naming it); returning `url` keeps it.
    fn resolve(&self, url: &str) -> Result<String>;
}

#[cfg(not(test))]
impl core::fmt::Debug for dyn ResolveUrl + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("resolveUrl")
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

const FORMATS: [&str; 4] = ["zarr", "zarr2", "zarr3", "precomputed"];

fn unsupported(url: &str, what: &str) -> Error {
    Error::new(
        ErrorCode::UnsupportedFormat,
        format!("{url}: {what} is not read (zarr://, zarr2://, zarr3://, precomputed://, s3://, gs://, https://, |zip:, |icechunk: are)"),
    )
}

/// Whether `url` (without its query) names a zip archive by its extension.
pub fn is_zip(url: &str) -> bool {
    let (base, _) = super::split_url(url);
    let lower = base.to_ascii_lowercase();
    lower.ends_with(".zip") || lower.ends_with(".ozx")
}

/// Read a pasted URL.
pub fn parse(pasted: &str) -> Result<Pasted> {
    let mut stages = pasted.split('|');
    let mut first = stages.next().unwrap_or("").trim();
    let mut out = Pasted::default();
    // `zarr3://https://…`: a format, then the URL.
    if let Some((scheme, rest)) = first.split_once("://") {
        if let Some(f) = FORMATS.iter().find(|f| **f == scheme) {
            out.format = Some(f);
            first = rest;
            if !first.contains("://") {
                // `precomputed://gs://…` is handled above; `zarr3://host/…` means HTTPS.
                return Err(unsupported(pasted, "a format prefix without a URL after it"));
            }
        }
    }
    match first.split_once("://").map(|(s, _)| s) {
        // (`mem://` and `warm://`: the tests' and the warm-up's in-memory stores.)
        Some("http" | "https" | "gs" | "s3" | "mem" | "warm" | "file" | "blob" | "data") | None => {}
        Some(other) => return Err(unsupported(pasted, &format!("the {other}:// scheme"))),
    }
    out.url = public_https(first);
    for stage in stages {
        let (kind, arg) = stage.split_once(':').unwrap_or((stage, ""));
        match kind {
            "zip" if out.zip.is_none() => out.zip = Some(arg.trim_matches('/').to_string()),
            "icechunk" if out.icechunk.is_none() => {
                let (version, path) = match arg.strip_prefix('@') {
                    Some(at) => at.split_once('/').unwrap_or((at, "")),
                    None => ("", arg),
                };
                out.icechunk = Some(version.to_string());
                out.path = super::join_paths(&out.path, path);
            }
            k if FORMATS.contains(&k) && out.format.is_none_or(|f| f == k) => {
                out.format = FORMATS.iter().copied().find(|f| *f == k);
                out.path = super::join_paths(&out.path, arg);
            }
            "" => {}
            other => return Err(unsupported(pasted, &format!("the pipeline stage \"{other}\""))),
        }
    }
    if out.zip.is_none() && out.icechunk.is_none() && is_zip(&out.url) {
        out.zip = Some(String::new());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_urls() {
        let p = parse("gs://bucket/a/b.zarr").unwrap();
        assert_eq!(p.url, "https://storage.googleapis.com/bucket/a/b.zarr");
        let p = parse("s3://my-bucket/data/x.zarr").unwrap();
        assert_eq!(p.url, "https://my-bucket.s3.amazonaws.com/data/x.zarr");
        let p = parse("zarr3://https://h/x.zarr").unwrap();
        assert_eq!((p.url.as_str(), p.format), ("https://h/x.zarr", Some("zarr3")));
        let p = parse("https://h/x.zip|zip:inner/path|zarr3:").unwrap();
        assert_eq!(
            (p.url.as_str(), p.zip.as_deref(), p.format),
            ("https://h/x.zip", Some("inner/path"), Some("zarr3"))
        );
        let p = parse("https://h/img.ozx?sig=1").unwrap();
        assert_eq!(p.zip.as_deref(), Some(""));
        let p = parse("zarr2://s3://b/k|zarr2:g/a").unwrap();
        assert_eq!((p.url.as_str(), p.format, p.path.as_str()), ("https://b.s3.amazonaws.com/k", Some("zarr2"), "g/a"));
        assert_eq!(parse("n5://https://h/x").unwrap_err().code, ErrorCode::UnsupportedFormat);
        assert_eq!(parse("https://h/x|ocdbt:").unwrap_err().code, ErrorCode::UnsupportedFormat);
        assert_eq!(parse("ftp://h/x").unwrap_err().code, ErrorCode::UnsupportedFormat);
        let p = parse("s3://b/repo|icechunk:@tag.v1/group/a|zarr3:").unwrap();
        assert_eq!(
            (p.url.as_str(), p.icechunk.as_deref(), p.path.as_str()),
            ("https://b.s3.amazonaws.com/repo", Some("tag.v1"), "group/a")
        );
        let p = parse("https://h/repo|icechunk:raw").unwrap();
        assert_eq!((p.icechunk.as_deref(), p.path.as_str()), (Some(""), "raw"));
        let p = parse("https://h/repo|icechunk:@1CECHNKREP0F1RSTCMT0").unwrap();
        assert_eq!(p.icechunk.as_deref(), Some("1CECHNKREP0F1RSTCMT0"));
    }
}
