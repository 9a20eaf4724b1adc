//! Requests merged at dispatch (issue 46 item 3): ranged reads of one object waiting behind the
//! origin's limit leave as one request when a slot frees, by the `mergeGap`/`mergeMax` rules,
//! and each waiter gets what it would have got alone. The client here is the binding's
//! `FetchClient::send` over the in-memory server: `dispatch` through a shared `Limiter`, a merged
//! request no single caller's abort ends. The server's log counts the requests.
#![cfg(not(target_arch = "wasm32"))]
use futures_executor::block_on;
use futures_util::future::join_all;
use shardfetch::core::transport::dispatch::{Group, Spot};
use shardfetch::core::transport::limit::{dispatch, Limiter};
use shardfetch::core::transport::memory::{ObjectServer, Serve};
use shardfetch::core::transport::{ByteRange, Conditional, Config, HttpClient, Request, Response, Retry, Transport};
use shardfetch::core::{Error, ErrorCode, Result};
use std::cell::Cell;
use std::rc::Rc;

const A: &str = "mem://h/a";
const B: &str = "mem://h/b";
const SIZE: usize = 64 << 10;

fn bytes_of(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 8) as u8)).collect()
}

/// One caller of the shared server and limit: its own abort and priority.
struct Caller<'a> {
    server: &'a ObjectServer,
    limit: &'a Limiter,
    aborted: Rc<Cell<bool>>,
    priority: i64,
    /// Off: every request alone (what reads did before merging).
    merging: bool,
}

impl<'a> Caller<'a> {
    fn new(server: &'a ObjectServer, limit: &'a Limiter) -> Self {
        Caller { server, limit, aborted: Rc::new(Cell::new(false)), priority: 0, merging: true }
    }
    fn aborted_error(url: &str) -> Error {
        Error::new(ErrorCode::Aborted, format!("{url}: aborted"))
    }
}

impl HttpClient for Caller<'_> {
    async fn send(&self, req: Request<'_>) -> Result<Response> {
        let flag = self.aborted.clone();
        let class = format!("{:?}|{:?}|{:?}", req.condition, req.limit, req.cache);
        let spot = Spot::of(&req, class, Some(Box::new(move || !flag.get())), None).filter(|_| self.merging);
        let go = |group: Option<&Group>| {
            let merged = group.map(|g| Request { range: Some(g.range()), asked: Some(g.len), ..req.clone() });
            let req = &req;
            async move {
                match merged {
                    Some(m) => self.server.send(m).await,
                    None if self.is_aborted() => Err(Self::aborted_error(req.url)),
                    None => self.server.send(req.clone()).await,
                }
            }
        };
        let got = dispatch(self.limit, self.priority, None, spot, go).await.expect("no deadline");
        if self.is_aborted() {
            return Err(Self::aborted_error(req.url));
        }
        got
    }
    fn is_aborted(&self) -> bool {
        self.aborted.get()
    }
    async fn sleep(&self, ms: f64) {
        self.server.sleep(ms).await
    }
    fn now(&self) -> Option<f64> {
        self.server.now()
    }
}

fn server() -> ObjectServer {
    let s = ObjectServer::new();
    s.put(A, bytes_of(SIZE, 1));
    s.put(B, bytes_of(SIZE, 2));
    s.yields.set(2);
    s
}

fn config(gap: u64, max: u64) -> Config {
    Config { merge_gap: gap, merge_max: max, ..Config::default() }
}

