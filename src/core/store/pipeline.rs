//! URLs as viewer users paste them: `s3://` and `gs://` (public HTTPS endpoints, as Neuroglancer
//! maps them), a format prefix (`zarr3://https://…`), and Neuroglancer's pipeline syntax: `url`
//! then stages `|kind:arg`, each a store kind of the [`registry`](super::registry) over what the
//! URL names so far (`url|zip:inner.zip|zip:raw`: an archive inside an archive, then a node in
//! it), or a format with a node path (`|zarr3:group/a`). The caller names the formats.
use super::kind::Settings;
use super::registry;
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// One store stage: a layer of `kind` over what the URL names so far, and the path inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    pub kind: &'static str,
    pub settings: Settings,
    pub path: String,
}

/// What a pasted URL says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pasted {
    /// The object or store URL, over HTTP(S) (or the caller's scheme, untouched).
    pub url: String,
    /// The store stages, outermost first.
    pub stages: Vec<Stage>,
    /// The format the URL names (one of the caller's).
    pub format: Option<&'static str>,
    /// A node path the URL names after its format (`|zarr3:group/a`).
    pub path: String,
}

/// Schemes read as they are (`mem://` and `warm://`: the tests' and the warm-up's in-memory stores).
const SCHEMES: [&str; 9] = ["http", "https", "gs", "s3", "mem", "warm", "file", "blob", "data"];

fn unsupported(url: &str, what: &str, formats: &[&str]) -> Error {
    let mut read = String::new();
    for f in formats {
        read += &format!("{f}://, ");
    }
    read += "s3://, gs://, https://";
    for k in registry::NAMES.iter().filter(|k| registry::stage(k, "").is_some()) {
        read += &format!(", |{k}:");
    }
    Error::new(ErrorCode::UnsupportedFormat, format!("{url}: {what} is not read ({read} are)"))
}

/// Read a pasted URL; `formats`: the format names a prefix or stage may give.
pub fn parse(pasted: &str, formats: &[&'static str]) -> Result<Pasted> {
    let mut stages = pasted.split('|');
    let mut first = stages.next().unwrap_or("").trim();
    let mut out = Pasted::default();
    // `zarr3://https://…`: a format, then the URL.
    if let Some((scheme, rest)) = first.split_once("://") {
        if let Some(f) = formats.iter().find(|f| **f == scheme) {
            out.format = Some(f);
            first = rest;
            if !first.contains("://") {
                // `precomputed://gs://…` is handled above; `zarr3://host/…` means HTTPS.
                return Err(unsupported(pasted, "a format prefix without a URL after it", formats));
            }
        }
    }
    match first.split_once("://").map(|(s, _)| s) {
        Some(s) if SCHEMES.contains(&s) => {}
        None => {}
        Some(other) => return Err(unsupported(pasted, &format!("the {other}:// scheme"), formats)),
    }
    out.url = crate::core::urls::public_https(first);
    for stage in stages {
        let (name, arg) = stage.split_once(':').unwrap_or((stage, ""));
        if name.is_empty() {
            continue;
        }
        if let Some(read) = registry::stage(name, arg) {
            let (settings, path) = read.map_err(|e| e.at(pasted))?;
            let kind = registry::NAMES.iter().copied().find(|k| *k == name).unwrap_or_default();
            out.stages.push(Stage { kind, settings, path: path.trim_matches('/').to_string() });
            continue;
        }
        match formats.iter().copied().find(|f| *f == name) {
            Some(f) if out.format.is_none_or(|g| g == f) => {
                out.format = Some(f);
                out.path = crate::core::urls::join_paths(&out.path, arg);
            }
            _ => return Err(unsupported(pasted, &format!("the pipeline stage \"{name}\""), formats)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    const FORMATS: [&str; 4] = ["zarr", "zarr2", "zarr3", "precomputed"];

    fn stage(kind: &'static str, settings: &[(&str, &str)], path: &str) -> Stage {
        let settings = settings.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Stage { kind, settings, path: path.into() }
    }

    #[test]
    fn pasted_urls() {
        let p = parse("gs://bucket/a/b.zarr", &FORMATS).unwrap();
        assert_eq!(p.url, "https://storage.googleapis.com/bucket/a/b.zarr");
        let p = parse("s3://my-bucket/data/x.zarr", &FORMATS).unwrap();
        assert_eq!(p.url, "https://my-bucket.s3.amazonaws.com/data/x.zarr");
        let p = parse("zarr3://https://h/x.zarr", &FORMATS).unwrap();
        assert_eq!((p.url.as_str(), p.format), ("https://h/x.zarr", Some("zarr3")));
        let p = parse("https://h/x.zip|zip:inner/path|zarr3:", &FORMATS).unwrap();
        assert_eq!((p.url.as_str(), p.stages.clone(), p.format), ("https://h/x.zip", vec![stage("zip", &[], "inner/path")], Some("zarr3")));
        let p = parse("https://h/a.zip|zip:inner.zip|zip:raw|zarr3:", &FORMATS).unwrap();
        assert_eq!(p.stages, [stage("zip", &[], "inner.zip"), stage("zip", &[], "raw")]);
        let p = parse("zarr2://s3://b/k|zarr2:g/a", &FORMATS).unwrap();
        assert_eq!((p.url.as_str(), p.format, p.path.as_str()), ("https://b.s3.amazonaws.com/k", Some("zarr2"), "g/a"));
        assert_eq!(parse("n5://https://h/x", &FORMATS).unwrap_err().code, ErrorCode::UnsupportedFormat);
        let e = parse("https://h/x|ocdbt:", &FORMATS).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedFormat);
        assert!(e.message.contains("|zip:, |references:, |icechunk:"), "{}", e.message);
        assert_eq!(parse("ftp://h/x", &FORMATS).unwrap_err().code, ErrorCode::UnsupportedFormat);
        let p = parse("s3://b/repo|icechunk:@tag.v1/group/a|zarr3:", &FORMATS).unwrap();
        assert_eq!(p.url, "https://b.s3.amazonaws.com/repo");
        assert_eq!(p.stages, [stage("icechunk", &[("tag", "v1")], "group/a")]);
        let p = parse("https://h/repo|icechunk:raw", &FORMATS).unwrap();
        assert_eq!(p.stages, [stage("icechunk", &[], "raw")]);
        let p = parse("https://h/repo|icechunk:@1CECHNKREP0F1RSTCMT0", &FORMATS).unwrap();
        assert_eq!(p.stages, [stage("icechunk", &[("snapshot", "1CECHNKREP0F1RSTCMT0")], "")]);
    }
}
