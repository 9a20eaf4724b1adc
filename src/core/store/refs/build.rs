//! A kerchunk / VirtualiZarr JSON reference file read into an [`Index`]: version 0 (a plain map)
//! and 1 (`refs`, `templates`, `gen`), templates expanded, targets resolved, the index bounded.
use super::index::{key_bytes, Index, Ref, BASE64, INLINE, REF_BYTES, WHOLE};
use super::template::{integer, Dim, Expr, Val};
use crate::core::error::{too_large, Error, ErrorCode, Result};
use crate::core::json::{self, Keep, Reference, Value};
use crate::core::store::kind::ResolveUrl;
use crate::core::urls::public_https;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write};

/// The most bytes one template may expand to.
const MAX_TEXT: usize = 1 << 16;
/// A key of a Zarr node's metadata: what a version-0 reference file is recognised by.
fn metadata_key(k: &str) -> bool {
    [".zarray", ".zgroup", ".zattrs", "zarr.json"].iter().any(|m| k.ends_with(m))
}

pub(super) fn bad(file: &str, what: &dyn fmt::Display) -> Error {
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
    let origin = crate::core::urls::origin(base);
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

pub(super) struct Builder<'f> {
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
    pub(super) fn new(file: &'f str, resolve: Option<&'f dyn ResolveUrl>, limit: u64) -> Builder<'f> {
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

    pub(super) fn inline(&mut self, key: &str, kind: u32, value: &str) -> Result<()> {
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
            None => crate::core::nd::find_sorted(self.tnames.len(), &|i| &self.tnames[i], n).map(|i| Val::Text(&self.tvalues[i])),
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

    pub(super) fn finish(self) -> Result<Index> {
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
pub(super) fn resolve_target(file: &str, resolve: Option<&dyn ResolveUrl>, url: &str) -> Result<String> {
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