/// Reads `spans` of A, each by its own caller, all waiting behind one read of B that holds the
/// only slot; the outcomes in order.
fn sweep(
    s: &ObjectServer,
    t: &Transport,
    limit: &Limiter,
    callers: &[Caller<'_>],
    spans: &[(u64, u64)],
) -> Vec<Result<Vec<u8>>> {
    let blocker = Caller::new(s, limit);
    let first = async { t.read(&blocker, B, ByteRange::Range { offset: 0, len: 100 }).await };
    let reads = spans.iter().zip(callers).map(|(&(offset, len), c)| async move {
        t.read(c, A, ByteRange::Range { offset, len }).await.map(|r| r.map(|r| r.bytes).unwrap_or_default())
    });
    let (b, got) = block_on(futures_util::future::join(first, join_all(reads)));
    // (A lying server fails it.)
    if let Ok(b) = b {
        assert_eq!(b.unwrap().bytes, bytes_of(SIZE, 2)[..100]);
    }
    got
}

fn expect_values(got: &[Result<Vec<u8>>], spans: &[(u64, u64)], object: &[u8]) -> usize {
    let mut checked = 0;
    for (g, &(o, n)) in got.iter().zip(spans) {
        let g = g.as_ref().unwrap_or_else(|e| panic!("span {o}+{n}: {e:?}"));
        assert_eq!(g[..], object[o as usize..(o + n) as usize], "span {o}+{n}");
        checked += 1;
    }
    checked
}

/// The requests for A, as (first byte, last byte).
fn a_ranges(s: &ObjectServer) -> Vec<(u64, u64)> {
    s.log().iter().filter(|l| l.url == A).map(|l| l.span().expect("a range")).collect()
}

fn tiles(n: u64, len: u64, stride: u64) -> Vec<(u64, u64)> {
    (0..n).map(|i| (i * stride, len)).collect()
}

#[test]
fn queued_neighbours_leave_as_one_request_each_served_its_slice() {
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    // Out of order, with gaps smaller than mergeGap (the bytes between them are read too).
    let spans = [(3000, 500), (0, 1000), (1000, 1000), (5000, 1000), (2000, 700)];
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_eq!(expect_values(&got, &spans, &bytes_of(SIZE, 1)), 5);
    assert_eq!(a_ranges(&s), [(0, 5999)], "five queued neighbours, one request");
    assert_eq!(s.requests(), 2);
    // Counted once, as the request it was.
    assert_eq!(t.stats().requests, 2);
    assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
    // The bytes between the spans were kept, as a merged read's are: a read there is free.
    let c = Caller::new(&s, &limit);
    let gap = block_on(t.read(&c, A, ByteRange::Range { offset: 3600, len: 1300 })).unwrap().unwrap();
    assert_eq!(gap.bytes, bytes_of(SIZE, 1)[3600..4900]);
    assert_eq!(s.requests(), 2, "no request for bytes held");
}

#[test]
fn far_apart_they_leave_one_by_one() {
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(100, 1 << 20));
    let spans = tiles(6, 1000, 5000);
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_eq!(expect_values(&got, &spans, &bytes_of(SIZE, 1)), 6);
    let asked: Vec<(u64, u64)> = spans.iter().map(|&(o, n)| (o, o + n - 1)).collect();
    assert_eq!(a_ranges(&s), asked, "nothing merged: each as it was asked, in arrival order");
}

#[test]
fn merge_max_splits_a_long_stretch() {
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 3000));
    let spans = tiles(8, 1000, 1000);
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_eq!(expect_values(&got, &spans, &bytes_of(SIZE, 1)), 8);
    assert_eq!(a_ranges(&s), [(0, 2999), (3000, 5999), (6000, 7999)]);
}

#[test]
fn a_request_that_merges_nothing_leaves_as_before_and_priorities_hold() {
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    let mut low = Caller::new(&s, &limit);
    low.priority = 1;
    let mut high = Caller::new(&s, &limit);
    high.priority = 9;
    let mut mid = Caller::new(&s, &limit);
    mid.priority = 5;
    let blocker = Caller::new(&s, &limit);
    // Queued in this order: low (A at 0), mid (B at 9000: alone), high (A at 20: takes low along).
    let reads = futures_util::future::join4(
        t.read(&blocker, B, ByteRange::Range { offset: 0, len: 10 }),
        t.read(&low, A, ByteRange::Range { offset: 0, len: 10 }),
        t.read(&mid, B, ByteRange::Range { offset: 9000, len: 10 }),
        t.read(&high, A, ByteRange::Range { offset: 20, len: 10 }),
    );
    let (b, l, m, h) = block_on(reads);
    let (a_bytes, b_bytes) = (bytes_of(SIZE, 1), bytes_of(SIZE, 2));
    assert_eq!(b.unwrap().unwrap().bytes, b_bytes[..10]);
    assert_eq!(l.unwrap().unwrap().bytes, a_bytes[..10]);
    assert_eq!(m.unwrap().unwrap().bytes, b_bytes[9000..9010]);
    assert_eq!(h.unwrap().unwrap().bytes, a_bytes[20..30]);
    let log: Vec<(String, Option<String>)> = s.log().into_iter().map(|l| (l.url, l.range)).collect();
    let want = [(B, "bytes=0-9"), (A, "bytes=0-29"), (B, "bytes=9000-9009")];
    assert_eq!(
        log,
        want.map(|(u, r)| (u.to_string(), Some(r.to_string()))),
        "the highest first, taking its neighbour along"
    );
}

