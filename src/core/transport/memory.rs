//! An in-memory object server for tests: objects by URL, answered as real servers answer (ranges,
//! suffix ranges, 416 past the end) or as the ones that bite do ([`Serve`]: ranges ignored,
//! suffixes refused, a hidden or lying `Content-Range`, 403 for missing keys, 5xx), with a log
//! of every request (and of the bytes asked and sent), a virtual clock for retries, a source of
//! the backoff's jitter, and a hook that answers a request its own way (faults). Objects are
//! held, read from a source by URL (a fixtures directory), or made range by range (too large to
//! hold: what a hostile server claims). Every object has a version — each `put` a new one — shown
//! as S3, GCS and nginx show it (`ETag`, `Last-Modified`; or only the latter, as a browser shows
//! a cross-origin answer whose `ETag` is not exposed; or neither: [`Validators`]), and
//! conditional requests are answered as RFC 9110 has it. Nothing here is used by the library
//! itself.
use super::http::{parse_content_range, Condition, HttpClient, Method, Request, Response};
use crate::core::error::{Error, ErrorCode, Result};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// How the server answers a request for an object it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Serve {
    #[default]
    Honest,
    /// Every ranged GET answered 200 with the whole object.
    IgnoreRange,
    /// Suffix ranges refused with 416 (others served).
    NoSuffix416,
    /// Suffix ranges refused with 400.
    NoSuffix400,
    /// Suffix ranges refused with 416, and HEAD and partial answers without `Content-Length`.
    NoSuffixNoLength,
    /// 206 without `Content-Range` (a browser hides it from cross-origin reads).
    NoContentRange,
    /// A `Content-Range` one byte off (the body is the bytes asked for).
    LyingRange,
    /// A missing object is 403, as S3 answers when listing is not allowed.
    Forbid403,
    /// Every request answered 500.
    Always500,
}

/// Which validators answers carry (and a client sees).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Validators {
    /// `ETag` and `Last-Modified`.
    #[default]
    Both,
    /// `Last-Modified` only (a browser, cross-origin, without `Access-Control-Expose-Headers`).
    Modified,
    /// Neither.
    None,
}

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    pub method: Method,
    pub url: String,
    pub range: Option<String>,
}

impl Logged {
    /// The first and last byte of its `bytes=a-b` range, if it has one.
    pub fn span(&self) -> Option<(u64, u64)> {
        self.range.as_deref().and_then(span)
    }
}

/// The bytes a `Range` header asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asked {
    /// `bytes=a-b` (`bytes=a-`: to the end).
    From(u64, Option<u64>),
    /// `bytes=-n`.
    Suffix(u64),
}

/// `None`: not a `bytes=` range the server understands (400).
fn asked(range: &str) -> Option<Asked> {
    let (a, b) = range.strip_prefix("bytes=")?.split_once('-')?;
    if a.is_empty() {
        return b.parse().ok().map(Asked::Suffix);
    }
    let last = if b.is_empty() { None } else { Some(b.parse().ok()?) };
    Some(Asked::From(a.parse().ok()?, last))
}

/// The first and last byte a `bytes=a-b` `Range` header names (`None`: a suffix, an open
/// range, or no range at all).
pub fn span(range: &str) -> Option<(u64, u64)> {
    match asked(range)? {
        Asked::From(a, Some(b)) => Some((a, b)),
        _ => None,
    }
}

/// How many bytes a request's `Range` names (0: a whole object or an open range, whose size is
/// the server's to know).
fn asked_len(req: &Request<'_>) -> u64 {
    match req.range.as_deref().and_then(asked) {
        Some(Asked::From(a, Some(b))) => b.saturating_sub(a).saturating_add(1),
        Some(Asked::Suffix(n)) => n,
        _ => 0,
    }
}

/// The bytes of `start..end` of an object made on request.
type Make = Rc<dyn Fn(u64, u64) -> Vec<u8>>;

/// An object's bytes: held, or made range by range.
#[derive(Clone)]
enum Body {
    Held(Vec<u8>),
    Made(u64, Make),
}

