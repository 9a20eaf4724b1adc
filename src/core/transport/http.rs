//! The HTTP client trait, byte ranges, and what an answer's status means for a read.
//!
//! The binding layer implements [`HttpClient`] with `fetch`; tests implement it in memory.
use crate::core::error::{Error, ErrorCode, Result};
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Request<'a> {
    pub method: Method,
    pub url: &'a str,
    /// The `Range` header value, e.g. `bytes=0-99` or `bytes=-100`.
    pub range: Option<String>,
    /// The most body bytes wanted: a client should stop reading (or not start, when the
    /// `Content-Length` says more) past it; the store checks it either way.
    pub limit: Option<u64>,
    /// The bytes a ranged request asks for: a partial (206) answer may carry no more. A client
    /// stops reading one that runs longer, drops the connection and fails the request; the
    /// store checks it either way. (`limit` still bounds a 200: a server ignoring Range.)
    pub asked: Option<u64>,
    /// Milliseconds without an answer or without body progress after which the client gives
    /// the request up with a `Network` error saying it stalled (it is then retried).
    pub stall_ms: Option<f64>,
    /// When (in [`HttpClient::now`]'s milliseconds) the read's retry budget, plus one stall
    /// time, runs out: a client should not keep a request waiting for a connection slot past
    /// it while its origin shows no progress (a silent server holds every slot).
    pub deadline: Option<f64>,
    /// A validator the answer must match (the `conditional` option).
    pub condition: Option<Condition>,
    /// What the platform's HTTP cache may do with it.
    pub cache: CacheMode,
    /// The `mergeGap` and `mergeMax` by which a client may merge this ranged request with its
    /// neighbours waiting for a slot (see `dispatch`); `None`: sent alone.
    pub merge: Option<(u64, u64)>,
    /// Told of the body as it arrives (see [`Progress`]); a client that reads bodies whole
    /// may ignore it.
    pub progress: Early<'a>,
}

/// Told of an answer's body as it arrives, so that what lies in its first bytes is used
/// before the rest is in (a merged read's spans decoded while the others download).
pub trait Progress {
    /// `head`: the answer's status and headers (no body); `body`: its bytes so far, from
    /// the first (a retry starts again from none).
    fn arrived(&self, head: &Response, body: &[u8]);
}

/// A request's [`Progress`], if any (compared and shown as present or not).
#[derive(Clone, Copy, Default)]
pub struct Early<'a>(pub Option<&'a dyn Progress>);

impl core::fmt::Debug for Early<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(if self.0.is_some() { "progress" } else { "-" })
    }
}

impl PartialEq for Early<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.is_some() == other.0.is_some()
    }
}

impl<'a> Request<'a> {
    /// A request with nothing but its method, URL and `Range` (tests, probes).
    pub fn new(method: Method, url: &'a str, range: Option<String>) -> Self {
        Request { method, url, range, limit: None, asked: None, stall_ms: None, deadline: None, condition: None, cache: CacheMode::NoStore, merge: None, progress: Early(None) }
    }
}

/// A conditional request's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `If-Match: <etag>`: 412 when the object is another version.
    IfMatch(String),
    /// `If-Unmodified-Since: <date>` (no strong tag visible): 412 when modified since.
    IfUnmodifiedSince(String),
    /// `If-Range: <etag or date>`: the range when unchanged, else 200 and the whole object.
    IfRange(String),
}

/// The `cache` mode of a browser's `fetch` (Node's has no HTTP cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// `no-store`: neither from nor into the cache. Ranges and `HEAD`s: a cached range of an
    /// older version must not answer (and Chrome serialises concurrent range reads of one URL
    /// through its cache otherwise).
    NoStore,
    /// `no-cache`: a cached copy only once the server confirmed it (a conditional request, 304).
    /// Whole objects (documents): never a stale copy, nor the body again when unchanged.
    Revalidate,
}