/// The server aborts `victim`'s caller while the merged request is under way.
fn abort_during(victim: usize) {
    let aborted: Rc<Cell<bool>> = Rc::new(Cell::new(false));
    let flag = aborted.clone();
    let s = ObjectServer::new().with_hook(move |s, req| {
        if req.url == A && s.requests() > 1 {
            flag.set(true);
        }
        None
    });
    s.put(A, bytes_of(SIZE, 1));
    s.put(B, bytes_of(SIZE, 2));
    s.yields.set(2);
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    let spans = tiles(5, 1000, 1000);
    let mut callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    callers[victim].aborted = aborted;
    let got = sweep(&s, &t, &limit, &callers, &spans);
    for (i, g) in got.iter().enumerate() {
        if i == victim {
            assert_eq!(g.as_ref().unwrap_err().code, ErrorCode::Aborted, "the aborted waiter");
        } else {
            let (o, n) = spans[i];
            assert_eq!(g.as_ref().unwrap()[..], bytes_of(SIZE, 1)[o as usize..(o + n) as usize]);
        }
    }
    assert_eq!(a_ranges(&s), [(0, 4999)], "the merged request went on for the others (victim {victim})");
}

#[test]
fn aborting_one_waiter_does_not_abort_the_merged_request() {
    // The one whose request it is (the first queued), one taken along, the last.
    abort_during(0);
    abort_during(2);
    abort_during(4);
}

#[test]
fn a_waiter_aborted_before_its_turn_takes_none_along_and_sends_nothing() {
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    let spans = tiles(4, 1000, 1000);
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    callers[0].aborted.set(true);
    callers[3].aborted.set(true);
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_eq!(got[0].as_ref().unwrap_err().code, ErrorCode::Aborted);
    assert_eq!(got[3].as_ref().unwrap_err().code, ErrorCode::Aborted);
    assert_eq!(expect_values(&got[1..3], &spans[1..3], &bytes_of(SIZE, 1)), 2);
    assert_eq!(a_ranges(&s), [(1000, 2999)], "only the live ones, in one request");
}

#[test]
fn an_error_answer_reaches_every_waiter_and_each_retries() {
    // A permanent error: every waiter gets it (no retry).
    let s = server().serving(Serve::Always500);
    let limit = Limiter::new(1);
    let once = Retry { attempts: 1, ..Retry::default() };
    let t = Transport::new(Config { retry: once, ..config(4096, 1 << 20) });
    let spans = tiles(4, 1000, 1000);
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let blocker = Caller::new(&s, &limit);
    let reads = spans.iter().zip(&callers).map(|(&(offset, len), c)| t.read(c, A, ByteRange::Range { offset, len }));
    let (b, got) = block_on(futures_util::future::join(
        t.read(&blocker, B, ByteRange::Range { offset: 0, len: 1 }),
        join_all(reads),
    ));
    let e = b.err().expect("B's read fails");
    assert_eq!((e.code, e.status), (ErrorCode::HttpError, Some(500)), "{e:?}");
    for g in &got {
        let e = g.as_ref().err().expect("an error");
        assert_eq!((e.code, e.status), (ErrorCode::HttpError, Some(500)), "{e:?}");
    }
    assert_eq!(s.requests(), 2, "one for B, one for the four spans of A");

    // A transient one (503, then answers): each waiter retries, and all are served.
    let failed = Cell::new(false);
    let s = ObjectServer::new().with_hook(move |_, req| {
        let merged = req.url == A && req.range.as_deref() == Some("bytes=0-3999");
        if merged && !failed.replace(true) {
            return Some(Ok(Response { status: 503, ..Default::default() }));
        }
        None
    });
    s.put(A, bytes_of(SIZE, 1));
    s.put(B, bytes_of(SIZE, 2));
    s.yields.set(2);
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_eq!(expect_values(&got, &spans, &bytes_of(SIZE, 1)), 4);
    assert_eq!(t.stats().retries, 4, "each waiter retried its own request");
    assert_eq!(a_ranges(&s)[0], (0, 3999));

    // A network error: every waiter gets it.
    let s = ObjectServer::new().with_hook(|_, req| {
        (req.url == A).then(|| Err(Error::new(ErrorCode::Network, format!("{}: connection reset", req.url))))
    });
    s.put(A, bytes_of(SIZE, 1));
    s.put(B, bytes_of(SIZE, 2));
    s.yields.set(2);
    let limit = Limiter::new(1);
    let t = Transport::new(Config { retry: once, ..config(4096, 1 << 20) });
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert!(got.iter().all(|g| g.as_ref().is_err_and(|e| e.code == ErrorCode::Network)), "{got:?}");
    assert_eq!(a_ranges(&s), [(0, 3999)]);
}

