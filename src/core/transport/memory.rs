//! An in-memory object server for tests: objects by URL, answered as real servers answer (ranges,
//! suffix ranges, 416 past the end) or as the ones that bite do ([`Serve`]: ranges ignored,
//! suffixes refused, a hidden or lying `Content-Range`, 403 for missing keys, 5xx), with a log
//! of every request, a virtual clock for retries, and a hook that answers a request its own
//! way (faults). Nothing here is used by the library itself.
use super::http::{parse_content_range, HttpClient, Method, Request, Response};
use crate::core::error::{Error, ErrorCode, Result};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
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
    /// Suffix ranges refused with 416, and HEAD answers without `Content-Length`.
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

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    pub method: Method,
    pub url: String,
    pub range: Option<String>,
}

type Source = Box<dyn Fn(&str) -> Option<Vec<u8>>>;
type Hook = Box<dyn Fn(&ObjectServer, &Request<'_>) -> Option<Result<Response>>>;

pub struct ObjectServer {
    source: Source,
    objects: RefCell<BTreeMap<String, Vec<u8>>>,
    pub serve: Cell<Serve>,
    hook: Option<Hook>,
    log: RefCell<Vec<Logged>>,
    /// Milliseconds of the virtual clock: sleeps advance it.
    pub clock: Cell<f64>,
    /// Each request waits one turn of the executor first (so that concurrent reads overlap).
    pub yields: Cell<bool>,
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
            serve: Cell::new(Serve::Honest),
            hook: None,
            log: RefCell::default(),
            clock: Cell::new(0.0),
            yields: Cell::new(false),
            aborted: Cell::new(false),
        }
    }

    /// Answer as `serve` says.
    pub fn serving(self, serve: Serve) -> Self {
        self.serve.set(serve);
        self
    }

    /// Answer a request with `hook`'s answer when it gives one (it may call [`ObjectServer::answer`]).
    pub fn with_hook(mut self, hook: impl Fn(&ObjectServer, &Request<'_>) -> Option<Result<Response>> + 'static) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    pub fn put(&self, url: &str, bytes: impl Into<Vec<u8>>) {
        self.objects.borrow_mut().insert(url.to_string(), bytes.into());
    }

    pub fn abort(&self) {
        self.aborted.set(true);
    }

    /// The object at `url` (its query cut, `.` and `..` segments resolved as `fetch` does), if
    /// the server has it.
    pub fn object(&self, url: &str) -> Option<Vec<u8>> {
        let base = normalized(url.split(['?', '#']).next().unwrap_or(url));
        self.objects.borrow().get(&base).cloned().or_else(|| (self.source)(&base))
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
    pub fn reset(&self) {
        self.log.borrow_mut().clear();
    }

    /// The answer `serve` gives to `req`, without the hook.
    pub fn answer(&self, req: &Request<'_>) -> Response {
        let status = |s: u16| Response { status: s, ..Default::default() };
        let serve = self.serve.get();
        if serve == Serve::Always500 {
            return status(500);
        }
        let Some(body) = self.object(req.url) else {
            return status(if serve == Serve::Forbid403 { 403 } else { 404 });
        };
        let size = body.len() as u64;
        if req.method == Method::Head {
            return Response { status: 200, content_length: (serve != Serve::NoSuffixNoLength).then_some(size), ..Default::default() };
        }
        let whole = |body: Vec<u8>| Response { status: 200, content_length: Some(size), body, ..Default::default() };
        let Some(spec) = req.range.as_deref().and_then(|r| r.strip_prefix("bytes=")) else { return whole(body) };
        if serve == Serve::IgnoreRange {
            return whole(body);
        }
        let Some((a, b)) = spec.split_once('-') else { return status(400) };
        let (start, end) = if a.is_empty() {
            match serve {
                Serve::NoSuffix416 | Serve::NoSuffixNoLength => return status(416),
                Serve::NoSuffix400 => return status(400),
                _ => {}
            }
            let Ok(n) = b.parse::<u64>() else { return status(400) };
            (size.saturating_sub(n), size)
        } else {
            let (Ok(a), Ok(b)) = (a.parse::<u64>(), if b.is_empty() { Ok(u64::MAX) } else { b.parse::<u64>() }) else {
                return status(400);
            };
            if a >= size || b < a {
                return status(416);
            }
            (a, b.saturating_add(1).min(size))
        };
        let shift = u64::from(serve == Serve::LyingRange);
        let content_range = (serve != Serve::NoContentRange)
            .then(|| format!("bytes {}-{}/{size}", start + shift, end - 1 + shift));
        let body = body[start as usize..end as usize].to_vec();
        Response { status: 206, content_range, content_length: Some(end - start), body, retry_after: None }
    }
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

impl HttpClient for ObjectServer {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        self.log.borrow_mut().push(Logged { method: req.method, url: req.url.to_string(), range: req.range.clone() });
        if self.yields.get() {
            YieldOnce(false).await;
        }
        if self.aborted.get() {
            return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
        }
        if let Some(answer) = self.hook.as_ref().and_then(|h| h(self, &req)) {
            return answer;
        }
        Ok(self.answer(&req))
    }
    fn is_aborted(&self) -> bool {
        self.aborted.get()
    }
    async fn sleep(&self, ms: f64) {
        self.clock.set(self.clock.get() + ms);
    }
    fn now(&self) -> Option<f64> {
        Some(self.clock.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_executor::block_on;

    fn get<'a>(url: &'a str, range: Option<&str>) -> Request<'a> {
        Request { method: Method::Get, url, range: range.map(String::from), limit: None, asked: None, stall_ms: None, deadline: None }
    }

    #[test]
    fn answers_as_real_servers_and_as_the_ones_that_bite() {
        let s = ObjectServer::new();
        s.put("mem://x", (0..10u8).collect::<Vec<u8>>());
        let r = block_on(s.send(get("mem://x?sig=1", Some("bytes=2-4")))).unwrap();
        assert_eq!((r.status, r.body.as_slice(), r.content_range.as_deref()), (206, &[2u8, 3, 4][..], Some("bytes 2-4/10")));
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
    }
}