#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    pub content_range: Option<String>,
    pub content_length: Option<u64>,
    /// The `Retry-After` header (seconds, or an HTTP date).
    pub retry_after: Option<String>,
    /// The validators, where the client can see them (a browser shows `ETag` cross-origin only
    /// when the server exposes it; `Last-Modified` always).
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub body: Vec<u8>,
    /// A waiter's part of an answer another request received (merged at dispatch): its request
    /// and bytes are that one's, not counted again.
    pub shared: bool,
    /// The whole answer of a request merged at dispatch, of which this is the part of the
    /// request it was sent for: (its offset, its bytes), whose gaps its transport may keep.
    pub held: Option<(u64, Rc<Vec<u8>>)>,
}

impl Response {
    /// The status and headers, without the body.
    pub fn clone_head(&self) -> Response {
        Response {
            status: self.status,
            content_range: self.content_range.clone(),
            content_length: self.content_length,
            retry_after: self.retry_after.clone(),
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
            body: Vec::new(),
            shared: self.shared,
            held: None,
        }
    }
}

/// One HTTP exchange, and what retrying needs of the platform (the core has no clock or
/// timer of its own). Transport failures are `Network` errors, cancellations `Aborted`.
pub trait HttpClient {
    async fn send(&self, req: Request<'_>) -> Result<Response>;
    /// Whether this caller's own request was cancelled.
    fn is_aborted(&self) -> bool {
        false
    }
    /// Wait `ms` milliseconds before a retry (ends early, or not at all, when aborted).
    async fn sleep(&self, _ms: f64) {}
    /// Milliseconds since some origin, for the retry budget; `None`: no clock (attempts only).
    fn now(&self) -> Option<f64> {
        None
    }
    /// A number in `[0, 1)`, for the backoff's jitter.
    fn random(&self) -> f64 {
        0.5
    }
}

/// Seconds of a `Retry-After` value given in seconds (an HTTP date is not parsed: the
/// backoff's own delay applies).
pub fn retry_after_ms(v: &str) -> Option<f64> {
    v.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(|s| s * 1000.0)
}

/// Which bytes of an object to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteRange {
    Full,
    Range {
        offset: u64,
        len: u64,
    },
    /// The last `n` bytes.
    Suffix(u64),
    /// The last `n` bytes, or the whole object when it is shorter (a zip archive's end).
    Tail(u64),
    /// The first `n` bytes, or the whole object when it is shorter (a zip archive's start); a
    /// hint: a server that ignores the range and sends more is `TooLarge`, not read on.
    Head(u64),
    /// The first `n` bytes, or the whole object when it is shorter (a TIFF's header and
    /// directories); read as any range is (retried, a whole answer kept).
    Prefix(u64),
}

/// `bytes a-b/total` → (a, b, total); total may be `*`.
pub fn parse_content_range(v: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let (a, b) = span.split_once('-')?;
    let total = if total.trim() == "*" { None } else { Some(total.trim().parse().ok()?) };
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?, total))
}

/// What a status means for a read.
pub(crate) enum Status {
    Partial,
    Whole,
    Missing,
    Refused,
}

/// Whether an answer with this status may be retried: timeouts, throttling, server errors.
pub fn transient(status: u16) -> bool {
    matches!(status, 408 | 425 | 429) || ((500..600).contains(&status) && !matches!(status, 501 | 505))
}

pub(crate) fn classify(url: &str, status: u16, treat403_as_missing: bool) -> Result<Status> {
    match status {
        206 => Ok(Status::Partial),
        200 => Ok(Status::Whole),
        404 | 410 => Ok(Status::Missing),
        403 if treat403_as_missing => Ok(Status::Missing),
        // A conditional read refused: the object is another version (see `Transport::send`).
        412 => Err(Error::new(ErrorCode::Changed, format!("{url}: changed while open (HTTP 412)")).with_status(412)),
        400 | 416 => Ok(Status::Refused),
        s => Err(Error::new(ErrorCode::HttpError, format!("{url}: HTTP {s}")).with_status(s)),
    }
}

/// An answer whose bytes are not the ones asked for.
pub(crate) fn short(url: &str, what: &str) -> Error {
    Error::new(ErrorCode::CorruptShard, format!("{url}: {what}"))
}

pub(crate) fn http_error(url: &str, status: u16) -> Error {
    Error::new(ErrorCode::HttpError, format!("{url}: HTTP {status}")).with_status(status)
}