#[test]
fn a_changed_version_reaches_every_waiter() {
    // Conditional reads: the merged request carries the version known, refused (412) once the
    // object changed: every waiter is told `Changed`.
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(Config { conditional: Conditional::IfMatch, ..config(4096, 1 << 20) });
    let first = Caller::new(&s, &limit);
    block_on(t.read(&first, A, ByteRange::Range { offset: 60_000, len: 10 })).unwrap();
    s.put(A, bytes_of(SIZE, 7));
    let spans = tiles(4, 1000, 1000);
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    for g in &got {
        assert_eq!(g.as_ref().err().map(|e| e.code), Some(ErrorCode::Changed), "{g:?}");
    }
    assert_eq!(a_ranges(&s), [(60_000, 60_009), (0, 3999)]);

    // Plain reads: the answer's validators are checked for each waiter's part: the change is
    // seen (the object's epoch moves on), and no waiter is given the old version's bytes.
    let s = server();
    let limit = Limiter::new(1);
    let t = Transport::new(config(4096, 1 << 20));
    block_on(t.read(&Caller::new(&s, &limit), A, ByteRange::Range { offset: 60_000, len: 10 })).unwrap();
    let epoch = t.stamp(A, false);
    s.put(A, bytes_of(SIZE, 7));
    let callers: Vec<Caller> = spans.iter().map(|_| Caller::new(&s, &limit)).collect();
    let got = sweep(&s, &t, &limit, &callers, &spans);
    assert_ne!(t.stamp(A, false), epoch, "the change was seen");
    assert_eq!(t.stats().changes, 1);
    assert!(got.iter().any(|g| g.as_ref().is_err_and(|e| e.code == ErrorCode::Changed)));
    let new = bytes_of(SIZE, 7);
    for (g, &(o, n)) in got.iter().zip(&spans) {
        if let Ok(g) = g {
            assert_eq!(g[..], new[o as usize..(o + n) as usize], "the new version's bytes");
        }
    }
}

/// Outcomes as comparable values: bytes, or an error's code and status.
fn outcomes(got: &[Result<Vec<u8>>]) -> Vec<std::result::Result<Vec<u8>, (ErrorCode, Option<u16>)>> {
    got.iter().map(|g| g.as_ref().map(|b| b.clone()).map_err(|e| (e.code, e.status))).collect()
}

/// The same reads with and without merging give the same outcomes.
fn as_alone(serve: Serve, spans: &[(u64, u64)], object_len: usize) -> (usize, usize) {
    let run = |merging: bool| {
        let s = ObjectServer::new().serving(serve);
        s.put(A, bytes_of(object_len, 1));
        s.put(B, bytes_of(SIZE, 2));
        s.yields.set(2);
        let limit = Limiter::new(1);
        let t = Transport::new(config(4096, 1 << 20));
        let callers: Vec<Caller> = spans
            .iter()
            .map(|_| {
                let mut c = Caller::new(&s, &limit);
                c.merging = merging;
                c
            })
            .collect();
        let got = sweep(&s, &t, &limit, &callers, spans);
        (outcomes(&got), s.requests())
    };
    let (merged, n_merged) = run(true);
    let (alone, n_alone) = run(false);
    assert_eq!(merged, alone, "{serve:?}: merged as alone");
    (n_merged, n_alone)
}

#[test]
fn whole_answers_short_answers_and_hidden_ranges_as_alone() {
    // A server that ignores Range: the whole object, once (later reads slice it).
    let spans = tiles(4, 1000, 1000);
    let (merged, alone) = as_alone(Serve::IgnoreRange, &spans, SIZE);
    assert_eq!((merged, alone), (2, 5));
    // An object shorter than the spans: one inside, one across its end (asked once more,
    // alone, then an error, as alone), one past it (416).
    let spans = [(8000, 1000), (9500, 1000), (10_500, 100)];
    assert_eq!(as_alone(Serve::Honest, &spans, 10_000), (3, 5));
    // The same where a browser hides Content-Range (cross-origin, not exposed).
    as_alone(Serve::NoContentRange, &spans, 10_000);
    assert_eq!(as_alone(Serve::NoContentRange, &tiles(4, 1000, 1000), SIZE).0, 2);
    // A server that lies about the bytes it sends: asked again, then an error, for each.
    as_alone(Serve::LyingRange, &tiles(3, 1000, 1000), SIZE);
}
