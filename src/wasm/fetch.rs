//! `fetch` as the core's [`HttpClient`]: the platform's global `fetch` (window, worker, Node)
//! or the caller's, with extra headers, an abort signal, and a per-origin limit on requests in
//! flight with priorities.
use crate::core::transport::dispatch::{Group, Spot};
use crate::core::transport::limit::{dispatch, Limiter};
use crate::core::transport::http::Early;
use crate::core::transport::{CacheMode, Condition, HttpClient, Method, Request, Response};
use crate::core::{Error, ErrorCode, Result};
use super::origins::limiter;
use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

/// Removes the caller-signal listener that forwards an abort to a request's own controller.
struct Unlink(Option<(AbortSignal, Closure<dyn FnMut()>)>);

impl Drop for Unlink {
    fn drop(&mut self) {
        if let Some((s, f)) = &self.0 {
            s.remove_event_listener_with_callback("abort", f.as_ref().unchecked_ref()).ok();
        }
    }
}

/// A response body's reader: a BYOB reader filling one buffer over and over where the body is
/// a byte stream (browsers, Node), so that reading leaves no garbage piece per read behind;
/// otherwise the default reader.
struct BodyReader {
    reader: JsValue,
    read: Option<Function>,
    byob: bool,
    /// BYOB: the buffer to read into next.
    buffer: Option<Uint8Array>,
    /// The body ended or was cancelled: nothing left to stop when this is dropped.
    done: bool,
}

/// Bytes a BYOB read asks for at most.
const BYOB_PIECE: u32 = 256 << 10;