impl Body {
    fn size(&self) -> u64 {
        match self {
            Body::Held(b) => b.len() as u64,
            Body::Made(n, _) => *n,
        }
    }
    fn bytes(self, start: u64, end: u64) -> Vec<u8> {
        match self {
            Body::Held(b) if start == 0 && end == b.len() as u64 => b,
            Body::Held(b) => b[start as usize..end as usize].to_vec(),
            Body::Made(_, make) => make(start, end),
        }
    }
}

type Source = Box<dyn Fn(&str) -> Option<Vec<u8>>>;
type Hook = Box<dyn Fn(&ObjectServer, &Request<'_>) -> Option<Result<Response>>>;

pub struct ObjectServer {
    source: Source,
    /// Objects and their versions.
    objects: RefCell<BTreeMap<String, (Body, u64)>>,
    versions: Cell<u64>,
    pub serve: Cell<Serve>,
    pub validators: Cell<Validators>,
    hook: Option<Hook>,
    random: Option<Box<dyn Fn() -> f64>>,
    log: RefCell<Vec<Logged>>,
    /// Body bytes of the answers given.
    sent: Cell<u64>,
    /// Bytes the ranges of the requests under way name, and the most at once.
    asking: Cell<u64>,
    peak: Cell<u64>,
    /// Milliseconds of the virtual clock: sleeps advance it.
    pub clock: Cell<f64>,
    /// Turns of the executor each request waits first (so that concurrent reads overlap).
    pub yields: Cell<u32>,
    /// Bodies told to a request's progress in this many pieces, a turn of the executor apart
    /// (0: none told), as a client reading them from the network does.
    pub pieces: Cell<u32>,
    aborted: Cell<bool>,
}

impl Default for ObjectServer {
    fn default() -> Self {
        ObjectServer::new()
    }
}

impl ObjectServer {
    /// A server of the objects [`ObjectServer::put`] gives it.
    pub fn new() -> Self {
        ObjectServer::with_source(|_| None)
    }

    /// A server of the objects `source` returns by URL (its query cut), and those `put`.
    pub fn with_source(source: impl Fn(&str) -> Option<Vec<u8>> + 'static) -> Self {
        ObjectServer {
            source: Box::new(source),
            objects: RefCell::default(),
            versions: Cell::new(0),
            serve: Cell::new(Serve::Honest),
            validators: Cell::new(Validators::Both),
            hook: None,
            random: None,
            log: RefCell::default(),
            sent: Cell::new(0),
            asking: Cell::new(0),
            peak: Cell::new(0),
            clock: Cell::new(0.0),
            yields: Cell::new(0),
            pieces: Cell::new(0),
            aborted: Cell::new(false),
        }
    }

    /// Answer as `serve` says.
    pub fn serving(self, serve: Serve) -> Self {
        self.serve.set(serve);
        self
    }

    /// Answer a request with `hook`'s answer when it gives one (it may call [`ObjectServer::answer`]).
    pub fn with_hook(
        mut self,
        hook: impl Fn(&ObjectServer, &Request<'_>) -> Option<Result<Response>> + 'static,
    ) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    /// The backoff's jitter from `random` (numbers in `[0, 1)`; without one, 0.5).
    pub fn with_random(mut self, random: impl Fn() -> f64 + 'static) -> Self {
        self.random = Some(Box::new(random));
        self
    }

    /// Put (or replace: a new version) the object at `url`.
    pub fn put(&self, url: &str, bytes: impl Into<Vec<u8>>) {
        let v = self.versions.get() + 1;
        self.versions.set(v);
        self.objects.borrow_mut().insert(url.to_string(), (Body::Held(bytes.into()), v));
    }

    /// Remove the object at `url` (a source's too: it answers 404 from now on).
    pub fn delete(&self, url: &str) {
        let v = self.versions.get() + 1;
        self.versions.set(v);
        self.objects.borrow_mut().insert(url.to_string(), (Body::Held(Vec::new()), u64::MAX));
    }

    /// An object of `size` bytes, too large to hold: `make(start, end)` gives the bytes of
    /// each range asked for (a whole-object answer asks for all of them).
    pub fn put_made(&self, url: &str, size: u64, make: impl Fn(u64, u64) -> Vec<u8> + 'static) {
        let v = self.versions.get() + 1;
        self.versions.set(v);
        self.objects.borrow_mut().insert(url.to_string(), (Body::Made(size, Rc::new(make)), v));
    }

    pub fn abort(&self) {
        self.aborted.set(true);
    }

    /// The object at `url` (its query cut, `.` and `..` segments resolved as `fetch` does), if
    /// the server has it.
    pub fn object(&self, url: &str) -> Option<Vec<u8>> {
        self.body(url).map(|b| {
            let n = b.size();
            b.bytes(0, n)
        })
    }

    fn body(&self, url: &str) -> Option<Body> {
        self.versioned(url).map(|(b, _)| b)
    }

    /// The object at `url` and its version (a source's objects: version 0).
    fn versioned(&self, url: &str) -> Option<(Body, u64)> {
        let base = normalized(url.split(['?', '#']).next().unwrap_or(url));
        match self.objects.borrow().get(&base).cloned() {
            Some((_, u64::MAX)) => None,
            Some(found) => Some(found),
            None => (self.source)(&base).map(|b| (Body::Held(b), 0)),
        }
    }

    /// The `ETag` of the object at `url` as it is now (`"v<n>"`), if it exists.
    pub fn etag(&self, url: &str) -> Option<String> {
        self.versioned(url).map(|(_, v)| format!("\"v{v}\""))
    }

    pub fn log(&self) -> Vec<Logged> {
        self.log.borrow().clone()
    }
    pub fn requests(&self) -> usize {
        self.log.borrow().len()
    }
    /// The `Range` headers sent, in order (`None`: a whole-object request).
    pub fn ranges(&self) -> Vec<Option<String>> {
        self.log.borrow().iter().map(|l| l.range.clone()).collect()
    }
    /// Body bytes of the answers given (hook's answers too).
    pub fn sent(&self) -> u64 {
        self.sent.get()
    }
    /// The most bytes that requests under way at once named in their ranges (a suffix's `n`
    /// too; a whole-object request names none).
    pub fn peak_asked(&self) -> u64 {
        self.peak.get()
    }
    /// Forget the log and the counts.
    pub fn reset(&self) {
        self.log.borrow_mut().clear();
        self.sent.set(0);
        self.peak.set(self.asking.get());
    }

    /// The answer `serve` gives to `req`, without the hook; with the object's validators as
    /// `validators` says.
    pub fn answer(&self, req: &Request<'_>) -> Response {
        let mut r = self.answer_plain(req);
        if let (Some((_, v)), true) = (self.versioned(req.url), (200..300).contains(&r.status) || r.status == 412) {
            let shown = self.validators.get();
            if shown == Validators::Both {
                r.etag = Some(format!("\"v{v}\""));
            }
            if shown != Validators::None {
                r.last_modified = Some(http_date(v));
            }
        }
        r
    }

    fn answer_plain(&self, req: &Request<'_>) -> Response {
        let status = |s: u16| Response { status: s, ..Default::default() };
        let serve = self.serve.get();
        if serve == Serve::Always500 {
            return status(500);
        }
        let Some((body, version)) = self.versioned(req.url) else {
            return status(if serve == Serve::Forbid403 { 403 } else { 404 });
        };
        let size = body.size();
        // Conditions, as RFC 9110 evaluates them (a weak tag never matches `If-Match`).
        let (etag, modified) = (format!("\"v{version}\""), http_date(version));
        let mut whole_for_range = false;
        match &req.condition {
            Some(Condition::IfMatch(t)) if *t != etag => return status(412),
            Some(Condition::IfUnmodifiedSince(d)) if *d != modified => return status(412),
            Some(Condition::IfRange(v)) if *v != etag && *v != modified => whole_for_range = true,
            _ => {}
        }
        let no_length = serve == Serve::NoSuffixNoLength;
        if req.method == Method::Head {
            return Response { status: 200, content_length: (!no_length).then_some(size), ..Default::default() };
        }
        let whole = |body: Body| Response {
            status: 200,
            content_length: Some(size),
            body: body.bytes(0, size),
            ..Default::default()
        };
        let Some(range) = req.range.as_deref() else { return whole(body) };
        if serve == Serve::IgnoreRange || whole_for_range {
            return whole(body);
        }
        // As RFC 9110 has it: the object's size with an unsatisfiable range.
        let unsatisfiable =
            Response { status: 416, content_range: Some(format!("bytes */{size}")), ..Default::default() };
        let (start, end) = match asked(range) {
            None => return status(400),
            Some(Asked::Suffix(n)) => {
                match serve {
                    Serve::NoSuffix416 | Serve::NoSuffixNoLength => return status(416),
                    Serve::NoSuffix400 => return status(400),
                    _ => {}
                }
                // No last bytes of an empty object, nor zero of them (RFC 9110: unsatisfiable).
                if n == 0 || size == 0 {
                    return unsatisfiable;
                }
                (size.saturating_sub(n), size)
            }
            Some(Asked::From(a, b)) => {
                let b = b.unwrap_or(u64::MAX);
                if a >= size || b < a {
                    return unsatisfiable;
                }
                (a, b.saturating_add(1).min(size))
            }
        };
        let shift = u64::from(serve == Serve::LyingRange);
        let content_range =
            (serve != Serve::NoContentRange).then(|| format!("bytes {}-{}/{size}", start + shift, end - 1 + shift));
        let content_length = (!no_length).then_some(end - start);
        Response { status: 206, content_range, content_length, body: body.bytes(start, end), ..Default::default() }
    }
}

/// The `Last-Modified` of version `v`: a minute per version (a writer's rewrites, not a copy's
/// files a second apart), from 2024-01-01 on.
fn http_date(v: u64) -> String {
    let (d, m) = (v / 1440, v % 1440);
    format!("Mon, {:02} Jan 2024 {:02}:{:02}:00 GMT", 1 + d % 28, m / 60, m % 60)
}

/// `url` with its `.` and `..` path segments resolved.
fn normalized(url: &str) -> String {
    let after = url.find("://").map_or(0, |i| i + 3);
    let (origin, path) = url.split_at(url[after..].find('/').map_or(url.len(), |i| after + i));
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/').skip(1) {
        match seg {
            "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = String::from(origin);
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    out
}

/// `(start, end, total)` of a 206 answer's `Content-Range`.
pub fn answered_range(r: &Response) -> Option<(u64, u64, Option<u64>)> {
    parse_content_range(r.content_range.as_deref()?)
}

/// Pending once, so that concurrent reads really overlap.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A request's asked bytes, counted among those under way while it lives.
struct UnderWay<'a>(&'a ObjectServer, u64);

impl<'a> UnderWay<'a> {
    fn new(s: &'a ObjectServer, n: u64) -> Self {
        s.asking.set(s.asking.get() + n);
        s.peak.set(s.peak.get().max(s.asking.get()));
        UnderWay(s, n)
    }
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.asking.set(self.0.asking.get() - self.1);
    }
}

impl HttpClient for ObjectServer {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        self.log.borrow_mut().push(Logged { method: req.method, url: req.url.to_string(), range: req.range.clone() });
        let _under_way = UnderWay::new(self, asked_len(&req));
        for _ in 0..self.yields.get() {
            YieldOnce(false).await;
        }
        if self.aborted.get() {
            return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
        }
        let answer = match self.hook.as_ref().and_then(|h| h(self, &req)) {
            Some(answer) => answer,
            None => Ok(self.answer(&req)),
        };
        if let Ok(r) = &answer {
            self.sent.set(self.sent.get() + r.body.len() as u64);
            let n = self.pieces.get() as usize;
            if let (Some(p), true) = (req.progress.0, n > 0) {
                let head = r.clone_head();
                for k in 1..=n {
                    p.arrived(&head, &r.body[..r.body.len() * k / n]);
                    YieldOnce(false).await;
                }
            }
        }
        answer
    }
    fn is_aborted(&self) -> bool {
        self.aborted.get()
    }
    async fn sleep(&self, ms: f64) {
        assert!(ms.is_finite() && ms >= 0.0, "sleep {ms}");
        self.clock.set(self.clock.get() + ms);
    }
    fn now(&self) -> Option<f64> {
        Some(self.clock.get())
    }
    fn random(&self) -> f64 {
        self.random.as_ref().map_or(0.5, |r| r())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_executor::block_on;

    fn get<'a>(url: &'a str, range: Option<&str>) -> Request<'a> {
        Request::new(Method::Get, url, range.map(String::from))
    }

    #[test]
    fn answers_as_real_servers_and_as_the_ones_that_bite() {
        let s = ObjectServer::new();
        s.put("mem://x", (0..10u8).collect::<Vec<u8>>());
        let r = block_on(s.send(get("mem://x?sig=1", Some("bytes=2-4")))).unwrap();
        assert_eq!(
            (r.status, r.body.as_slice(), r.content_range.as_deref()),
            (206, &[2u8, 3, 4][..], Some("bytes 2-4/10"))
        );
        let r = block_on(s.send(get("mem://x", Some("bytes=-3")))).unwrap();
        assert_eq!(r.body, [7, 8, 9]);
        assert_eq!(block_on(s.send(get("mem://x", Some("bytes=10-12")))).unwrap().status, 416);
        assert_eq!(block_on(s.send(get("mem://y", None))).unwrap().status, 404);
        s.serve.set(Serve::IgnoreRange);
        assert_eq!(block_on(s.send(get("mem://x", Some("bytes=2-4")))).unwrap().status, 200);
        s.serve.set(Serve::LyingRange);
        let r = block_on(s.send(get("mem://x", Some("bytes=2-4")))).unwrap();
        assert_eq!(answered_range(&r), Some((3, 5, Some(10))));
        s.serve.set(Serve::NoSuffix400);
        assert_eq!(block_on(s.send(get("mem://x", Some("bytes=-3")))).unwrap().status, 400);
        assert_eq!(s.requests(), 7);
        assert_eq!(s.ranges()[1].as_deref(), Some("bytes=-3"));
        assert_eq!(s.log()[0].span(), Some((2, 4)));
        assert_eq!(s.log()[1].span(), None);
        // Nothing is the last zero bytes, nor the last bytes of an empty object.
        s.serve.set(Serve::Honest);
        s.put("mem://e", Vec::new());
        assert_eq!(block_on(s.send(get("mem://x", Some("bytes=-0")))).unwrap().status, 416);
        assert_eq!(block_on(s.send(get("mem://e", Some("bytes=-4")))).unwrap().status, 416);
    }

    #[test]
    fn made_objects_counts_and_jitter() {
        let s = ObjectServer::new().with_random(|| 0.25);
        s.put_made("mem://big", 1 << 50, |a, b| (a..b).map(|i| i as u8).collect());
        let r = block_on(s.send(get("mem://big", Some("bytes=-2")))).unwrap();
        assert_eq!(
            (r.body, r.content_range.as_deref()),
            (alloc::vec![0xfe, 0xff], Some("bytes 1125899906842622-1125899906842623/1125899906842624"))
        );
        block_on(s.send(get("mem://big", Some("bytes=16-19")))).unwrap();
        assert_eq!((s.sent(), s.peak_asked(), s.random()), (6, 4, 0.25));
        // Two requests under way at once: their asked bytes add up.
        s.yields.set(1);
        let (a, b) = (s.send(get("mem://big", Some("bytes=0-9"))), s.send(get("mem://big", Some("bytes=-5"))));
        let (a, b) = block_on(futures_util::future::join(a, b));
        assert_eq!((a.unwrap().status, b.unwrap().status), (206, 206));
        assert_eq!(s.peak_asked(), 15);
        s.reset();
        assert_eq!((s.requests(), s.sent(), s.peak_asked()), (0, 0, 0));
    }
}