impl BodyReader {
    /// `byob`: read through one reused buffer where the platform can (the caller copies each
    /// piece before the next read); otherwise each read brings a piece of its own.
    fn new(stream: &web_sys::ReadableStream, byob: bool) -> BodyReader {
        let options = Object::new();
        Reflect::set(&options, &"mode".into(), &"byob".into()).ok();
        let get = Reflect::get(stream, &"getReader".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        let byob = get.filter(|_| byob).and_then(|f| f.call1(stream, &options).ok());
        let (reader, buffer) = match byob {
            Some(r) => (r, Some(Uint8Array::new_with_length(BYOB_PIECE))),
            None => (stream.get_reader().into(), None),
        };
        let read = Reflect::get(&reader, &"read".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        BodyReader { reader, read, byob: buffer.is_some(), buffer, done: false }
    }

    /// The next read's promise.
    fn read(&mut self) -> Promise {
        let Some(read) = &self.read else { return Promise::reject(&"no read method".into()) };
        let got = match self.buffer.take() {
            Some(b) => read.call1(&self.reader, &b),
            None => read.call0(&self.reader),
        };
        got.ok().and_then(|p| p.dyn_into::<Promise>().ok()).unwrap_or_else(|| Promise::reject(&"read failed".into()))
    }

    /// The bytes a read brought (`None`: the body is over), its buffer kept for the next read.
    fn took(&mut self, piece: &JsValue) -> Option<Uint8Array> {
        if Reflect::get(piece, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            self.done = true;
            return None;
        }
        let chunk: Uint8Array = Reflect::get(piece, &"value".into()).ok()?.dyn_into().ok()?;
        if self.byob {
            self.buffer = Some(Uint8Array::new(&chunk.buffer()));
        }
        Some(chunk)
    }

    /// Stop the body: what is still on its way is dropped unread.
    fn cancel(&mut self) {
        if !self.done {
            self.done = true;
            // (The BYOB reader's `cancel` is the default reader's.)
            settle(self.reader.unchecked_ref::<web_sys::ReadableStreamDefaultReader>().cancel(), false);
        }
    }
}

/// A body not read to its end is cancelled, whatever ended its reading (an error, a limit, a
/// stall, the read dropped): never left on the wire (see [`cancel_body`]).
impl Drop for BodyReader {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Cancels the body of `resp` (a `Response`) unless a reader holds it (whose owner stops it):
/// an answer not read is never left on the wire. Node's `fetch` (undici before 8) ends the
/// process with an uncatchable error when a server closes a connection whose answer sits
/// unread under backpressure (undici#5360); elsewhere it holds the connection and its buffers.
fn cancel_body(resp: &JsValue) {
    if let Some(body) = resp.unchecked_ref::<web_sys::Response>().body().filter(|b| !b.locked()) {
        settle(body.cancel(), false);
    }
}

/// Waits on `p` for no one: its rejection handled (a stream that already failed rejects its
/// cancel: unhandled, an error of the page, or the end of a Node process); `cancel`: the
/// `Response` it brings is not wanted, its body cancelled on arrival.
fn settle(p: Promise, cancel: bool) {
    wasm_bindgen_futures::spawn_local(async move {
        match JsFuture::from(p).await {
            Ok(r) if cancel && r.is_object() => cancel_body(&r),
            _ => {}
        }
    });
}

/// A signal that aborts once every waiter of `group` has (where each has a signal), and the
/// listeners that tell it (removed when dropped).
fn all_aborted(group: &Group) -> Option<(AbortSignal, Vec<Unlink>)> {
    let signals: Option<Vec<AbortSignal>> =
        group.tokens().iter().map(|t| t.as_ref()?.downcast_ref::<AbortSignal>().cloned()).collect();
    let live: Vec<AbortSignal> = signals?.into_iter().filter(|s| !s.aborted()).collect();
    let ctl = web_sys::AbortController::new().ok()?;
    let left = Rc::new(core::cell::Cell::new(live.len()));
    if live.is_empty() {
        ctl.abort();
    }
    let links = live
        .into_iter()
        .map(|s| {
            let (left, ctl) = (left.clone(), ctl.clone());
            let f = Closure::<dyn FnMut()>::new(move || {
                left.set(left.get().saturating_sub(1));
                if left.get() == 0 {
                    ctl.abort();
                }
            });
            s.add_event_listener_with_callback("abort", f.as_ref().unchecked_ref()).ok();
            Unlink(Some((s, f)))
        })
        .collect();
    Some((ctl.signal(), links))
}

/// `AbortSignal.any([a, b])`, where the platform has it.
fn any_signal(a: &AbortSignal, b: &AbortSignal) -> Option<AbortSignal> {
    let ctor = Reflect::get(&js_sys::global(), &"AbortSignal".into()).ok()?;
    let any = Reflect::get(&ctor, &"any".into()).ok()?.dyn_into::<js_sys::Function>().ok()?;
    any.call1(&ctor, &js_sys::Array::of2(a, b)).ok()?.dyn_into::<AbortSignal>().ok()
}

/// Clears a timer and an abort listener when a wait ends or is dropped (Node would otherwise
/// be kept alive by the timer, and a batch's shared signal would pile up listeners).
struct Wait {
    timer: JsValue,
    listener: Option<(AbortSignal, Function)>,
}

impl Drop for Wait {
    fn drop(&mut self) {
        if let Some(clear) = global_fn("clearTimeout") {
            let _ = clear.call1(&JsValue::NULL, &self.timer);
        }
        if let Some((s, f)) = &self.listener {
            let _ = s.remove_event_listener_with_callback("abort", f);
        }
    }
}

/// Wait `ms` milliseconds (a backoff), or until `signal` aborts.
pub async fn sleep_until(ms: f64, signal: Option<&AbortSignal>) {
    let Some(set) = global_fn("setTimeout") else { return };
    // Cleared when the wait ends or is dropped.
    let mut wait = Wait { timer: JsValue::UNDEFINED, listener: None };
    let p = Promise::new(&mut |resolve, _| {
        wait.timer = set.call2(&JsValue::NULL, &resolve, &JsValue::from(ms.max(0.0))).unwrap_or(JsValue::UNDEFINED);
        if let Some(s) = signal {
            let _ = s.add_event_listener_with_callback("abort", &resolve);
            wait.listener = Some((s.clone(), resolve));
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Wait `ms` milliseconds.
pub async fn sleep_ms(ms: f64) {
    sleep_until(ms, None).await
}

/// `performance.now()` where the platform has it (windows, workers, Node), else `Date.now()`.
pub fn now() -> f64 {
    std::thread_local! {
        static PERFORMANCE: Option<(Function, JsValue)> = {
            let p = Reflect::get(&js_sys::global(), &"performance".into()).ok().filter(|p| p.is_object());
            p.and_then(|p| Reflect::get(&p, &"now".into()).ok()?.dyn_into::<Function>().ok().map(|f| (f, p)))
        };
    }
    PERFORMANCE.with(|p| match p {
        Some((f, this)) => f.call0(this).ok().and_then(|v| v.as_f64()).unwrap_or(0.0),
        None => js_sys::Date::now(),
    })
}

std::thread_local! {
    static CLIENTS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// A number of its own for each client made (its fetch and headers): only requests sent the
/// same way are merged.
fn next_id() -> u64 {
    CLIENTS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

#[derive(Clone)]
pub struct FetchClient {
    /// Requests are merged at dispatch only with those of the same fetch and headers.
    id: u64,
    fetch: Function,
    this: JsValue,
    headers: Rc<Vec<(String, String)>>,
    signal: Option<AbortSignal>,
    /// Requests of this caller start before lower ones when the origin's limit is reached.
    priority: i64,
}

impl FetchClient {
    /// The global `fetch`.
    pub fn global() -> Result<FetchClient> {
        let g: JsValue = js_sys::global().into();
        let f = Reflect::get(&g, &"fetch".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
        let f = f.ok_or_else(|| Error::new(ErrorCode::Network, "this platform has no global fetch"))?;
        Ok(FetchClient { id: next_id(), fetch: f, this: g, headers: Rc::new(Vec::new()), signal: None, priority: 0 })
    }

    /// A caller-supplied `fetch`.
    pub fn with_fetch(f: Function) -> FetchClient {
        FetchClient { id: next_id(), fetch: f, this: JsValue::UNDEFINED, headers: Rc::new(Vec::new()), signal: None, priority: 0 }
    }

    pub fn with_headers(self, headers: Vec<(String, String)>) -> FetchClient {
        FetchClient { id: next_id(), headers: Rc::new(headers), ..self }
    }

    pub fn with_signal(&self, signal: Option<AbortSignal>) -> FetchClient {
        FetchClient { signal, ..self.clone() }
    }

    pub fn with_priority(&self, priority: f64) -> FetchClient {
        FetchClient { priority: priority.clamp(-1e15, 1e15) as i64, ..self.clone() }
    }
}

fn js_error_to_core(e: JsValue, url: &str) -> Error {
    let name = Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
    let msg = Reflect::get(&e, &"message".into()).ok().and_then(|n| n.as_string()).unwrap_or_else(|| format!("{e:?}"));
    if name == "AbortError" {
        return Error::new(ErrorCode::Aborted, format!("{url}: aborted"));
    }
    // Node says why (`cause`: "other side closed", "connect ECONNREFUSED …"); browsers do not.
    let why = Reflect::get(&e, &"cause".into()).ok().and_then(|c| Reflect::get(&c, &"message".into()).ok());
    let text = match why.and_then(|w| w.as_string()) {
        Some(w) => format!("{msg}: {w}); the connection failed or closed before a complete answer"),
        None => {
            format!("{msg}); a CORS refusal, an unreachable host or a connection cut before the answer look like this")
        }
    };
    Error::new(ErrorCode::Network, format!("{url}: fetch failed ({text}"))
}

/// A global timer function (`setTimeout` / `clearTimeout`) of every platform: window, worker, Node.
fn global_fn(name: &str) -> Option<Function> {
    Reflect::get(&js_sys::global(), &name.into()).ok()?.dyn_into::<Function>().ok()
}

/// A timer whose callback is a Rust closure: cleared, then the closure freed, when dropped —
/// also when the future waiting on it is dropped (an aborted read). Not leaked: the timer's
/// never-settled promise would keep the race's answer (a body piece) alive through the
/// closure's `reject` for as long as the module lives.
struct Timer {
    id: JsValue,
    clear: Function,
    _fire: Closure<dyn FnMut()>,
}

impl Drop for Timer {
    fn drop(&mut self) {
        let _ = self.clear.call1(&JsValue::NULL, &self.id);
    }
}

/// Marks a promise rejected by [`within`]'s timer.
const STALLED: &str = "__shardfetch_stalled";

/// `p`, or an error when it takes longer than `ms` (its timer is cleared either way, so that
/// Node is not kept alive by it). Only time the event loop was free counts: a timer that fires
/// late was held up by this thread's own work (a long decode, a page's rendering), during which
/// the answer may have arrived unread, so it waits once more rather than call a stall.
async fn within(p: Promise, ms: Option<f64>) -> std::result::Result<JsValue, JsValue> {
    let Some(ms) = ms.filter(|m| m.is_finite() && *m > 0.0) else { return JsFuture::from(p).await };
    let (set, clear) = match (global_fn("setTimeout"), global_fn("clearTimeout")) {
        (Some(s), Some(c)) => (s, c),
        _ => return JsFuture::from(p).await,
    };
    // Lateness that is the loop's, not the network's; and a bound on waiting once more (a
    // thread busy for good still ends at the request's deadline, this at most multiplies ms).
    let slack = (ms / 4.0).max(20.0);
    let mut rearmed = 0;
    loop {
        let armed = now();
        let mut guard: Option<Timer> = None;
        let timer = Promise::new(&mut |_, reject| {
            let fire = Closure::once(move || {
                let _ = reject.call1(&JsValue::NULL, &JsValue::from(STALLED));
            });
            let id = set.call2(&JsValue::NULL, fire.as_ref(), &JsValue::from(ms)).unwrap_or(JsValue::UNDEFINED);
            guard = Some(Timer { id, clear: clear.clone(), _fire: fire });
        });
        let r = JsFuture::from(Promise::race(&js_sys::Array::of2(&p, &timer))).await;
        drop(guard);
        match r {
            Err(e) if stalled(&e) && rearmed < 16 && now() - armed > ms + slack => rearmed += 1,
            r => return r,
        }
    }
}

fn stalled(e: &JsValue) -> bool {
    e.as_string().as_deref() == Some(STALLED)
}

/// One request past its origin's slot: what its errors report, and the controller they abort.
struct Call<'a> {
    client: &'a FetchClient,
    req: &'a Request<'a>,
    limiter: &'a Limiter,
    /// Our own controller: a stall or an oversized body aborts this request alone; the
    /// caller's signal aborts it too.
    ctl: Option<web_sys::AbortController>,
}

impl Call<'_> {
    fn abort(&self) {
        if let Some(c) = &self.ctl {
            c.abort();
        }
    }

    /// Sets `init.signal`; the guard returned removes the forwarding listener, if any.
    fn link_signal(&self, init: &Object) -> Unlink {
        let caller = &self.client.signal;
        // Both signals in one (`AbortSignal.any`) where the platform has it: a listener per
        // request on a signal shared by a batch's many requests would pile up (and Node warns).
        let combined = match (caller, &self.ctl) {
            (Some(s), Some(c)) => any_signal(s, &c.signal()),
            _ => None,
        };
        let forward = match (caller, &self.ctl) {
            _ if combined.is_some() => None,
            (Some(s), Some(c)) => {
                let c = c.clone();
                let f = Closure::<dyn FnMut()>::new(move || c.abort());
                s.add_event_listener_with_callback("abort", f.as_ref().unchecked_ref()).ok();
                Some((s.clone(), f))
            }
            _ => None,
        };
        let unlink = Unlink(forward);
        match (&combined, &self.ctl, caller) {
            (Some(both), _, _) => Reflect::set(init, &"signal".into(), both).ok(),
            (None, Some(c), _) => Reflect::set(init, &"signal".into(), &c.signal()).ok(),
            (None, None, Some(s)) => Reflect::set(init, &"signal".into(), s).ok(),
            _ => None,
        };
        unlink
    }

    /// A rejection of the fetch or of a read: a stall (which aborts the request and tells the
    /// origin's limiter), the caller's abort, or the platform's error.
    fn failed(&self, e: JsValue) -> Error {
        let url = self.req.url;
        if stalled(&e) {
            self.abort();
            let ms = self.req.stall_ms.unwrap_or(0.0);
            self.limiter.note_stall(now(), ms);
            return Error::new(ErrorCode::Network, format!("{url}: stalled: no data for {} ms", ms as u64));
        }
        if self.client.is_aborted() {
            return Error::new(ErrorCode::Aborted, format!("{url}: aborted"));
        }
        js_error_to_core(e, url)
    }

    /// A body of `n` bytes or more, past the limit `l`: the request is aborted.
    fn beyond(&self, status: u16, n: u64, l: u64) -> Error {
        self.abort();
        let url = self.req.url;
        if status == 206 && self.req.asked == Some(l) {
            let why = format!("{url}: a partial answer runs past the {l} bytes asked for ({n} or more); cut there");
            return Error::new(ErrorCode::CorruptShard, why);
        }
        crate::core::error::too_large(
            &format!("{url}: the answer"),
            n,
            l,
            "maxDecodedBytes, or maxMetadataBytes for metadata",
        )
    }

    /// `n` body bytes could not be allocated: the request is aborted.
    fn no_room(&self, n: usize) -> Error {
        self.abort();
        Error::new(ErrorCode::TooLarge, format!("{}: the answer: cannot allocate {n} bytes", self.req.url))
    }

    /// The fetch's `Response`, within the stall time.
    async fn answer(&self, init: &Object) -> Result<web_sys::Response> {
        let (url, c) = (self.req.url, self.client);
        let p = c.fetch.call2(&c.this, &url.into(), init).map_err(|e| js_error_to_core(e, url))?;
        let p: Promise = p.dyn_into().map_err(|_| Error::new(ErrorCode::Network, "fetch did not return a promise"))?;
        let resp = within(p.clone(), self.req.stall_ms).await.map_err(|e| {
            // Given up (a stall): an answer that still comes (a `fetch` may ignore the abort
            // signal) is cancelled on arrival.
            settle(p, true);
            self.failed(e)
        })?;
        self.limiter.note_progress(now());
        resp.dyn_into()
            .map_err(|_| Error::new(ErrorCode::Network, format!("{url}: fetch did not resolve to a Response")))
    }

    /// The answer's status, headers and body (a HEAD's: empty).
    async fn response(&self, resp: web_sys::Response) -> Result<Response> {
        let h = resp.headers();
        let content_range = h.get("content-range").ok().flatten();
        let content_length = h.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok());
        let retry_after = h.get("retry-after").ok().flatten();
        // (Cross-origin, `ETag` only where the server exposes it; `Last-Modified` always.)
        let etag = h.get("etag").ok().flatten();
        let last_modified = h.get("last-modified").ok().flatten();
        let status = resp.status();
        // A partial answer carries what was asked for, no more (whatever a hostile or broken
        // server streams after it); a whole one, up to the limit.
        let max_body = match (status, self.req.asked) {
            (206, Some(a)) => Some(self.req.limit.map_or(a, |l| l.min(a))),
            _ => self.req.limit,
        };
        if let (Some(l), Some(n)) = (max_body, content_length) {
            if n > l && (200..300).contains(&status) {
                // Not read: cancelled at once (and the request aborted).
                cancel_body(&resp);
                return Err(self.beyond(status, n, l));
            }
        }
        let mut out = Response { status, content_range, content_length, retry_after, etag, last_modified, ..Default::default() };
        out.body = match (self.req.method, resp.body()) {
            (Method::Get, Some(stream)) => {
                let known = content_length.or(self.req.asked.filter(|_| status == 206));
                self.read_body(&stream, known, max_body, &out).await?
            }
            (Method::Get, None) => Vec::new(),
            // (A body a custom fetch gives a HEAD answer is not wanted.)
            (Method::Head, _) => {
                cancel_body(&resp);
                Vec::new()
            }
        };
        Ok(out)
    }

    /// The body as it arrives: each piece within the stall time, the whole within `max`. A
    /// size `known` (a length, or a partial answer's range) is reserved at once and filled
    /// through one reused buffer; an unknown one is kept as the stream's pieces and copied
    /// once at the end: the body never moves while growing (a doubling vector would leave
    /// the module's memory three times its size). `head`: the answer without its body, told
    /// with the body so far to the request's progress.
    async fn read_body(
        &self,
        stream: &web_sys::ReadableStream,
        known: Option<u64>,
        max: Option<u64>,
        head: &Response,
    ) -> Result<Vec<u8>> {
        let mut reader = BodyReader::new(stream, known.is_some());
        let mut body: Vec<u8> = Vec::new();
        let mut pieces: Vec<Uint8Array> = Vec::new();
        let mut total = 0usize;
        if let Some(n) = known {
            let n = n.min(max.unwrap_or(u64::MAX)) as usize;
            body.try_reserve_exact(n).map_err(|_| self.no_room(n))?;
        }
        while let Some(chunk) = self.next_piece(&mut reader, total).await? {
            self.limiter.note_progress(now());
            let n = chunk.length() as usize;
            if let Some(l) = max {
                if (total + n) as u64 > l {
                    // Cut here: the piece past the limit is dropped unread.
                    reader.cancel();
                    return Err(self.beyond(head.status, (total + n) as u64, l));
                }
            }
            total += n;
            if known.is_some() {
                self.append(&mut body, &chunk, n)?;
                if let Some(p) = self.req.progress.0 {
                    p.arrived(head, &body);
                }
            } else {
                pieces.push(chunk);
            }
        }
        if known.is_none() {
            self.join(&mut body, pieces, total)?;
        }
        Ok(body)
    }

    /// The body's next piece (`None`: it is over), within the stall time; `total`: the bytes
    /// read so far.
    async fn next_piece(&self, reader: &mut BodyReader, total: usize) -> Result<Option<Uint8Array>> {
        let piece = within(reader.read(), self.req.stall_ms).await.map_err(|e| {
            if stalled(&e) || self.client.is_aborted() {
                return self.failed(e);
            }
            let why = Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_default();
            let url = self.req.url;
            Error::new(
                ErrorCode::Network,
                format!("{url}: truncated body: the connection broke after {total} bytes ({why})"),
            )
        })?;
        Ok(reader.took(&piece))
    }

    /// Copies `chunk`, of `n` bytes, onto the end of `body`, growing it only past its reservation.
    fn append(&self, body: &mut Vec<u8>, chunk: &Uint8Array, n: usize) -> Result<()> {
        let at = body.len();
        body.try_reserve(n).map_err(|_| self.no_room(at + n))?;
        crate::core::error::extend_zeroed(body, n);
        chunk.copy_to(&mut body[at..]);
        Ok(())
    }

    /// Copies the `total` bytes of `pieces` onto the end of `body` in one allocation.
    fn join(&self, body: &mut Vec<u8>, pieces: Vec<Uint8Array>, total: usize) -> Result<()> {
        body.try_reserve_exact(total).map_err(|_| self.no_room(total))?;
        for p in pieces {
            let at = body.len();
            crate::core::error::extend_zeroed(body, p.length() as usize);
            p.copy_to(&mut body[at..]);
        }
        Ok(())
    }
}

impl FetchClient {
    /// One request, past the origin's slot: `fetch`, the answer and its body.
    async fn call(&self, req: &Request<'_>, limiter: &Limiter) -> Result<Response> {
        let init = self.init(req);
        let call = Call { client: self, req, limiter, ctl: web_sys::AbortController::new().ok() };
        let _unlink = call.link_signal(&init);
        let resp = call.answer(&init).await?;
        call.response(resp).await
    }

    /// Where `req` reads, for merging with its waiting neighbours (those of this client, with
    /// the same condition and limits).
    fn spot(&self, req: &Request<'_>) -> Option<Spot> {
        let (kind, value) = match &req.condition {
            Some(Condition::IfMatch(v)) => (1, v.as_str()),
            Some(Condition::IfUnmodifiedSince(v)) => (2, v.as_str()),
            Some(Condition::IfRange(v)) => (3, v.as_str()),
            None => (0, ""),
        };
        let limit = req.limit.unwrap_or(u64::MAX);
        let class = format!("{} {kind} {limit} {} {value}", self.id, req.cache == CacheMode::NoStore);
        let signal = self.signal.clone();
        let token = signal.clone().map(|s| Rc::new(s) as Rc<dyn core::any::Any>);
        let alive = signal.map(|s| Box::new(move || !s.aborted()) as Box<dyn Fn() -> bool>);
        Spot::of(req, class, alive, token)
    }

    /// `fetch`'s init but its signal: the method, and the headers (ours, then `Range`).
    fn init(&self, req: &Request<'_>) -> Object {
        let init = Object::new();
        let headers = Object::new();
        for (k, v) in self.headers.iter() {
            Reflect::set(&headers, &k.into(), &v.into()).ok();
        }
        if let Some(r) = &req.range {
            Reflect::set(&headers, &"Range".into(), &r.into()).ok();
        }
        let (name, value) = match &req.condition {
            Some(Condition::IfMatch(v)) => ("If-Match", v),
            Some(Condition::IfUnmodifiedSince(v)) => ("If-Unmodified-Since", v),
            Some(Condition::IfRange(v)) => ("If-Range", v),
            None => ("", &String::new()),
        };
        if !name.is_empty() {
            Reflect::set(&headers, &name.into(), &value.into()).ok();
        }
        // A range or HEAD never from the page's HTTP cache (an older version's range must not
        // answer, and Chrome serialises concurrent range reads of one URL through its cache
        // otherwise); a whole object from it only once the server confirmed it (304).
        let cache = match req.cache {
            CacheMode::NoStore => "no-store",
            CacheMode::Revalidate => "no-cache",
        };
        Reflect::set(&init, &"cache".into(), &cache.into()).ok();
        let method = match req.method {
            Method::Get => "GET",
            Method::Head => "HEAD",
        };
        Reflect::set(&init, &"method".into(), &method.into()).ok();
        Reflect::set(&init, &"headers".into(), &headers).ok();
        init
    }
}

impl HttpClient for FetchClient {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        let limit = limiter(req.url);
        // With a stall time, waiting for a slot gives up at the request's deadline if the
        // origin is found stuck.
        let deadline = req.deadline.filter(|_| req.stall_ms.is_some());
        let go = |group: Option<&Group>| {
            // A merged request is no single caller's: it ends when all of them gave up.
            let (req, client, links) = match group {
                Some(g) => {
                    let (signal, links) = all_aborted(g).unzip();
                    // (Its body is the group's, not this request's: no progress of it.)
                    let merged = Request { range: Some(g.range()), asked: Some(g.len), progress: Early(None), ..req.clone() };
                    (merged, self.with_signal(signal), links)
                }
                None => (req.clone(), self.clone(), None),
            };
            let limit = &limit;
            async move {
                let _links = links;
                if client.is_aborted() {
                    return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
                }
                client.call(&req, limit).await
            }
        };
        let Some(got) = dispatch(&limit, self.priority, deadline, self.spot(&req), go).await else {
            let why =
                "no request slot of its origin came free within the retry budget: every request there is stalling";
            return Err(Error::new(ErrorCode::Network, format!("{}: stalled: {why}", req.url)));
        };
        // (A part of a merged answer comes whether or not this caller still wants it.)
        if self.is_aborted() {
            return Err(Error::new(ErrorCode::Aborted, format!("{}: aborted", req.url)));
        }
        got
    }

    async fn sleep(&self, ms: f64) {
        sleep_until(ms, self.signal.as_ref()).await
    }

    fn now(&self) -> Option<f64> {
        Some(now())
    }

    fn random(&self) -> f64 {
        js_sys::Math::random()
    }

    fn is_aborted(&self) -> bool {
        self.signal.as_ref().is_some_and(AbortSignal::aborted)
    }
}
